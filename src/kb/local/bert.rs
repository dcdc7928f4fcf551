//! BERT-family encoders on the CPU, from the Hugging Face layout: tokenize, run the transformer,
//! pool. Made of three parts that other users (a cross-encoder reranker) can take one by one:
//!
//! - [`Bert::load`] / [`Bert::forward`]: the encoder, giving every token's last hidden state
//!   (`forward(...)[0..hidden]` is the `[CLS]` state);
//! - [`Bert::encode`]: a text (or a text pair) as token IDs and type IDs, truncated to the
//!   model's length;
//! - [`Pooling`]: mean or CLS, as the sentence-transformers `1_Pooling/config.json` says.
//!
//! One text runs at a time on the calling thread (no padding, no mask: memory is one text's
//! activations); callers spread texts over threads. The matrix products are `matrixmultiply`'s
//! SIMD kernels, picked at run time for the CPU.

use std::path::Path;

use tokenizers::{Tokenizer, TruncationParams};

use super::weights::Weights;
use crate::error::{Error, Result};

/// A `Linear` layer: `y = x W^T + b`, `W` stored `[out, in]` as PyTorch does.
pub(super) struct Linear {
    w: Vec<f32>,
    b: Vec<f32>,
    inp: usize,
    out: usize,
}

struct Norm {
    g: Vec<f32>,
    b: Vec<f32>,
}

struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    attn_norm: Norm,
    up: Linear,
    down: Linear,
    out_norm: Norm,
}

/// A BERT encoder and its tokenizer.
pub(crate) struct Bert {
    tokenizer: Tokenizer,
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    vocab: usize,
    positions: usize,
    types: usize,
    emb_norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    eps: f32,
    max_tokens: usize,
    /// Where positions start: 0 for BERT; RoBERTa (XLM-R) counts from `pad_token_id + 1`.
    position_offset: usize,
}

/// How token states become one vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pooling {
    Mean,
    Cls,
}

impl Pooling {
    /// From a sentence-transformers model folder (`1_Pooling/config.json`); mean when absent.
    pub(crate) fn of(dir: &Path) -> Result<Pooling> {
        let path = dir.join("1_Pooling").join("config.json");
        if !path.is_file() {
            return Ok(Pooling::Mean);
        }
        let v = super::read_json(&path)?;
        let on = |k: &str| v.get(k).and_then(|x| x.as_bool()).unwrap_or(false);
        if on("pooling_mode_cls_token") {
            Ok(Pooling::Cls)
        } else if on("pooling_mode_mean_tokens") || on("pooling_mode_mean_sqrt_len_tokens") {
            Ok(Pooling::Mean)
        } else {
            Err(Error::usage(format!(
                "{} asks for a pooling ai does not do (only mean and CLS)",
                path.display()
            ))
            .hint("use a model with mean or CLS pooling"))
        }
    }

    /// Pool `states` (`tokens × hidden`, row-major).
    pub(crate) fn pool(self, states: &[f32], hidden: usize) -> Vec<f32> {
        match self {
            Pooling::Cls => states[..hidden].to_vec(),
            Pooling::Mean => {
                let n = states.len() / hidden;
                let mut out = vec![0.0f32; hidden];
                for row in states.chunks_exact(hidden) {
                    for (o, x) in out.iter_mut().zip(row) {
                        *o += x;
                    }
                }
                let inv = 1.0 / n.max(1) as f32;
                out.iter_mut().for_each(|x| *x *= inv);
                out
            }
        }
    }
}

/// A sentence transformer: a [`Bert`] and its [`Pooling`].
pub(crate) struct SentenceModel {
    pub(crate) bert: Bert,
    pub(crate) pooling: Pooling,
}

impl SentenceModel {
    pub(crate) fn load(
        dir: &Path,
        config: &serde_json::Value,
        tokenizer: Tokenizer,
    ) -> Result<SentenceModel> {
        let pooling = Pooling::of(dir)?;
        let bert = Bert::load(dir, config, tokenizer)?;
        Ok(SentenceModel { bert, pooling })
    }

    pub(crate) fn dims(&self) -> usize {
        self.bert.hidden
    }

    pub(crate) fn max_tokens(&self) -> usize {
        self.bert.max_tokens
    }

    /// One text's pooled vector (not normalized).
    pub(crate) fn embed(&self, text: &str) -> Result<Vec<f32>> {
        let (ids, types) = self.bert.encode(text, None)?;
        let states = self.bert.forward(&ids, &types)?;
        Ok(self.pooling.pool(&states, self.bert.hidden))
    }
}

fn usize_of(config: &serde_json::Value, key: &str) -> Option<usize> {
    config
        .get(key)
        .and_then(|v| v.as_u64())
        .and_then(|v| usize::try_from(v).ok())
}

impl Bert {
    /// The encoder in `dir` (`config.json` already read; `model.safetensors` read here).
    pub(crate) fn load(
        dir: &Path,
        config: &serde_json::Value,
        tokenizer: Tokenizer,
    ) -> Result<Bert> {
        let w = Weights::read(&dir.join("model.safetensors"))?;
        Bert::load_from(dir, config, tokenizer, &w)
    }

    /// The tensor-name prefix of the encoder in `w`: none for a bare encoder, `bert.` or
    /// `roberta.` for a checkpoint saved with a task head (a cross-encoder's).
    pub(super) fn prefix(w: &Weights) -> Option<&'static str> {
        ["", "bert.", "roberta."].into_iter().find(|p| {
            w.get(&format!("{p}embeddings.word_embeddings.weight"))
                .is_some()
        })
    }

    /// The encoder from weights already read (a cross-encoder reads its head from them too).
    pub(super) fn load_from(
        dir: &Path,
        config: &serde_json::Value,
        tokenizer: Tokenizer,
        w: &Weights,
    ) -> Result<Bert> {
        let cfg_path = dir.join("config.json");
        let need = |key: &str| {
            usize_of(config, key).filter(|v| *v > 0).ok_or_else(|| {
                Error::usage(format!("{} has no {key}", cfg_path.display()))
                    .hint("a local transformer model needs the config.json of a BERT-family model")
            })
        };
        let hidden = need("hidden_size")?;
        let heads = need("num_attention_heads")?;
        let layers_n = need("num_hidden_layers")?;
        let inter = need("intermediate_size")?;
        let positions = need("max_position_embeddings")?;
        if positions < 2 {
            return Err(Error::usage(format!(
                "{}: max_position_embeddings {positions} leaves no room for a text",
                cfg_path.display()
            ))
            .hint("a local transformer model needs the config.json of a BERT-family model"));
        }
        if hidden % heads != 0 {
            return Err(Error::usage(format!(
                "{}: hidden_size {hidden} is not a multiple of num_attention_heads {heads}",
                cfg_path.display()
            )));
        }
        let act = config
            .get("hidden_act")
            .and_then(|v| v.as_str())
            .unwrap_or("gelu");
        if act != "gelu" {
            return Err(Error::usage(format!(
                "{}: the activation {act} is not supported (only gelu)",
                cfg_path.display()
            )));
        }
        let eps = config
            .get("layer_norm_eps")
            .and_then(|v| v.as_f64())
            .unwrap_or(1e-12) as f32;
        if !(eps.is_finite() && eps >= 0.0) {
            return Err(Error::usage(format!(
                "{}: layer_norm_eps {eps} is not a small positive number",
                cfg_path.display()
            ))
            .hint("a local transformer model needs the config.json of a BERT-family model"));
        }
        // Checkpoints saved from a task head prefix every name with `bert.` (`roberta.`).
        let Some(prefix) = Bert::prefix(w) else {
            return Err(w
                .damaged("it has no embeddings.word_embeddings.weight")
                .hint("is it a BERT-family model? config.json and model.safetensors must come from the same model"));
        };
        let roberta = config
            .get("model_type")
            .and_then(|v| v.as_str())
            .is_some_and(|t| t.to_ascii_lowercase().contains("roberta"));
        let position_offset = if roberta {
            usize_of(config, "pad_token_id").unwrap_or(1) + 1
        } else {
            0
        };
        let tensor = |name: &str, shape: &[usize]| -> Result<Vec<f32>> {
            let full = format!("{prefix}{name}");
            let (got, values) = w.f32(&full)?;
            if got != shape {
                return Err(w
                    .damaged(&format!(
                        "tensor {full} has shape {got:?}, but config.json says {shape:?}"
                    ))
                    .hint("config.json and model.safetensors must come from the same model"));
            }
            Ok(values)
        };
        let linear = |name: &str, inp: usize, out: usize| -> Result<Linear> {
            Ok(Linear {
                w: tensor(&format!("{name}.weight"), &[out, inp])?,
                b: tensor(&format!("{name}.bias"), &[out])?,
                inp,
                out,
            })
        };
        let norm = |name: &str| -> Result<Norm> {
            let has = |s: &str| w.get(&format!("{prefix}{name}.{s}")).is_some();
            let (g, b) = if has("weight") {
                ("weight", "bias")
            } else {
                ("gamma", "beta")
            };
            Ok(Norm {
                g: tensor(&format!("{name}.{g}"), &[hidden])?,
                b: tensor(&format!("{name}.{b}"), &[hidden])?,
            })
        };
        let vocab = w
            .get(&format!("{prefix}embeddings.word_embeddings.weight"))
            .map_or(0, |t| t.shape.first().copied().unwrap_or(0));
        let types = usize_of(config, "type_vocab_size").unwrap_or(2).max(1);
        let word = tensor("embeddings.word_embeddings.weight", &[vocab, hidden])?;
        let position = tensor(
            "embeddings.position_embeddings.weight",
            &[positions, hidden],
        )?;
        let token_type = tensor("embeddings.token_type_embeddings.weight", &[types, hidden])?;
        let emb_norm = norm("embeddings.LayerNorm")?;
        // Grown one layer at a time: config.json's count is checked against the tensors that
        // exist, never trusted as an allocation size (a huge count is a missing tensor).
        let mut layers = Vec::new();
        for i in 0..layers_n {
            let p = format!("encoder.layer.{i}");
            layers.push(Layer {
                q: linear(&format!("{p}.attention.self.query"), hidden, hidden)?,
                k: linear(&format!("{p}.attention.self.key"), hidden, hidden)?,
                v: linear(&format!("{p}.attention.self.value"), hidden, hidden)?,
                o: linear(&format!("{p}.attention.output.dense"), hidden, hidden)?,
                attn_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                up: linear(&format!("{p}.intermediate.dense"), hidden, inter)?,
                down: linear(&format!("{p}.output.dense"), inter, hidden)?,
                out_norm: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        let tok_vocab = tokenizer.get_vocab_size(true);
        if tok_vocab > vocab {
            return Err(Error::usage(format!(
                "the tokenizer in {} does not match its model: {tok_vocab} tokens, but {vocab} token vectors",
                dir.display()
            ))
            .hint("tokenizer.json and model.safetensors must come from the same model; download both again"));
        }
        // sentence-transformers' max_seq_length, else what the positions allow.
        let usable = positions.saturating_sub(position_offset).max(2);
        let max_tokens =
            super::read_capped(&dir.join("sentence_bert_config.json"), super::MAX_CONFIG)
                .ok()
                .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
                .and_then(|v| usize_of(&v, "max_seq_length"))
                .unwrap_or(usable)
                .clamp(2, usable);
        let mut tokenizer = tokenizer;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| Error::usage(format!("cannot set up the tokenizer: {e}")))?;
        Ok(Bert {
            tokenizer,
            word,
            position,
            token_type,
            vocab,
            positions,
            types,
            emb_norm,
            layers,
            hidden,
            heads,
            eps,
            max_tokens,
            position_offset,
        })
    }

    /// The size of each token's state (the rows of [`forward`](Self::forward)).
    pub(crate) fn hidden(&self) -> usize {
        self.hidden
    }

    /// A text (or a pair, for a cross-encoder) as token IDs and type IDs, with the model's
    /// special tokens, truncated to its length.
    pub(crate) fn encode(&self, text: &str, pair: Option<&str>) -> Result<(Vec<u32>, Vec<u32>)> {
        let enc = match pair {
            None => self.tokenizer.encode(text, true),
            Some(b) => self.tokenizer.encode((text, b), true),
        }
        .map_err(|e| Error::backend(format!("cannot tokenize a passage: {e}")))?;
        let types = if self.types == 1 {
            // One token type (RoBERTa): a pair's second text is type 0 too.
            vec![0; enc.get_ids().len()]
        } else {
            enc.get_type_ids().to_vec()
        };
        Ok((enc.get_ids().to_vec(), types))
    }

    /// The last hidden state of every token (`ids.len() × hidden`, row-major).
    pub(crate) fn forward(&self, ids: &[u32], types: &[u32]) -> Result<Vec<f32>> {
        let n = ids.len();
        let h = self.hidden;
        if n == 0 || n + self.position_offset > self.positions {
            return Err(Error::backend(format!(
                "cannot encode {n} tokens (the model reads 1 to {})",
                self.positions - self.position_offset.min(self.positions)
            )));
        }
        let mut x = vec![0.0f32; n * h];
        for (t, row) in x.chunks_exact_mut(h).enumerate() {
            let id = ids[t] as usize;
            let ty = types.get(t).copied().unwrap_or(0) as usize;
            if id >= self.vocab || ty >= self.types {
                return Err(Error::backend(format!(
                    "token {id} (type {ty}) is outside the model's vocabulary"
                )));
            }
            let w = &self.word[id * h..(id + 1) * h];
            let at = t + self.position_offset;
            let p = &self.position[at * h..(at + 1) * h];
            let y = &self.token_type[ty * h..(ty + 1) * h];
            for k in 0..h {
                row[k] = w[k] + p[k] + y[k];
            }
        }
        layer_norm(&mut x, &self.emb_norm, h, self.eps);
        let d = h / self.heads;
        let scale = 1.0 / (d as f32).sqrt();
        let mut scores = vec![0.0f32; n * n];
        let mut ctx = vec![0.0f32; n * h];
        for l in &self.layers {
            let q = l.q.apply(&x, n);
            let k = l.k.apply(&x, n);
            let v = l.v.apply(&x, n);
            for head in 0..self.heads {
                let off = head * d;
                // scores = Q_h K_h^T * scale
                gemm(
                    n,
                    d,
                    n,
                    scale,
                    &q[off..],
                    h as isize,
                    1,
                    &k[off..],
                    1,
                    h as isize,
                    0.0,
                    &mut scores,
                    n as isize,
                    1,
                );
                for row in scores.chunks_exact_mut(n) {
                    softmax(row);
                }
                // ctx_h = P V_h
                gemm(
                    n,
                    n,
                    d,
                    1.0,
                    &scores,
                    n as isize,
                    1,
                    &v[off..],
                    h as isize,
                    1,
                    0.0,
                    &mut ctx[off..],
                    h as isize,
                    1,
                );
            }
            let mut a = l.o.apply(&ctx, n);
            for (ai, xi) in a.iter_mut().zip(&x) {
                *ai += xi;
            }
            layer_norm(&mut a, &l.attn_norm, h, self.eps);
            let mut up = l.up.apply(&a, n);
            up.iter_mut().for_each(|u| *u = gelu(*u));
            let mut out = l.down.apply(&up, n);
            for (oi, ai) in out.iter_mut().zip(&a) {
                *oi += ai;
            }
            layer_norm(&mut out, &l.out_norm, h, self.eps);
            x = out;
        }
        Ok(x)
    }
}

impl Linear {
    /// The layer `name` (`name.weight` `[out, inp]`, `name.bias` `[out]`) of `w`.
    pub(super) fn read(w: &Weights, name: &str, inp: usize, out: usize) -> Result<Linear> {
        let tensor = |full: String, shape: &[usize]| -> Result<Vec<f32>> {
            let (got, values) = w.f32(&full)?;
            if got != shape {
                return Err(w
                    .damaged(&format!(
                        "tensor {full} has shape {got:?}, but config.json says {shape:?}"
                    ))
                    .hint("config.json and model.safetensors must come from the same model"));
            }
            Ok(values)
        };
        Ok(Linear {
            w: tensor(format!("{name}.weight"), &[out, inp])?,
            b: tensor(format!("{name}.bias"), &[out])?,
            inp,
            out,
        })
    }

    /// `x` (`n × inp`) → `n × out`.
    pub(super) fn apply(&self, x: &[f32], n: usize) -> Vec<f32> {
        let mut y: Vec<f32> = Vec::with_capacity(n * self.out);
        for _ in 0..n {
            y.extend_from_slice(&self.b);
        }
        // y += x W^T: W^T[p][j] = W[j][p], so its row stride is 1 and its column stride `inp`.
        gemm(
            n,
            self.inp,
            self.out,
            1.0,
            x,
            self.inp as isize,
            1,
            &self.w,
            1,
            self.inp as isize,
            1.0,
            &mut y,
            self.out as isize,
            1,
        );
        y
    }
}

/// `c = alpha a b + beta c` for an `m × k` `a` and a `k × n` `b`, with the given strides. The
/// slices start at the first element; strides are checked against their lengths.
#[allow(clippy::too_many_arguments)]
#[rustfmt::skip]
fn gemm(
    m: usize, k: usize, n: usize, alpha: f32,
    a: &[f32], rsa: isize, csa: isize,
    b: &[f32], rsb: isize, csb: isize,
    beta: f32, c: &mut [f32], rsc: isize, csc: isize,
) {
    let last = |rows: usize, cols: usize, rs: isize, cs: isize| {
        (rows.saturating_sub(1)) * rs as usize + (cols.saturating_sub(1)) * cs as usize
    };
    assert!(last(m, k, rsa, csa) < a.len());
    assert!(last(k, n, rsb, csb) < b.len());
    assert!(last(m, n, rsc, csc) < c.len());
    // SAFETY: every element the strides reach is inside its slice (checked above), and `c`
    // does not overlap `a` or `b` (it is borrowed mutably).
    unsafe {
        matrixmultiply::sgemm(
            m, k, n, alpha,
            a.as_ptr(), rsa, csa,
            b.as_ptr(), rsb, csb,
            beta, c.as_mut_ptr(), rsc, csc,
        );
    }
}

fn layer_norm(x: &mut [f32], norm: &Norm, h: usize, eps: f32) {
    for row in x.chunks_exact_mut(h) {
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&norm.g).zip(&norm.b) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    let inv = 1.0 / sum;
    row.iter_mut().for_each(|v| *v *= inv);
}

/// GELU as BERT defines it: `x Φ(x)`, with the error function.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// The error function, to about 1e-7 (Abramowitz and Stegun 7.1.26 is too coarse for golden
/// vectors; this is the W. J. Cody-style rational fit used by many libms, in f64).
fn erf(x: f32) -> f32 {
    let x = f64::from(x);
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    // Numerical Recipes' erfc approximation, fractional error below 1.2e-7.
    let y = t
        * (-x * x - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    let erf = 1.0 - y;
    (if x >= 0.0 { erf } else { -erf }) as f32
}

#[cfg(test)]
mod tests {
    use super::{erf, gemm, softmax};

    #[test]
    fn erf_matches_known_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (-1.5, -0.966_105_1),
            (3.0, 0.999_977_9),
        ] {
            assert!((erf(x) - want).abs() < 1e-6, "erf({x}) = {}", erf(x));
        }
    }

    #[test]
    fn gemm_with_a_transposed_operand() {
        // a = [[1,2],[3,4]], w = [[5,6],[7,8]] stored [out, in]; a w^T = [[17,23],[39,53]].
        let a = [1.0, 2.0, 3.0, 4.0];
        let w = [5.0, 6.0, 7.0, 8.0];
        let mut c = [0.0; 4];
        gemm(2, 2, 2, 1.0, &a, 2, 1, &w, 1, 2, 0.0, &mut c, 2, 1);
        assert_eq!(c, [17.0, 23.0, 39.0, 53.0]);
    }

    #[test]
    fn softmax_sums_to_one() {
        let mut r = [1.0, 2.0, 3.0];
        softmax(&mut r);
        assert!((r.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(r[2] > r[1] && r[1] > r[0]);
    }
}
