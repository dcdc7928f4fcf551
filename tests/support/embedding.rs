//! A fake embeddings API: deterministic "hashed bag of words" vectors (texts sharing words are
//! similar, so search results can be predicted), served for the three embedding protocols by
//! path from one [`Server`]:
//!
//! - OpenAI, compatible servers and Azure: `…/embeddings` (`/v1/embeddings`,
//!   `/openai/deployments/D/embeddings?api-version=…`), `input` a string or a list,
//!   `dimensions` honoured → `data[].index/embedding`;
//! - Gemini: `…/models/M:batchEmbedContents`, `requests[].content.parts[].text`,
//!   `outputDimensionality` honoured → `embeddings[].values`;
//! - Ollama: `/api/embed`, `input` a string or a list, `dimensions` honoured → `embeddings`.
//!
//! Anything else is a 404. Without a size in the request, vectors have [`DIMS`] dimensions.
//!
//! ```ignore
//! let server = embedding::server();
//! let env = Env::for_provider("openai", &server);
//! // … `ai kb add notes DIR --embed openai:text-embedding-3-small --dimensions 64` …
//! assert_eq!(embedding::hits(&server), 1);
//! ```
//!
//! To misbehave on purpose, wrap [`answer`] in [`Server::respond`] (a 429 first, then the real
//! answer), or use [`answer_forcing`] for vectors of another size than asked.

use serde_json::{Value, json};

use super::{Recorded, Reply, Server};

/// Dimensions when the request names none.
pub const DIMS: usize = 64;

/// Task prefixes `ai` adds for some models (nomic, e5): left out of the bag of words, so a
/// query and a passage with the same words get the same vector.
const PREFIXES: [&str; 4] = [
    "search_document: ",
    "search_query: ",
    "passage: ",
    "query: ",
];

/// The vector of `text`: each lower-cased word hashed to a dimension and a sign (±1), summed,
/// L2-normalized. A text without words (or whose words cancel out) gets a unit vector of its
/// own, so no vector is ever zero.
pub fn vector(text: &str, dims: usize) -> Vec<f32> {
    let dims = dims.max(1);
    let text = PREFIXES
        .iter()
        .find_map(|p| text.strip_prefix(p))
        .unwrap_or(text);
    let mut v = vec![0f32; dims];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let h = fnv1a(word.to_lowercase().as_bytes());
        let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
        v[(h % dims as u64) as usize] += sign;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm == 0.0 {
        v[(fnv1a(text.as_bytes()) % dims as u64) as usize] = 1.0;
        return v;
    }
    v.iter().map(|x| x / norm).collect()
}

/// Cosine similarity of two normalized vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A server that answers the three embedding protocols (see the module).
pub fn server() -> Server {
    Server::respond(answer)
}

/// The answer to one request, as [`server`] gives it.
pub fn answer(req: &Recorded) -> Reply {
    answer_forcing(req, None)
}

/// The answer to one request with vectors of `dims` dimensions whatever it asked for (`None`:
/// what it asked for, else [`DIMS`]).
pub fn answer_forcing(req: &Recorded, dims: Option<usize>) -> Reply {
    let Some(protocol) = protocol(req) else {
        return Reply::json(
            404,
            r#"{"error":{"message":"no such endpoint","code":404}}"#,
        );
    };
    if req.method != "POST" {
        return Reply::json(405, r#"{"error":{"message":"POST only"}}"#);
    }
    let Ok(body) = serde_json::from_slice::<Value>(&req.body) else {
        return Reply::json(400, r#"{"error":{"message":"the body is not JSON"}}"#);
    };
    let size = |asked: &Value| {
        dims.or_else(|| asked.as_u64().map(|n| n as usize))
            .unwrap_or(DIMS)
    };
    let reply = match protocol {
        Protocol::Openai => {
            let texts = input_texts(&body["input"]);
            let data: Vec<Value> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": vector(t, size(&body["dimensions"]))}))
                .collect();
            json!({"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": texts.len(), "total_tokens": texts.len()}})
        }
        Protocol::Gemini => {
            let requests = body["requests"].as_array().cloned().unwrap_or_default();
            let mut embeddings = Vec::new();
            for r in &requests {
                let text: String = r["content"]["parts"]
                    .as_array()
                    .map(|parts| {
                        parts
                            .iter()
                            .filter_map(|p| p["text"].as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_default();
                embeddings.push(json!({"values": vector(&text, size(&r["outputDimensionality"]))}));
            }
            json!({"embeddings": embeddings})
        }
        Protocol::Ollama => {
            let texts = input_texts(&body["input"]);
            let embeddings: Vec<Vec<f32>> = texts
                .iter()
                .map(|t| vector(t, size(&body["dimensions"])))
                .collect();
            json!({"model": body["model"], "embeddings": embeddings, "prompt_eval_count": texts.len()})
        }
    };
    Reply::json(200, &reply.to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Openai,
    Gemini,
    Ollama,
}

/// Which protocol a request's path asks for.
fn protocol(req: &Recorded) -> Option<Protocol> {
    let path = req.target.split('?').next().unwrap_or("");
    if path.ends_with("/embeddings") {
        Some(Protocol::Openai)
    } else if path.ends_with(":batchEmbedContents") {
        Some(Protocol::Gemini)
    } else if path == "/api/embed" {
        Some(Protocol::Ollama)
    } else {
        None
    }
}

/// `input` as OpenAI and Ollama take it: one string or a list of them.
fn input_texts(input: &Value) -> Vec<String> {
    match input {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().unwrap_or_default().to_owned())
            .collect(),
        _ => Vec::new(),
    }
}

/// The embedding requests the server got (other requests, chat turns say, left out).
pub fn requests(server: &Server) -> Vec<Recorded> {
    server
        .requests()
        .into_iter()
        .filter(|r| protocol(r).is_some())
        .collect()
}

/// How many embedding requests the server got.
pub fn hits(server: &Server) -> usize {
    requests(server).len()
}

/// Every text sent to be embedded, in the order sent (task prefixes kept, so a test can see
/// them).
pub fn texts(server: &Server) -> Vec<String> {
    let mut out = Vec::new();
    for r in requests(server) {
        let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        match protocol(&r) {
            Some(Protocol::Gemini) => {
                for q in body["requests"].as_array().cloned().unwrap_or_default() {
                    for p in q["content"]["parts"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                    {
                        out.push(p["text"].as_str().unwrap_or_default().to_owned());
                    }
                }
            }
            _ => out.extend(input_texts(&body["input"])),
        }
    }
    out
}
