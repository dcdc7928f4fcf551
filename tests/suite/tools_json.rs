//! JSON-document tools from the command line: what is checked before anything is sent (the
//! round trips with each protocol are in `tests/http/tools.rs`, the property tests over
//! generated documents in `src/tools/file.rs`).

use crate::support::*;

#[test]
fn bad_data_and_tools_files_fail_before_anything_is_sent() {
    let env = Env::echo();
    let good = env.project_file("a.json", "{}");
    let good = good.to_str().unwrap();
    let bad = env.project_file("bad.json", "{not json");
    let out = env.run(&["--data", bad.to_str().unwrap(), "hi"]).code(2);
    assert!(
        out.stderr.contains("bad.json is not valid JSON"),
        "{}",
        out.stderr
    );
    let out = env
        .run(&["--data", good, "--data", good, "--data", good, "hi"])
        .code(2);
    assert!(
        out.stderr.contains("two documents at most"),
        "{}",
        out.stderr
    );
    let tf = env.project_file("t.json", r#"{"tools": [{"name": "x y", "pointer": "/a"}]}"#);
    let out = env
        .run(&["--data", good, "--tools-file", tf.to_str().unwrap(), "hi"])
        .code(2);
    assert!(out.stderr.contains("invalid tools file"), "{}", out.stderr);
    assert!(out.stderr.contains("tool name \"x y\""), "{}", out.stderr);
    let out = env
        .run(&["--tools-file", tf.to_str().unwrap(), "hi"])
        .code(2);
    assert!(
        out.stderr.contains("needs a document to read"),
        "{}",
        out.stderr
    );
    let out = env.run(&["--tools", "hi"]).code(2);
    assert!(out.stderr.contains("there is none"), "{}", out.stderr);
    let out = env
        .run(&["--max-tool-rounds", "0", "--data", good, "hi"])
        .code(2);
    assert!(out.stderr.contains("--max-tool-rounds"), "{}", out.stderr);
    // None of it made a chat.
    assert!(env.chat_ids().is_empty());
}

#[test]
fn a_tools_file_placeholder_named_like_a_reserved_argument_fails_when_loaded() {
    let env = Env::echo();
    let good = env.project_file("a.json", r#"{"sql": {"primary": 1}}"#);
    let tf = env.project_file(
        "t.json",
        r#"{"tools": [{"name": "get_doc", "pointer": "/sql/{document}"}]}"#,
    );
    let out = env
        .run(&[
            "--data",
            good.to_str().unwrap(),
            "--tools-file",
            tf.to_str().unwrap(),
            "hi",
        ])
        .code(2);
    assert!(
        out.stderr.contains(
            "get_doc: the placeholder {document} is the name of ai's own argument `document` \
             (which --data document to read); rename it, e.g. {document_id}"
        ),
        "{}",
        out.stderr
    );
    assert!(env.chat_ids().is_empty());
}

#[test]
fn a_document_too_large_or_too_deep_is_refused_with_what_is_wrong() {
    let env = Env::echo();
    // Over the limit: refused from its size alone, before it is read (this one is sparse).
    let big = env.project_file("big.json", "");
    std::fs::File::options()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(47 << 20)
        .unwrap();
    let out = env.run(&["--data", big.to_str().unwrap(), "hi"]).code(2);
    assert!(
        out.stderr.contains(
            "big.json is 47.0 MiB; ai reads JSON documents of up to 16 MiB (a document is held in memory"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("hint: give the model the part it needs, e.g.: jq")
    );
    // Valid JSON nested deeper than the parser follows: said so, not "not valid JSON".
    let deep = env.project_file(
        "deep.json",
        format!("{}{}", "[".repeat(129), "]".repeat(129)),
    );
    let out = env.run(&["--data", deep.to_str().unwrap(), "hi"]).code(2);
    assert!(
        out.stderr.contains(
            "deep.json is nested too deeply: ai reads JSON documents nested up to 127 levels deep \
             (the next level opens at line 1 column 128)"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("not valid JSON"), "{}", out.stderr);
    // 127 levels are read (the call then fails only because echo runs no tools).
    let ok = env.project_file("ok.json", format!("{}{}", "[".repeat(127), "]".repeat(127)));
    let out = env.run(&["--data", ok.to_str().unwrap(), "hi"]).code(2);
    assert!(
        out.stderr.contains("not an HTTP provider"),
        "{}",
        out.stderr
    );
}

#[test]
fn config_tools_keys_are_checked() {
    let env = Env::echo();
    env.write_config(r#"{"default_alias":"echo","tools":{"max_rounds":"many"}}"#);
    let out = env.run(&["hi"]).code(3);
    assert!(out.stderr.contains("tools"), "{}", out.stderr);
    env.write_config(r#"{"default_alias":"echo","kb":{"mode":"sometimes"}}"#);
    let out = env.run(&["hi"]).code(3);
    assert!(out.stderr.contains("kb"), "{}", out.stderr);
    // kb.mode "tools" with a CLI backend and no knowledge base: a plain turn.
    env.write_config(r#"{"default_alias":"echo","kb":{"mode":"tools"},"tools":{"max_rounds":3}}"#);
    env.run(&["hi"]).success();
}

#[test]
fn a_document_that_is_not_utf8_or_not_json_says_where() {
    let env = Env::echo();
    for (name, bytes, says) in [
        (
            "latin1.json",
            &b"{\"caf\xe9\": 1}"[..],
            "latin1.json is not valid JSON: invalid unicode code point at line 1 column 6",
        ),
        (
            "surrogate.json",
            b"[\"\\ud800\"]",
            "surrogate.json is not valid JSON: unexpected end of hex escape at line 1 column 9",
        ),
        (
            "trailing.json",
            b"{\"a\": 1} {\"b\": 2}",
            "trailing.json is not valid JSON: trailing characters at line 1 column 10",
        ),
    ] {
        let f = env.path(name);
        std::fs::write(&f, bytes).unwrap();
        let out = env.run(&["--data", f.to_str().unwrap(), "hi"]).code(2);
        assert!(out.stderr.contains(says), "{}", out.stderr);
        assert!(
            out.stderr
                .contains("hint: --data and tools files must hold one JSON document"),
            "{}",
            out.stderr
        );
    }
    assert!(env.chat_ids().is_empty());
}
