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
