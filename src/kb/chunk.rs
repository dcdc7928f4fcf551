//! STUB until the kbtext branch lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Markdown,
    Text,
}
pub(crate) struct Chunk {
    pub(crate) heading: String,
    pub(crate) start_line: u32,
    pub(crate) end_line: u32,
    pub(crate) text: String,
}
pub(crate) const DEFAULT_BUDGET: usize = 500;
pub(crate) fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}
pub(crate) fn split(body: &str, first_line: u32, _kind: Kind, _budget: usize) -> Vec<Chunk> {
    let lines = body.lines().count() as u32;
    if body.trim().is_empty() {
        return Vec::new();
    }
    vec![Chunk {
        heading: String::new(),
        start_line: first_line,
        end_line: first_line + lines.saturating_sub(1),
        text: body.to_owned(),
    }]
}
