//! STUB until the kbtext branch lands.
use super::chunk::Kind;
pub(crate) struct Note {
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) ordering: Option<String>,
    pub(crate) body: String,
    pub(crate) first_line: u32,
    pub(crate) hash: String,
}
pub(crate) fn hash(text: &str) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    d.as_ref()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
pub(crate) fn read(rel: &str, text: &str, _kind: Kind) -> Note {
    Note {
        id: rel.to_owned(),
        title: rel.to_owned(),
        ordering: None,
        body: text.to_owned(),
        first_line: 1,
        hash: hash(text),
    }
}
