//! Local models under attack: model folders a stranger wrote (numbers in config.json that would
//! allocate the machine away, NaN weights, safetensors files that lie about their tensors,
//! oversized or pathological files, a symlinked folder) and Hub servers that lie (HTML for
//! weights, redirect loops, sizes that lie, endless and dripping bodies), a full disk, two pulls
//! of one model at once and Ctrl+C in a pull. Each must end in `error:` + `hint:` with the
//! documented exit code: never a panic, never a half-installed model, never a NaN in an index.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::json;

use super::local_models::{WORDS, bases, notes, repo_files, s, safetensors, static_model};
use crate::support::*;

// ---- model folders ------------------------------------------------------------------------

/// A tiny BERT (`hidden` 4, 2 heads, 1 layer, 16 positions) over the test words, with
/// deterministic small weights; `edit` changes config.json before it is written.
fn bert_model(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    std::fs::create_dir_all(dir).unwrap();
    let words: Vec<&str> = WORDS.iter().map(|(w, _)| *w).collect();
    std::fs::write(
        dir.join("tokenizer.json"),
        super::local_models::tokenizer_json(&words),
    )
    .unwrap();
    let (h, inter, pos, vocab) = (4usize, 8usize, 16usize, WORDS.len() + 1);
    let mut config = json!({
        "model_type": "bert", "hidden_size": h, "num_attention_heads": 2,
        "num_hidden_layers": 1, "intermediate_size": inter,
        "max_position_embeddings": pos, "type_vocab_size": 2, "hidden_act": "gelu",
    });
    edit(&mut config);
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let mut seed = 1u32;
    let mut t = |name: &str, shape: Vec<usize>| {
        let n: usize = shape.iter().product();
        let bytes: Vec<u8> = (0..n)
            .flat_map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let v = ((seed >> 16) % 200) as f32 / 1000.0 - 0.1;
                let v = if name.ends_with("LayerNorm.weight") {
                    1.0
                } else {
                    v
                };
                v.to_le_bytes()
            })
            .collect();
        (name.to_owned(), shape, bytes)
    };
    let mut tensors = vec![
        t("embeddings.word_embeddings.weight", vec![vocab, h]),
        t("embeddings.position_embeddings.weight", vec![pos, h]),
        t("embeddings.token_type_embeddings.weight", vec![2, h]),
        t("embeddings.LayerNorm.weight", vec![h]),
        t("embeddings.LayerNorm.bias", vec![h]),
    ];
    let p = "encoder.layer.0";
    for (name, out, inp) in [
        ("attention.self.query", h, h),
        ("attention.self.key", h, h),
        ("attention.self.value", h, h),
        ("attention.output.dense", h, h),
        ("intermediate.dense", inter, h),
        ("output.dense", h, inter),
    ] {
        tensors.push(t(&format!("{p}.{name}.weight"), vec![out, inp]));
        tensors.push(t(&format!("{p}.{name}.bias"), vec![out]));
    }
    for name in ["attention.output.LayerNorm", "output.LayerNorm"] {
        tensors.push(t(&format!("{p}.{name}.weight"), vec![h]));
        tensors.push(t(&format!("{p}.{name}.bias"), vec![h]));
    }
    let refs: Vec<(&str, &str, Vec<usize>, Vec<u8>)> = tensors
        .iter()
        .map(|(n, sh, b)| (n.as_str(), "F32", sh.clone(), b.clone()))
        .collect();
    std::fs::write(dir.join("model.safetensors"), safetensors(&refs)).unwrap();
}

/// `kb add` with the model in `model`: its output (the base must not exist after a failure).
fn add_with(env: &Env, model: &Path) -> Out {
    let dir = notes(env);
    let spec = format!("local:{}", s(model));
    env.run(&["kb", "add", "notes", s(&dir), "--embed", &spec])
}

/// A refused model: exit 2, a hint, the wanted words, no knowledge base, no panic.
#[track_caller]
fn refused(env: &Env, out: Out, code: i32, words: &str) {
    let out = out.code(code);
    assert!(out.stderr.contains(words), "{out:#?}");
    assert!(out.stderr.contains("hint:"), "{out:#?}");
    assert!(!out.stderr.contains("panicked"), "{out:#?}");
    assert_eq!(bases(env), 0, "{out:#?}");
}

#[test]
fn the_tiny_bert_itself_indexes() {
    // The base the cases below break: it must work, or they prove nothing.
    let env = Env::echo();
    let model = env.root.join("model");
    bert_model(&model, |_| {});
    add_with(&env, &model).success();
    assert_eq!(bases(&env), 1);
}

#[test]
fn a_huge_layer_count_is_a_missing_tensor_not_an_allocation() {
    let env = Env::echo();
    let model = env.root.join("model");
    bert_model(&model, |c| c["num_hidden_layers"] = json!(1u64 << 50));
    refused(&env, add_with(&env, &model), 2, "encoder.layer.1");
}

#[test]
fn huge_sizes_in_config_are_checked_against_the_tensors() {
    for (key, value) in [
        ("hidden_size", 1u64 << 40),
        ("intermediate_size", 1u64 << 40),
        ("max_position_embeddings", 1u64 << 40),
        ("type_vocab_size", 1u64 << 40),
    ] {
        let env = Env::echo();
        let model = env.root.join("model");
        bert_model(&model, |c| c[key] = json!(value));
        refused(&env, add_with(&env, &model), 2, "but config.json says");
    }
}

#[test]
fn a_model_with_room_for_one_token_is_refused() {
    let env = Env::echo();
    let model = env.root.join("model");
    bert_model(&model, |c| c["max_position_embeddings"] = json!(1));
    // The position table matches config.json: one row.
    let st = rewrite(&model.join("model.safetensors"), |name, shape, data| {
        if name == "embeddings.position_embeddings.weight" {
            *shape = vec![1, 4];
            data.truncate(16);
        }
    });
    std::fs::write(model.join("model.safetensors"), st).unwrap();
    refused(&env, add_with(&env, &model), 2, "max_position_embeddings 1");
}

#[test]
fn nan_or_infinite_weights_are_refused_not_indexed() {
    // A static model whose matrix holds NaN, and one with an infinite token weight.
    for (label, bad) in [("nan", f32::NAN), ("inf", f32::INFINITY)] {
        let env = Env::echo();
        let model = env.root.join("model");
        static_model(&model, "F32", 8);
        let st = rewrite(&model.join("model.safetensors"), |_, _, data| {
            data[4 * 9..4 * 10].copy_from_slice(&bad.to_le_bytes());
        });
        std::fs::write(model.join("model.safetensors"), st).unwrap();
        let out = add_with(&env, &model);
        assert!(!out.stdout.contains("NaN"), "{label}: {out:#?}");
        refused(&env, out, 2, "NaN or infinite");
    }
    // A transformer with an infinite weight in a layer.
    let env = Env::echo();
    let model = env.root.join("model");
    bert_model(&model, |_| {});
    let st = rewrite(&model.join("model.safetensors"), |name, _, data| {
        if name == "encoder.layer.0.output.dense.weight" {
            data[..4].copy_from_slice(&f32::INFINITY.to_le_bytes());
        }
    });
    std::fs::write(model.join("model.safetensors"), st).unwrap();
    refused(&env, add_with(&env, &model), 2, "NaN or infinite");
}

#[test]
fn a_negative_layer_norm_epsilon_is_refused() {
    let env = Env::echo();
    let model = env.root.join("model");
    bert_model(&model, |c| c["layer_norm_eps"] = json!(-1.0));
    refused(&env, add_with(&env, &model), 2, "layer_norm_eps");
}

/// The tensors of a safetensors file, each passed to `edit` (name, shape, bytes), written
/// back in order.
fn rewrite(path: &Path, mut edit: impl FnMut(&str, &mut Vec<usize>, &mut Vec<u8>)) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let data = &bytes[8 + n..];
    let mut items: Vec<(String, String, Vec<usize>, Vec<u8>)> = header
        .iter()
        .filter(|(k, _)| *k != "__metadata__")
        .map(|(k, v)| {
            let off: Vec<usize> = serde_json::from_value(v["data_offsets"].clone()).unwrap();
            let shape: Vec<usize> = serde_json::from_value(v["shape"].clone()).unwrap();
            (
                k.clone(),
                v["dtype"].as_str().unwrap().to_owned(),
                shape,
                data[off[0]..off[1]].to_vec(),
            )
        })
        .collect();
    items.sort_by_key(|i| i.0.clone());
    for (name, _, shape, data) in &mut items {
        edit(name, shape, data);
    }
    let refs: Vec<(&str, &str, Vec<usize>, Vec<u8>)> = items
        .iter()
        .map(|(n, d, sh, b)| (n.as_str(), d.as_str(), sh.clone(), b.clone()))
        .collect();
    safetensors(&refs)
}

/// A safetensors file with a hand-written header and `data` after it.
fn raw_safetensors(header: serde_json::Value, data: &[u8]) -> Vec<u8> {
    let h = header.to_string().into_bytes();
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend(h);
    out.extend(data);
    out
}

#[test]
fn safetensors_files_that_lie_about_their_tensors_are_refused() {
    let rows = WORDS.len() + 1;
    let cases = [
        // Truncated: the header promises more bytes than follow.
        (
            "truncated",
            raw_safetensors(
                json!({"embeddings": {"dtype": "F32", "shape": [rows, 8], "data_offsets": [0, rows * 32]}}),
                &vec![0u8; rows * 16],
            ),
        ),
        // Two tensors over the same bytes.
        (
            "overlapping",
            raw_safetensors(
                json!({"embeddings": {"dtype": "F32", "shape": [rows, 8], "data_offsets": [0, rows * 32]},
                       "weights": {"dtype": "F32", "shape": [rows], "data_offsets": [0, rows * 4]}}),
                &vec![0u8; rows * 32],
            ),
        ),
        // A shape whose element count overflows.
        (
            "overflowing shape",
            raw_safetensors(
                json!({"embeddings": {"dtype": "F32", "shape": [1u64 << 40, 1u64 << 40], "data_offsets": [0, 64]}}),
                &[0u8; 64],
            ),
        ),
        // A header length past the end of the file.
        ("header past the end", {
            let mut b = (1u64 << 60).to_le_bytes().to_vec();
            b.extend(b"{}");
            b
        }),
        // A type ai cannot read, and a matrix that is not one.
        (
            "bool matrix",
            raw_safetensors(
                json!({"embeddings": {"dtype": "BOOL", "shape": [rows, 8], "data_offsets": [0, rows * 8]}}),
                &vec![0u8; rows * 8],
            ),
        ),
        (
            "one-dimensional matrix",
            raw_safetensors(
                json!({"embeddings": {"dtype": "F32", "shape": [rows * 8], "data_offsets": [0, rows * 32]}}),
                &vec![0u8; rows * 32],
            ),
        ),
    ];
    for (label, bytes) in cases {
        let env = Env::echo();
        let model = env.root.join("model");
        static_model(&model, "F32", 8);
        std::fs::write(model.join("model.safetensors"), bytes).unwrap();
        let out = add_with(&env, &model).code(2);
        assert!(
            out.stderr
                .contains("model.safetensors is not a usable safetensors file"),
            "{label}: {out:#?}"
        );
        assert!(out.stderr.contains("hint:"), "{label}: {out:#?}");
        assert_eq!(bases(&env), 0, "{label}");
    }
}

#[test]
fn oversized_files_are_refused_before_they_are_read() {
    // Sparse files: no disk is used, but reading them whole would take memory the size they say.
    let env = Env::echo();
    let model = env.root.join("model");
    static_model(&model, "F32", 8);
    let f = std::fs::File::create(model.join("model.safetensors")).unwrap();
    f.set_len(7_000_000_000).unwrap();
    drop(f);
    refused(&env, add_with(&env, &model), 2, "more than the");

    let env = Env::echo();
    let model = env.root.join("model");
    static_model(&model, "F32", 8);
    let f = std::fs::File::create(model.join("config.json")).unwrap();
    f.set_len(500_000_000).unwrap();
    drop(f);
    refused(&env, add_with(&env, &model), 2, "larger than the");
}

#[test]
fn a_pathological_tokenizer_is_refused() {
    // Nested a hundred thousand levels deep: a recursive reader would overflow its stack.
    let env = Env::echo();
    let model = env.root.join("model");
    static_model(&model, "F32", 8);
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    std::fs::write(model.join("tokenizer.json"), deep).unwrap();
    refused(
        &env,
        add_with(&env, &model),
        2,
        "is not a tokenizer ai can read",
    );
}

#[test]
fn a_symlinked_model_folder_is_used_and_removing_a_linked_model_keeps_its_target() {
    let env = Env::echo();
    let real = env.root.join("real-model");
    static_model(&real, "F32", 8);
    let link = env.root.join("linked");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    add_with(&env, &link).success();
    // A model folder under <home>/models that is a link to the user's own copy.
    let mut env = Env::echo();
    let files = repo_files(&env, "someone/tiny");
    let hub = hub_server(files, HashMap::new());
    env.set("HF_ENDPOINT", &hub.url);
    env.run(&["kb", "model", "pull", "someone/tiny"]).success();
    let models = env.home.join("models");
    let kept = env.root.join("kept");
    std::fs::rename(models.join("someone--tiny"), &kept).unwrap();
    std::os::unix::fs::symlink(&kept, models.join("someone--tiny")).unwrap();
    env.run(&["kb", "model", "remove", "someone/tiny"])
        .success();
    assert!(
        kept.join("model.safetensors").is_file(),
        "remove followed the link"
    );
}

// ---- a lying Hub --------------------------------------------------------------------------

/// What the raw server does with one request: write anything to the socket.
type Handler = Arc<dyn Fn(&str, &mut TcpStream) + Send + Sync>;

/// A Hub that answers from its own hand on the socket, one thread per connection (a held
/// answer never blocks another). `/{repo}/resolve/main/{file}` is served from `files`, except
/// the targets `special` answers.
struct RawHub {
    url: String,
    targets: Arc<Mutex<Vec<String>>>,
}

fn hub_server(files: HashMap<String, Vec<u8>>, special: HashMap<String, Handler>) -> RawHub {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let targets = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&targets);
    let files = Arc::new(files);
    let special = Arc::new(special);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let (files, special, log) = (files.clone(), special.clone(), log.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let target = line.split_whitespace().nth(1).unwrap_or("").to_owned();
                let mut range = None;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                    if let Some(v) = h.to_ascii_lowercase().strip_prefix("range: bytes=") {
                        range = v.trim().trim_end_matches('-').parse::<usize>().ok();
                    }
                }
                log.lock().unwrap().push(target.clone());
                if let Some(f) = special.get(&target) {
                    f(&target, &mut conn);
                    return;
                }
                let key = target
                    .trim_start_matches('/')
                    .replacen("/resolve/main/", "/", 1);
                let _ = match files.get(&key) {
                    Some(body) => {
                        let from = range.unwrap_or(0).min(body.len());
                        let status = if range.is_some() {
                            "206 Partial Content"
                        } else {
                            "200 OK"
                        };
                        let _ = write!(
                            conn,
                            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Range: bytes {from}-{}/{}\r\nConnection: close\r\n\r\n",
                            body.len() - from,
                            body.len().saturating_sub(1),
                            body.len()
                        );
                        conn.write_all(&body[from..])
                    }
                    None => conn.write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
                    ),
                };
            });
        }
    });
    RawHub { url, targets }
}

fn handler(f: impl Fn(&str, &mut TcpStream) + Send + Sync + 'static) -> Handler {
    Arc::new(f)
}

const TINY: &str = "/someone/tiny/resolve/main/";

/// Pull someone/tiny from a Hub whose `file` is answered by `h`; the output.
fn pull_with(env: &mut Env, file: &str, h: Handler) -> (Out, RawHub) {
    let files = repo_files(env, "someone/tiny");
    let hub = hub_server(files, HashMap::from([(format!("{TINY}{file}"), h)]));
    env.set("HF_ENDPOINT", &hub.url);
    (env.run(&["kb", "model", "pull", "someone/tiny"]), hub)
}

/// Nothing of someone/tiny was installed (a later use would download again).
#[track_caller]
fn not_installed(env: &Env) {
    assert!(!env.home.join("models/someone--tiny").exists());
    let list = env.run(&["kb", "model", "list", "--json"]).success().json();
    assert!(
        !list
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "someone/tiny"),
        "{list}"
    );
}

#[test]
fn html_in_place_of_json_or_weights_is_not_installed() {
    for file in ["config.json", "model.safetensors", "tokenizer.json"] {
        let mut env = Env::echo();
        let page = b"<!doctype html><html><body>Rate limited. Try later.</body></html>";
        let (out, _hub) = pull_with(
            &mut env,
            file,
            handler(move |_, c| {
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    page.len()
                );
                let _ = c.write_all(page);
            }),
        );
        let out = out.code(1);
        assert!(
            out.stderr.contains("is not a usable model"),
            "{file}: {out:#?}"
        );
        assert!(out.stderr.contains("nothing was kept"), "{file}: {out:#?}");
        assert!(out.stderr.contains("hint:"), "{file}: {out:#?}");
        not_installed(&env);
        // Nor kept to resume onto.
        assert!(
            !env.home.join("models/.partial/someone--tiny").exists(),
            "{file}"
        );
    }
}

#[test]
fn a_redirect_loop_ends_with_an_error() {
    let mut env = Env::echo();
    let (out, hub) = pull_with(
        &mut env,
        "model.safetensors",
        handler(|t, c| {
            let _ = write!(
                c,
                "HTTP/1.1 302 Found\r\nLocation: {t}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }),
    );
    let out = out.code(1);
    assert!(out.stderr.contains("redirect"), "{out:#?}");
    assert!(out.stderr.contains("hint:"), "{out:#?}");
    not_installed(&env);
    let asked = hub.targets.lock().unwrap().len();
    assert!(asked < 20, "followed {asked} redirects");
}

#[test]
fn a_size_beyond_the_limit_is_refused_before_anything_is_written() {
    let mut env = Env::echo();
    let (out, _hub) = pull_with(
        &mut env,
        "model.safetensors",
        handler(|_, c| {
            let _ = c.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\nConnection: close\r\n\r\nabc",
            );
        }),
    );
    let out = out.code(1);
    assert!(out.stderr.contains("such a file may take"), "{out:#?}");
    not_installed(&env);
    let part = env
        .home
        .join("models/.partial/someone--tiny/model.safetensors.part");
    assert!(!part.exists(), "a part was kept");
}

#[test]
fn an_endless_body_stops_at_the_limit() {
    // config.json with no length and no end: the pull stops at 1 MB, it does not fill the disk.
    let mut env = Env::echo();
    let (out, _hub) = pull_with(
        &mut env,
        "config.json",
        handler(|_, c| {
            let _ = c.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"a\":\"");
            let chunk = vec![b'x'; 64 * 1024];
            while c.write_all(&chunk).is_ok() {}
        }),
    );
    let out = out.code(1);
    assert!(out.stderr.contains("such a file may take"), "{out:#?}");
    not_installed(&env);
    assert!(
        !env.home
            .join("models/.partial/someone--tiny/config.json.part")
            .exists()
    );
}

#[test]
fn a_dripping_server_is_given_up_and_the_pull_resumes_later() {
    let mut env = Env::echo();
    env.set("AI_DOWNLOAD_STALL_SECS", "1");
    // A byte every 50 ms, for ever (until the client goes).
    let (out, _hub) = pull_with(
        &mut env,
        "model.safetensors",
        handler(|_, c| {
            let _ = c.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\nConnection: close\r\n\r\n",
            );
            while c.write_all(b"x").is_ok() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }),
    );
    let out = out.code(1);
    assert!(out.stderr.contains("stalls"), "{out:#?}");
    assert!(
        out.stderr.contains("ai kb model pull someone/tiny"),
        "{out:#?}"
    );
    not_installed(&env);
}

#[test]
fn a_silent_server_is_given_up() {
    let mut env = Env::echo();
    env.set("AI_DOWNLOAD_STALL_SECS", "1");
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let g = Arc::clone(&gate);
    let (out, _hub) = pull_with(
        &mut env,
        "model.safetensors",
        handler(move |_, c| {
            let _ = c.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\nConnection: close\r\n\r\nxx",
            );
            let (m, cv) = &*g;
            let mut open = m.lock().unwrap();
            while !*open {
                open = cv.wait(open).unwrap();
            }
        }),
    );
    release(&gate);
    let out = out.code(1);
    assert!(out.stderr.contains("was cut off"), "{out:#?}");
    not_installed(&env);
}

fn release(gate: &(Mutex<bool>, Condvar)) {
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
}

#[test]
fn names_that_climb_out_of_the_models_folder_are_refused() {
    let mut env = Env::echo();
    let hub = hub_server(HashMap::new(), HashMap::new());
    env.set("HF_ENDPOINT", &hub.url);
    for name in [
        "someone/..",
        "../tiny",
        "someone/../../x",
        "someone/.hidden",
    ] {
        let out = env.run(&["kb", "model", "pull", name]);
        assert!(out.status.code() != Some(0), "{name}: {out:#?}");
        assert!(out.stderr.contains("hint:"), "{name}: {out:#?}");
    }
    assert!(
        hub.targets.lock().unwrap().is_empty(),
        "the server was asked"
    );
    // A tampered manifest naming a file outside the folder: the folder is no complete model.
    let files = repo_files(&env, "someone/tiny");
    let hub = hub_server(files, HashMap::new());
    env.set("HF_ENDPOINT", &hub.url);
    env.run(&["kb", "model", "pull", "someone/tiny"]).success();
    let manifest = env.home.join("models/someone--tiny/ai-model.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["files"][0]["name"] = json!("../../outside.json");
    std::fs::write(&manifest, m.to_string()).unwrap();
    let dir = notes(&env);
    let out = env
        .run(&[
            "kb",
            "add",
            "notes2",
            s(&dir),
            "--embed",
            "local:someone/tiny",
        ])
        .code(2);
    assert!(out.stderr.contains("is damaged"), "{out:#?}");
}

#[test]
fn a_full_disk_during_a_pull_says_so_and_installs_nothing() {
    if !Path::new("/dev/full").exists() {
        return; // Linux's /dev/full stands for a full disk
    }
    let mut env = Env::echo();
    let partial = env.home.join("models/.partial/someone--tiny");
    std::fs::create_dir_all(&partial).unwrap();
    std::os::unix::fs::symlink("/dev/full", partial.join("model.safetensors.part")).unwrap();
    let files = repo_files(&env, "someone/tiny");
    let hub = hub_server(files, HashMap::new());
    env.set("HF_ENDPOINT", &hub.url);
    let out = env.run(&["kb", "model", "pull", "someone/tiny"]).code(1);
    assert!(out.stderr.contains("the disk is full"), "{out:#?}");
    assert!(out.stderr.contains("it resumes"), "{out:#?}");
    not_installed(&env);
}

#[test]
fn two_pulls_of_one_model_take_turns() {
    let mut env = Env::echo();
    let files = repo_files(&env, "someone/tiny");
    let weights = files["someone/tiny/model.safetensors"].clone();
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let g = Arc::clone(&gate);
    // The first pull's weights wait until the test lets them go.
    let hub = hub_server(
        files,
        HashMap::from([(
            format!("{TINY}model.safetensors"),
            handler(move |_, c| {
                let (m, cv) = &*g;
                let mut open = m.lock().unwrap();
                while !*open {
                    open = cv.wait(open).unwrap();
                }
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    weights.len()
                );
                let _ = c.write_all(&weights);
            }),
        )]),
    );
    env.set("HF_ENDPOINT", &hub.url);
    let mut first = env.spawn(&["kb", "model", "pull", "someone/tiny"]);
    wait_for("the first pull to ask for the weights", || {
        hub.targets
            .lock()
            .unwrap()
            .iter()
            .any(|t| t.ends_with("model.safetensors"))
    });
    let second = env.spawn(&["kb", "model", "pull", "someone/tiny"]);
    wait_for("the second pull to wait", || {
        second.stderr_now().contains("waiting for it to finish")
    });
    release(&gate);
    assert!(first.wait_status().success());
    let out = second.wait();
    let out = out.success();
    assert!(out.stderr.contains("already downloaded"), "{out:#?}");
    // The waiting pull asked the server nothing: each file was fetched once.
    let targets = hub.targets.lock().unwrap().clone();
    let mut seen = std::collections::HashSet::new();
    assert!(targets.iter().all(|t| seen.insert(t)), "{targets:?}");
    let dir = notes(&env);
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

#[test]
fn ctrl_c_in_a_pull_stops_it_at_once_and_the_next_pull_resumes() {
    let mut env = Env::echo();
    let files = repo_files(&env, "someone/tiny");
    let weights = files["someone/tiny/model.safetensors"].clone();
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let g = Arc::clone(&gate);
    let once = Arc::new(AtomicBool::new(false));
    let w = weights.clone();
    // The first answer sends half the weights, then holds the rest until the test is done.
    let hub = hub_server(
        files,
        HashMap::from([(
            format!("{TINY}model.safetensors"),
            handler(move |_, c| {
                if once.swap(true, Ordering::SeqCst) {
                    let _ = write!(
                        c,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        w.len()
                    );
                    let _ = c.write_all(&w);
                    return;
                }
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    w.len()
                );
                let _ = c.write_all(&w[..w.len() / 2]);
                let (m, cv) = &*g;
                let mut open = m.lock().unwrap();
                while !*open {
                    open = cv.wait(open).unwrap();
                }
            }),
        )]),
    );
    env.set("HF_ENDPOINT", &hub.url);
    let part = env
        .home
        .join("models/.partial/someone--tiny/model.safetensors.part");
    let mut pull = env.spawn(&["kb", "model", "pull", "someone/tiny"]);
    wait_for("half the weights on disk", || {
        std::fs::metadata(&part).is_ok_and(|m| m.len() as usize >= weights.len() / 2)
    });
    signal(pull.pid(), libc::SIGINT);
    // The server still holds the rest: only Ctrl+C can end the pull now.
    let status = pull.wait_status_within(Duration::from_secs(30));
    release(&gate);
    assert_eq!(status.code(), Some(130));
    not_installed(&env);
    assert!(part.exists(), "what came is kept to resume");
    env.run(&["kb", "model", "pull", "someone/tiny"]).success();
}
