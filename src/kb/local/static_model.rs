//! Static embeddings in the model2vec format: a token-embedding matrix (`embeddings`, f32, f16
//! or int8; optionally a per-token `weights` vector and a token → row `mapping`), mean pooled
//! over a text's tokens. No attention, so thousands of passages a second on one core.

use std::path::Path;

use tokenizers::Tokenizer;

use super::weights::Weights;
use crate::error::{Error, Result};

/// model2vec reads at most this many tokens of a text.
const MAX_TOKENS: usize = 512;

pub(crate) struct StaticModel {
    tokenizer: Tokenizer,
    weights: Weights,
    /// The name of the token-vector tensor.
    matrix: &'static str,
    rows: usize,
    dims: usize,
    /// Token IDs dropped before pooling (the unknown token), as model2vec does.
    unk: Option<u32>,
}

impl StaticModel {
    pub(crate) fn load(dir: &Path, tokenizer: Tokenizer) -> Result<StaticModel> {
        let weights = Weights::read(&dir.join("model.safetensors"))?;
        let name = ["embeddings", "embedding.weight", "embeddings.weight"]
            .into_iter()
            .find(|n| weights.get(n).is_some())
            .ok_or_else(|| {
                weights.damaged("it has no tensor embeddings").hint(
                    "a static model (model2vec) keeps its token vectors in a tensor named embeddings",
                )
            })?;
        let (rows, dims) = {
            let t = weights.get(name).expect("found above");
            if t.shape.len() != 2 || t.shape[0] == 0 || t.shape[1] == 0 {
                return Err(weights.damaged(&format!(
                    "tensor {name} has shape {:?}, not [tokens, dimensions]",
                    t.shape
                )));
            }
            if !t.readable() {
                return Err(weights.damaged(&format!(
                    "tensor {name} is of type {:?}, which ai cannot read",
                    t.dtype
                )));
            }
            if !t.finite() {
                return Err(weights.not_finite(name));
            }
            (t.shape[0], t.shape[1])
        };
        let vocab = tokenizer.get_vocab_size(true);
        let mapped = weights.get("mapping");
        if let Some(m) = &mapped {
            let bad = m.len() < vocab || (0..m.len()).any(|i| m.index(i).is_none_or(|r| r >= rows));
            if bad {
                return Err(weights.damaged("its token mapping does not fit its embeddings"));
            }
        } else if vocab > rows {
            return Err(Error::usage(format!(
                "the tokenizer in {} does not match its model: {vocab} tokens, but {rows} token vectors",
                dir.display()
            ))
            .hint("tokenizer.json and model.safetensors must come from the same model; download both again"));
        }
        if let Some(w) = weights.get("weights") {
            if w.len() < vocab || !w.readable() {
                return Err(weights.damaged("its token weights do not fit its tokenizer"));
            }
            if !w.finite() {
                return Err(weights.not_finite("weights"));
            }
        }
        let unk = ["[UNK]", "<unk>"]
            .into_iter()
            .find_map(|t| tokenizer.token_to_id(t));
        Ok(StaticModel {
            tokenizer,
            weights,
            matrix: name,
            rows,
            dims,
            unk,
        })
    }

    fn matrix(&self) -> super::weights::Tensor<'_> {
        self.weights.get(self.matrix).expect("checked when loaded")
    }

    pub(crate) fn dims(&self) -> usize {
        self.dims
    }

    /// One text's vector (mean of its tokens' vectors; not yet normalized). A text with no known
    /// token gives zeros.
    pub(crate) fn embed(&self, text: &str) -> Result<Vec<f32>> {
        // Long texts are cut before tokenizing: 512 tokens rarely take more than 8 bytes each.
        let text = cut(text, MAX_TOKENS * 8);
        let enc = self
            .tokenizer
            .encode(text, false)
            .map_err(|e| Error::backend(format!("cannot tokenize a passage: {e}")))?;
        let m = self.matrix();
        let mapping = self.weights.get("mapping");
        let weights = self.weights.get("weights");
        let mut out = vec![0.0f32; self.dims];
        let mut n = 0usize;
        for &id in enc.get_ids().iter().take(MAX_TOKENS) {
            if Some(id) == self.unk {
                continue;
            }
            let id = id as usize;
            let row = match &mapping {
                Some(map) => map.index(id),
                None => Some(id),
            };
            let Some(row) = row.filter(|r| *r < self.rows) else {
                continue;
            };
            let w = weights.as_ref().and_then(|w| w.at(id)).unwrap_or(1.0);
            m.add_row(row, w, &mut out);
            n += 1;
        }
        if n > 0 {
            let inv = 1.0 / n as f32;
            out.iter_mut().for_each(|x| *x *= inv);
        }
        Ok(out)
    }
}

/// `text` cut to at most `max` bytes, at a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
