//! Attached files the model is given whole (images and PDFs): what one is, told from its
//! first bytes, and the forms the protocols carry it in (base64, a data URL, a line that says
//! what was attached). Which backend takes which, and how large, is `attach`.

use std::sync::Arc;

/// An image or PDF attached to a message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Attachment {
    /// As shown: the path relative to the working directory (`photos/cat.png`).
    pub(crate) name: String,
    /// `image/png`, `image/jpeg`, `image/webp`, `image/gif` or `application/pdf`.
    pub(crate) media_type: String,
    pub(crate) size: u64,
    /// Lowercase hex SHA-256 of the bytes.
    pub(crate) sha256: String,
    /// The bytes, when they are sent this turn; `None` for an attachment of an earlier turn,
    /// which is described in a line of text instead.
    pub(crate) data: Option<Data>,
    /// The copy kept in the chat's folder (`--keep-attachments`): its file name there.
    pub(crate) kept: Option<String>,
}

/// The bytes of an attachment, shared (a turn to several models holds them once). Shown by
/// length only.
#[derive(Clone, PartialEq)]
pub(crate) struct Data(pub(crate) Arc<Vec<u8>>);

impl std::fmt::Debug for Data {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Data({} bytes)", self.0.len())
    }
}

/// The kinds `ai` sends, by media type.
pub(crate) const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "image/gif"];
pub(crate) const PDF: &str = "application/pdf";

/// The media type of `bytes` by their signature (magic bytes), whatever the file is called.
pub(crate) fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else if bytes.starts_with(b"%PDF-") {
        Some(PDF)
    } else {
        None
    }
}

/// The media type a file's extension claims (for telling a damaged or misnamed file apart).
pub(crate) fn by_extension(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "gif" => "image/gif",
        "pdf" => PDF,
        _ => return None,
    })
}

/// `PNG image`, `PDF`: for messages.
pub(crate) fn kind_name(media_type: &str) -> &'static str {
    match media_type {
        "image/png" => "PNG image",
        "image/jpeg" => "JPEG image",
        "image/webp" => "WebP image",
        "image/gif" => "GIF image",
        PDF => "PDF",
        _ => "file",
    }
}

impl Attachment {
    /// Describe `bytes` attached as `name`; `None` when they are neither an image nor a PDF.
    pub(crate) fn of_bytes(name: String, bytes: Vec<u8>) -> Option<Attachment> {
        let media_type = sniff(&bytes)?;
        Some(Attachment {
            name,
            media_type: media_type.to_owned(),
            size: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
            data: Some(Data(Arc::new(bytes))),
            kept: None,
        })
    }

    pub(crate) fn is_image(&self) -> bool {
        self.media_type.starts_with("image/")
    }

    /// The bytes sent this turn (empty for an earlier turn's attachment).
    pub(crate) fn bytes(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.0.as_slice())
    }

    /// The bytes in standard base64, as every protocol carries them.
    pub(crate) fn base64(&self) -> String {
        base64(self.bytes())
    }

    /// `data:image/png;base64,…` (OpenAI `image_url` and `file_data`).
    pub(crate) fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.base64())
    }

    /// The file name alone (`cat.png`), for protocols that name a document.
    pub(crate) fn file_name(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }

    /// One line that says what was attached, for a turn that does not carry the bytes:
    /// `[attached earlier: photo.png, image/png, 1.2 MiB]`.
    pub(crate) fn note(&self, earlier: bool) -> String {
        format!(
            "[attached{}: {}, {}, {}]",
            if earlier { " earlier" } else { "" },
            crate::fmt::one_line(&self.name, 200),
            self.media_type,
            crate::fmt::human_size(self.size)
        )
    }
}

/// `--dry-run`: every string of a request body that carries one of `attachments` (its base64,
/// or its data URL) shortened to its start, size and hash, so no megabytes reach the terminal;
/// the body stays valid JSON.
pub(crate) fn shorten_in(body: &mut serde_json::Value, attachments: &[&Attachment]) {
    use serde_json::Value;
    if attachments.is_empty() {
        return;
    }
    let forms: Vec<(String, String)> = attachments
        .iter()
        .flat_map(|a| {
            let b64 = a.base64();
            let short = shortened(a, &b64);
            [
                (
                    a.data_url(),
                    format!("data:{};base64,{short}", a.media_type),
                ),
                (b64, short),
            ]
        })
        .collect();
    fn walk(v: &mut Value, forms: &[(String, String)]) {
        match v {
            Value::String(s) => {
                if let Some((_, short)) = forms.iter().find(|(long, _)| long == s) {
                    *s = short.clone();
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|v| walk(v, forms)),
            Value::Object(o) => o.values_mut().for_each(|v| walk(v, forms)),
            _ => {}
        }
    }
    walk(body, &forms);
}

/// `iVBORw0K…(123,456 bytes, sha256 ab12cd34…)`.
fn shortened(a: &Attachment, b64: &str) -> String {
    format!(
        "{}…({} bytes, sha256 {}…)",
        b64.get(..8).unwrap_or(b64),
        grouped(a.size),
        a.sha256.get(..12).unwrap_or(&a.sha256)
    )
}

/// `123456` → `123,456`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Lowercase hex SHA-256.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Standard base64 with padding.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(ABC[(n >> 18) as usize & 63] as char);
        out.push(ABC[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            ABC[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            ABC[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn sniffs_by_signature_not_by_name() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(sniff(b"GIF89a.."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WAVEfmt "), None);
        assert_eq!(sniff(b"%PDF-1.7\n"), Some(PDF));
        assert_eq!(sniff(b"hello"), None);
        assert_eq!(sniff(b""), None);
        assert_eq!(by_extension("a/B.JPG"), Some("image/jpeg"));
        assert_eq!(by_extension("notes.txt"), None);
    }

    #[test]
    fn sha256_and_note() {
        let a = Attachment::of_bytes("p/cat.png".into(), b"\x89PNG\r\n\x1a\nxyz".to_vec()).unwrap();
        assert_eq!(a.size, 11);
        assert_eq!(a.sha256.len(), 64);
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            a.note(true),
            "[attached earlier: p/cat.png, image/png, 11 B]"
        );
        assert_eq!(a.file_name(), "cat.png");
        assert!(
            a.data_url()
                .starts_with("data:image/png;base64,iVBORw0KGgp4eXo")
        );
    }
}
