//! The embedding requests and replies of each protocol, as typed bodies: a pure builder and a
//! pure reader per protocol, and the checks every reply must pass (one vector per input, all of
//! one length, finite, not zero) before its vectors are L2-normalized.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::{Input, Purpose};
use crate::backend::http::provider::Resolved;
use crate::backend::http::{Bad, Built, ErrorBody, path_segment};
use crate::config::kb::Task;

/// How a provider is asked for embeddings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// `POST {base}/embeddings` (OpenAI and compatible servers).
    Openai,
    /// `POST {base}/openai/deployments/{deployment}/embeddings?api-version=…`.
    Azure,
    /// `POST {base}/models/{model}:batchEmbedContents` (the base ends in the API version).
    Gemini,
    /// `POST {base}/api/embed`.
    Ollama,
}

/// What a request needs besides its inputs.
pub(crate) struct Ask<'a> {
    pub(crate) wire: Wire,
    pub(crate) model: &'a str,
    pub(crate) dimensions: Option<u32>,
    pub(crate) purpose: Purpose,
    /// How the model is told the purpose (`None`: by its name).
    pub(crate) task: Option<Task>,
}

#[derive(Serialize)]
struct OpenaiBody<'a> {
    model: &'a str,
    input: Vec<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dimensions: Option<u32>,
    encoding_format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_type: Option<&'static str>,
}

#[derive(Serialize)]
struct GeminiBody<'a> {
    requests: Vec<GeminiRequest<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GeminiRequest<'a> {
    /// `models/gemini-embedding-001`: the model of the URL, again.
    model: &'a str,
    content: GeminiContent<'a>,
    task_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_dimensionality: Option<u32>,
}

#[derive(Serialize)]
struct GeminiContent<'a> {
    parts: [GeminiPart<'a>; 1],
}

#[derive(Serialize)]
struct GeminiPart<'a> {
    text: &'a str,
}

#[derive(Serialize)]
struct OllamaBody<'a> {
    model: &'a str,
    input: Vec<Cow<'a, str>>,
    /// Ollama cuts long inputs silently unless told not to; a cut passage would be embedded as
    /// if it were whole.
    truncate: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    dimensions: Option<u32>,
}

/// The task prefix some open models were trained with (their model cards ask for it); without
/// it their query and passage vectors match poorly. Gemini gets the task as `taskType` instead.
pub(crate) fn prefix(model: &str, purpose: Purpose) -> &'static str {
    family_prefix(model, purpose).unwrap_or("")
}

/// The prefix of a model family ai knows by name, if the name says it is one.
fn family_prefix(model: &str, purpose: Purpose) -> Option<&'static str> {
    let m = model.to_ascii_lowercase();
    if m.contains("nomic-embed-text") {
        return Some(match purpose {
            Purpose::Document => "search_document: ",
            Purpose::Query => "search_query: ",
        });
    }
    if m.contains("mxbai-embed-large") {
        return Some(match purpose {
            Purpose::Document => "",
            Purpose::Query => "Represent this sentence for searching relevant passages: ",
        });
    }
    // The e5 family; a model name that names the task (`…-query`, `…-passage`) is a server
    // that adds the prefix itself.
    if m.contains("e5") && !m.contains("query") && !m.contains("passage") {
        return Some(e5(purpose));
    }
    None
}

fn e5(purpose: Purpose) -> &'static str {
    match purpose {
        Purpose::Document => "passage: ",
        Purpose::Query => "query: ",
    }
}

/// The text prefix of a request, as its base's `task` says (unset: by the model's name).
fn text_prefix(ask: &Ask<'_>) -> &'static str {
    match ask.task {
        None => prefix(ask.model, ask.purpose),
        Some(Task::Prefix) => family_prefix(ask.model, ask.purpose).unwrap_or(e5(ask.purpose)),
        Some(Task::InputType | Task::None) => "",
    }
}

fn texts<'a>(inputs: &[Input<'a>], prefix: &str) -> Vec<Cow<'a, str>> {
    inputs
        .iter()
        .map(|i| {
            if prefix.is_empty() {
                Cow::Borrowed(i.text)
            } else {
                Cow::Owned(format!("{prefix}{}", i.text))
            }
        })
        .collect()
}

/// The request for `inputs`, headers of the provider's config included (not the content type).
pub(crate) fn request(p: &Resolved, ask: &Ask<'_>, inputs: &[Input<'_>]) -> Built {
    let bearer = || {
        p.key
            .as_ref()
            .map(|k| ("Authorization".to_owned(), format!("Bearer {k}")))
    };
    let (url, auth, body) = match ask.wire {
        Wire::Openai | Wire::Azure => {
            let body = OpenaiBody {
                model: ask.model,
                input: texts(inputs, text_prefix(ask)),
                dimensions: ask.dimensions,
                encoding_format: "float",
                input_type: (ask.task == Some(Task::InputType)).then_some(match ask.purpose {
                    Purpose::Document => "passage",
                    Purpose::Query => "query",
                }),
            };
            let (url, auth) = if ask.wire == Wire::Azure {
                (
                    format!(
                        "{}/openai/deployments/{}/embeddings?api-version={}",
                        p.base_url,
                        path_segment(ask.model),
                        p.api_version
                    ),
                    p.key.as_ref().map(|k| ("api-key".to_owned(), k.clone())),
                )
            } else {
                (format!("{}/embeddings", p.base_url), bearer())
            };
            (url, auth, serde_json::to_vec(&body))
        }
        Wire::Gemini => {
            let model = format!("models/{}", ask.model);
            let (task_type, document) = match ask.purpose {
                Purpose::Document => ("RETRIEVAL_DOCUMENT", true),
                Purpose::Query => ("RETRIEVAL_QUERY", false),
            };
            let body = GeminiBody {
                requests: inputs
                    .iter()
                    .map(|i| GeminiRequest {
                        model: &model,
                        content: GeminiContent {
                            parts: [GeminiPart { text: i.text }],
                        },
                        task_type,
                        // A title only goes with RETRIEVAL_DOCUMENT.
                        title: i.title.filter(|t| document && !t.trim().is_empty()),
                        output_dimensionality: ask.dimensions,
                    })
                    .collect(),
            };
            let url = format!(
                "{}/models/{}:batchEmbedContents",
                p.base_url,
                path_segment(ask.model)
            );
            let auth = p
                .key
                .as_ref()
                .map(|k| ("x-goog-api-key".to_owned(), k.clone()));
            (url, auth, serde_json::to_vec(&body))
        }
        Wire::Ollama => {
            let body = OllamaBody {
                model: ask.model,
                input: texts(inputs, text_prefix(ask)),
                truncate: false,
                dimensions: ask.dimensions,
            };
            (
                format!("{}/api/embed", p.base_url),
                bearer(),
                serde_json::to_vec(&body),
            )
        }
    };
    let mut headers: Vec<(String, String)> = auth.into_iter().collect();
    headers.extend(p.headers.iter().cloned());
    let mut url = url;
    // A query in the base URL (`…/v1?key=x`) goes after the path added here.
    if let Some(query) = &p.base_query {
        let sep = if url.contains('?') { '&' } else { '?' };
        url = format!("{url}{sep}{query}");
    }
    Built {
        url,
        headers,
        // Typed bodies of strings and numbers always serialize.
        body: body.unwrap_or_default(),
    }
}

#[derive(Deserialize)]
struct OpenaiReply {
    data: Vec<OpenaiItem>,
}

#[derive(Deserialize)]
struct OpenaiItem {
    /// Some compatible servers leave it out; then the order is the order of `data`.
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

#[derive(Deserialize)]
struct GeminiReply {
    embeddings: Vec<GeminiItem>,
}

#[derive(Deserialize)]
struct GeminiItem {
    values: Vec<f32>,
}

#[derive(Deserialize)]
struct OllamaReply {
    embeddings: Vec<Vec<f32>>,
}

/// `{"error": …}`, sent by some servers with status 200.
#[derive(Deserialize)]
struct ErrorReply {
    error: ErrorBody,
}

/// The vectors of a 2xx reply, in input order (not yet checked).
pub(crate) fn parse(wire: Wire, bytes: &[u8]) -> Result<Vec<Vec<f32>>, Bad> {
    let parsed = match wire {
        Wire::Openai | Wire::Azure => {
            serde_json::from_slice::<OpenaiReply>(bytes).and_then(|r| in_order(r.data))
        }
        Wire::Gemini => serde_json::from_slice::<GeminiReply>(bytes)
            .map(|r| r.embeddings.into_iter().map(|e| e.values).collect()),
        Wire::Ollama => serde_json::from_slice::<OllamaReply>(bytes).map(|r| r.embeddings),
    };
    parsed.map_err(|e| {
        // An object only: serde would read `[[1]]` as an error struct in sequence form.
        if bytes.trim_ascii_start().starts_with(b"{")
            && let Ok(r) = serde_json::from_slice::<ErrorReply>(bytes)
        {
            return Bad::Provider(r.error);
        }
        if e.is_syntax() || e.is_eof() {
            Bad::Invalid(format!("not JSON ({e})"))
        } else {
            Bad::Invalid(format!("not the expected shape ({e})"))
        }
    })
}

/// OpenAI's items sorted by `index`, which must be 0..n, each once.
fn in_order(items: Vec<OpenaiItem>) -> serde_json::Result<Vec<Vec<f32>>> {
    let n = items.len();
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    for (pos, item) in items.into_iter().enumerate() {
        let i = item.index.unwrap_or(pos);
        match out.get_mut(i) {
            Some(slot @ None) => *slot = Some(item.embedding),
            Some(Some(_)) => {
                return Err(serde::de::Error::custom(format!(
                    "index {i} appears twice in data"
                )));
            }
            None => {
                return Err(serde::de::Error::custom(format!(
                    "index {i} is out of range for {n} items in data"
                )));
            }
        }
    }
    // n slots and n distinct indexes below n: every slot is filled.
    Ok(out.into_iter().flatten().collect())
}

/// Why the vectors of a well-formed reply cannot be used.
#[derive(Debug, PartialEq)]
pub(crate) enum Shape {
    Count { got: usize, want: usize },
    Empty { at: usize },
    Mixed { first: usize, other: usize },
    Dimensions { got: usize, want: u32 },
    NotFinite { at: usize },
    Zero { at: usize },
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shape::Count { got, want } => write!(f, "{got} vectors for {want} inputs"),
            Shape::Empty { at } => write!(f, "an empty vector for input {}", at + 1),
            Shape::Mixed { first, other } => {
                write!(f, "vectors of different lengths ({first} and {other})")
            }
            Shape::Dimensions { got, want } => {
                write!(f, "vectors of {got} dimensions, not the {want} asked for")
            }
            Shape::NotFinite { at } => {
                write!(
                    f,
                    "a number that is not finite in the vector for input {}",
                    at + 1
                )
            }
            Shape::Zero { at } => write!(f, "a zero vector for input {}", at + 1),
        }
    }
}

/// Check the vectors of a reply to `want` inputs and normalize them to length 1.
pub(crate) fn finish(
    mut vectors: Vec<Vec<f32>>,
    want: usize,
    dimensions: Option<u32>,
) -> Result<Vec<Vec<f32>>, Shape> {
    if vectors.len() != want {
        return Err(Shape::Count {
            got: vectors.len(),
            want,
        });
    }
    if vectors.is_empty() {
        return Ok(vectors);
    }
    let first = vectors.first().map_or(0, Vec::len);
    for (at, v) in vectors.iter().enumerate() {
        if v.is_empty() {
            return Err(Shape::Empty { at });
        }
        if v.len() != first {
            return Err(Shape::Mixed {
                first,
                other: v.len(),
            });
        }
    }
    if let Some(want) = dimensions
        && first != want as usize
    {
        return Err(Shape::Dimensions { got: first, want });
    }
    for (at, v) in vectors.iter_mut().enumerate() {
        normalize(v).map_err(|zero| {
            if zero {
                Shape::Zero { at }
            } else {
                Shape::NotFinite { at }
            }
        })?;
    }
    Ok(vectors)
}

/// Scale `v` to length 1. `Err(true)`: all zeros; `Err(false)`: a number is not finite.
pub(crate) fn normalize(v: &mut [f32]) -> Result<(), bool> {
    if v.iter().any(|x| !x.is_finite()) {
        return Err(false);
    }
    let norm = v
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err(norm == 0.0);
    }
    for x in v.iter_mut() {
        *x = (f64::from(*x) / norm) as f32;
    }
    Ok(())
}
