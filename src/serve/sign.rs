//! Capability URLs for notes. The page authenticates every request with the bearer token in an
//! `Authorization` header (kept in the tab's `sessionStorage`), but a source link is a plain
//! link, which carries no header. So each source in an answer gets a `url`
//! (`/kb/NAME/note/ID?sig=…`) whose `sig` is an HMAC-SHA256 of that exact path under a key
//! made at server start: it opens that one note, and nothing else (a restart ends every such
//! link). A copy of an attachment kept in a chat (`/chats/ID/files/NAME`) gets such a link
//! the same way. No cookie is used: browsers send cookies to every port of a host, so any local
//! listener the browser visited would receive one.

use ring::hmac;

use super::http::query_param;

pub(super) struct Signer {
    key: hmac::Key,
}

impl Signer {
    /// A signer with a key of its own, random.
    pub(super) fn new() -> Signer {
        let mut bytes = [0u8; 32];
        rand::Rng::fill(&mut rand::rng(), &mut bytes[..]);
        Signer {
            key: hmac::Key::new(hmac::HMAC_SHA256, &bytes),
        }
    }

    /// The signed URL of note `id` of knowledge base `kb`.
    pub(super) fn note_url(&self, kb: &str, id: &str) -> String {
        let mut path = format!("/kb/{}/note", encode(kb));
        for part in id.split('/') {
            path.push('/');
            path.push_str(&encode(part));
        }
        self.signed(path)
    }

    /// The signed URL of the copy `name` kept in chat `chat` (`--keep-attachments`).
    pub(super) fn file_url(&self, chat: &str, name: &str) -> String {
        self.signed(format!("/chats/{}/files/{}", encode(chat), encode(name)))
    }

    fn signed(&self, path: String) -> String {
        let tag = hmac::sign(&self.key, path.as_bytes());
        let sig: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        format!("{path}?sig={sig}")
    }

    /// Does the query carry a valid `sig` for this exact path (compared in constant time)?
    pub(super) fn valid(&self, path: &str, query: &str) -> bool {
        let Some(sig) = query_param(query, "sig") else {
            return false;
        };
        let Some(tag) = unhex(&sig) else {
            return false;
        };
        hmac::verify(&self.key, path.as_bytes(), &tag).is_ok()
    }
}

/// A path segment percent-encoded: everything but the unreserved characters, so the browser
/// sends it back byte for byte as signed.
fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Give every attachment with a kept copy in `attachments` (of chat `chat`) its signed `link`
/// (`url` is a web page's own address).
pub(super) fn sign_kept(signer: &Signer, chat: &str, attachments: Option<&mut serde_json::Value>) {
    let Some(serde_json::Value::Array(list)) = attachments else {
        return;
    };
    for a in list {
        let Some(kept) = a.get("kept").and_then(serde_json::Value::as_str) else {
            continue;
        };
        let link = signer.file_url(chat, kept);
        if let serde_json::Value::Object(fields) = a {
            fields.insert("link".into(), serde_json::Value::String(link));
        }
    }
}

/// Give every source in `sources` (an array of `{kb, id, …}`) its signed `url`.
pub(super) fn sign_sources(signer: &Signer, sources: Option<&mut serde_json::Value>) {
    let Some(serde_json::Value::Array(list)) = sources else {
        return;
    };
    for s in list {
        let url = match (
            s.get("kb").and_then(serde_json::Value::as_str),
            s.get("id").and_then(serde_json::Value::as_str),
        ) {
            (Some(kb), Some(id)) => signer.note_url(kb, id),
            _ => continue,
        };
        if let serde_json::Value::Object(fields) = s {
            fields.insert("url".into(), serde_json::Value::String(url));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signed_url_opens_its_own_path_only() {
        let s = Signer::new();
        let url = s.note_url("notes", "c3d4e5f60");
        let (path, query) = url.split_once('?').unwrap();
        assert_eq!(path, "/kb/notes/note/c3d4e5f60");
        assert!(s.valid(path, query));
        assert!(s.valid(path, &format!("format=json&{query}")));
        // Another path, another key, a changed or missing signature: refused.
        assert!(!s.valid("/kb/notes/note/d4e5f6071", query));
        assert!(!s.valid("/kb/notes/search", query));
        assert!(!s.valid("/chats", query));
        assert!(!Signer::new().valid(path, query));
        let mut bad = query.to_owned();
        let last = bad.pop().unwrap();
        bad.push(if last == '0' { '1' } else { '0' });
        for q in [
            bad.as_str(),
            "",
            "sig=",
            "sig=zz",
            &query[..query.len() - 2],
        ] {
            assert!(!s.valid(path, q), "{q}");
        }
    }

    #[test]
    fn paths_are_encoded_as_the_browser_sends_them() {
        let s = Signer::new();
        let url = s.note_url("my-kb", "sub dir/ä?.md");
        assert!(
            url.starts_with("/kb/my-kb/note/sub%20dir/%C3%A4%3F.md?sig="),
            "{url}"
        );
        let mut sources = serde_json::json!([{"kb": "k", "id": "1"}, {"x": 1}]);
        sign_sources(&s, Some(&mut sources));
        assert!(
            sources[0]["url"]
                .as_str()
                .unwrap()
                .starts_with("/kb/k/note/1?sig=")
        );
        assert!(sources[1].get("url").is_none());
    }
}
