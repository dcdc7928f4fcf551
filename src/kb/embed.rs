//! STUB until the kbembed branch lands.
use crate::config::Config;
use crate::error::{Error, Result};
use std::time::Instant;
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Purpose {
    Document,
    Query,
}
pub(crate) struct Input<'a> {
    pub(crate) text: &'a str,
    pub(crate) title: Option<&'a str>,
}
pub(crate) struct Embedder {
    spec: String,
}
impl Embedder {
    pub(crate) fn new(spec: &str, _d: Option<u32>, _c: &Config) -> Result<Embedder> {
        Ok(Embedder {
            spec: spec.to_owned(),
        })
    }
    pub(crate) fn spec(&self) -> &str {
        &self.spec
    }
    pub(crate) fn max_batch(&self) -> usize {
        64
    }
    pub(crate) fn max_batch_tokens(&self) -> usize {
        100_000
    }
    pub(crate) fn max_input_tokens(&self) -> usize {
        2048
    }
    pub(crate) fn embed(
        &self,
        _i: &[Input<'_>],
        _p: Purpose,
        _d: Option<Instant>,
    ) -> Result<Vec<Vec<f32>>> {
        Err(Error::backend("stub"))
    }
}
pub(crate) fn batches(
    tokens: &[usize],
    max_count: usize,
    _max_tokens: usize,
) -> Vec<std::ops::Range<usize>> {
    (0..tokens.len())
        .step_by(max_count)
        .map(|s| s..(s + max_count).min(tokens.len()))
        .collect()
}
