//! Cross-encoders: a BERT-family encoder that reads a query and a passage together and gives one
//! relevance score, for reranking the best candidates of a search. The head is the model's
//! sequence-classification head, as its checkpoint holds it:
//!
//! - `BertForSequenceClassification` (`cross-encoder/ms-marco-MiniLM-L-6-v2`): the pooler (dense
//!   and tanh on the `[CLS]` state), then `classifier`;
//! - `XLMRobertaForSequenceClassification` (`cross-encoder/mmarco-mMiniLMv2-L12-H384-v1`):
//!   `classifier.dense` and tanh on the `<s>` state, then `classifier.out_proj`.
//!
//! The score is the raw logit (sentence-transformers' default for one label): only its order
//! matters.

use std::path::Path;

use super::bert::{Bert, Linear};
use super::weights::Weights;
use crate::error::{Error, Result};
use crate::signal;

/// A loaded cross-encoder.
pub(crate) struct CrossEncoder {
    bert: Bert,
    dense: Linear,
    out: Linear,
}

impl std::fmt::Debug for CrossEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossEncoder")
            .field("hidden", &self.bert.hidden())
            .finish_non_exhaustive()
    }
}

impl CrossEncoder {
    /// Load the cross-encoder in `dir` (the Hub layout). A folder that is not one (a sentence
    /// embedding model, a classifier with several labels) is refused with a hint.
    pub(crate) fn load(dir: &Path, spec: &str) -> Result<CrossEncoder> {
        let (config, tokenizer) = super::open_folder(dir, spec)?;
        let w = Weights::read(&dir.join("model.safetensors"))?;
        let hidden = config
            .get("hidden_size")
            .and_then(serde_json::Value::as_u64)
            .and_then(|v| usize::try_from(v).ok())
            .unwrap_or(0);
        let (dense, out) = if w.get("classifier.out_proj.weight").is_some() {
            ("classifier.dense".to_owned(), "classifier.out_proj")
        } else if w.get("classifier.weight").is_some() {
            let prefix = Bert::prefix(&w).unwrap_or("");
            (format!("{prefix}pooler.dense"), "classifier")
        } else {
            return Err(Error::usage(format!(
                "{} is not a cross-encoder: its weights have no classification head",
                dir.display()
            ))
            .hint(
                "a reranker needs a cross-encoder such as local:ms-marco-MiniLM-L-6-v2 (a sentence embedding model is used with --embed)",
            ));
        };
        let labels = w
            .get(&format!("{out}.weight"))
            .and_then(|t| t.shape.first().copied())
            .unwrap_or(0);
        if labels != 1 {
            return Err(Error::usage(format!(
                "{} scores {labels} labels; a reranker needs a cross-encoder with one relevance score",
                dir.display()
            ))
            .hint("use local:ms-marco-MiniLM-L-6-v2 or local:mmarco-mMiniLMv2-L12-H384-v1"));
        }
        let bert = Bert::load_from(dir, &config, tokenizer, &w)?;
        if hidden != bert.hidden() {
            return Err(w.damaged("config.json's hidden_size does not match the encoder"));
        }
        Ok(CrossEncoder {
            dense: Linear::read(&w, &dense, hidden, hidden)?,
            out: Linear::read(&w, out, hidden, 1)?,
            bert,
        })
    }

    /// How relevant `passage` is to `query` (higher is more).
    pub(crate) fn score(&self, query: &str, passage: &str) -> Result<f32> {
        let (ids, types) = self.bert.encode(query, Some(passage))?;
        let states = self.bert.forward(&ids, &types)?;
        let h = self.bert.hidden();
        let mut x = self.dense.apply(&states[..h], 1);
        x.iter_mut().for_each(|v| *v = v.tanh());
        let y = self.out.apply(&x, 1);
        Ok(y.first().copied().unwrap_or(f32::NEG_INFINITY))
    }

    /// The scores of `passages` for `query`, in order, computed on all cores. Ctrl+C →
    /// `Error::Interrupted` between passages.
    pub(crate) fn scores(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        let one = |p: &&str| -> Result<f32> {
            if signal::interrupted() {
                return Err(Error::Interrupted);
            }
            self.score(query, p)
        };
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(passages.len())
            .max(1);
        if threads == 1 {
            return passages.iter().map(one).collect();
        }
        // Interleaved, so each thread gets long and short passages alike.
        let parts: Vec<Result<Vec<(usize, f32)>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        (t..passages.len())
                            .step_by(threads)
                            .map(|i| one(&passages[i]).map(|v| (i, v)))
                            .collect()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::backend("a thread computing rerank scores stopped"))
                    })
                })
                .collect()
        });
        let mut out = vec![0.0f32; passages.len()];
        for p in parts {
            for (i, v) in p? {
                out[i] = v;
            }
        }
        Ok(out)
    }
}
