//! `-F https://…`: a web page named on the command line, fetched and turned into readable text
//! (`html2text`), then quoted into the prompt as a `-F` file is. Only the user's own `-F` (or
//! `/file` in `ai -i`) reaches this: never a URL a model, a note or a tool names.

use std::io::Read;
use std::time::Duration;

use ureq::ResponseExt;

use crate::error::{Error, Result};
use crate::fmt::human_size;

/// The most of a page that is downloaded.
pub(crate) const MAX_DOWNLOAD: u64 = 5 * 1024 * 1024;
/// The most text a page may become (the limit of one `-F` file).
pub(crate) const MAX_TEXT: usize = 1024 * 1024;
/// Redirects followed before giving up.
pub(crate) const MAX_REDIRECTS: u32 = 5;
/// The whole fetch, from connecting to the last byte.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A page, fetched and made text.
#[derive(Debug)]
pub(crate) struct Page {
    /// As given on the command line.
    pub(crate) given: String,
    /// Where it was read from, after redirects.
    pub(crate) url: String,
    /// `text/html`, `text/plain`, …
    pub(crate) media_type: String,
    /// Bytes downloaded.
    pub(crate) size: u64,
    /// SHA-256 of those bytes.
    pub(crate) sha256: String,
    pub(crate) text: String,
}

/// Is this `-F` value a web address (`http://` or `https://`)?
pub(crate) fn is_url(given: &str) -> bool {
    let lower = given.get(..8).unwrap_or(given).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// Fetch `given` and make it text: HTML through `html2text`; plain text, Markdown and JSON as
/// they are. Anything else, an error status, or a page over the limits is a clear error.
pub(crate) fn fetch(given: &str) -> Result<Page> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(MAX_REDIRECTS)
        .timeout_global(Some(TIMEOUT))
        .user_agent(concat!("ai/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let shown = crate::fmt::one_line(given, 300);
    let unreachable = |e: ureq::Error| {
        let why = match e {
            ureq::Error::TooManyRedirects => {
                format!("it redirects more than {MAX_REDIRECTS} times")
            }
            ureq::Error::HostNotFound => "the host was not found".to_owned(),
            ureq::Error::Timeout(_) => format!("no answer within {} s", TIMEOUT.as_secs()),
            e => crate::fmt::one_line(&e.to_string(), 200),
        };
        Error::usage(format!("cannot fetch -F {shown}: {why}"))
            .hint("check the address (and that it opens in a browser), or save the page and give the file")
    };
    let resp = agent
        .get(given)
        .header("Accept", "text/html, text/plain;q=0.9, */*;q=0.1")
        .call()
        .map_err(unreachable)?;
    let url = resp.get_uri().to_string();
    let status = resp.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(Error::usage(format!(
            "cannot fetch -F {shown}: the server answered {status}{}",
            if url != given {
                format!(" (at {})", crate::fmt::one_line(&url, 300))
            } else {
                String::new()
            }
        ))
        .hint("check the address; a page behind a login cannot be fetched (save it and give the file)"));
    }
    let media_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    let html = matches!(media_type.as_str(), "text/html" | "application/xhtml+xml");
    let plain = media_type.starts_with("text/")
        || matches!(media_type.as_str(), "application/json" | "application/xml");
    if !html && !plain {
        let what = if media_type.is_empty() {
            "no type".to_owned()
        } else {
            crate::fmt::one_line(&media_type, 100)
        };
        return Err(Error::usage(format!(
            "cannot use -F {shown}: it is not a web page ({what})"
        ))
        .hint("download it and give the file instead (an image or a PDF is attached whole): curl -LO URL"));
    }
    let mut bytes = Vec::new();
    resp.into_body()
        .into_reader()
        .take(MAX_DOWNLOAD + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            Error::usage(format!(
                "cannot fetch -F {shown}: {}",
                crate::fmt::one_line(&e.to_string(), 200)
            ))
        })?;
    if bytes.len() as u64 > MAX_DOWNLOAD {
        return Err(Error::usage(format!(
            "cannot use -F {shown}: the page is larger than {}, the most ai downloads",
            human_size(MAX_DOWNLOAD)
        ))
        .hint("save the part that matters to a file and give that"));
    }
    let sha256 = crate::media::sha256_hex(&bytes);
    let size = bytes.len() as u64;
    let text = if html {
        readable(&bytes)
    } else {
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let text = text.trim().to_owned();
    if text.len() > MAX_TEXT {
        return Err(Error::usage(format!(
            "cannot use -F {shown}: its text is {}, more than the {} of one -F file",
            human_size(text.len() as u64),
            human_size(MAX_TEXT as u64)
        ))
        .hint("save the part that matters to a file and give that"));
    }
    if text.is_empty() {
        return Err(Error::usage(format!(
            "cannot use -F {shown}: the page has no text (it may be built by a script)"
        ))
        .hint("open it in a browser, save what it shows, and give that file"));
    }
    Ok(Page {
        given: given.to_owned(),
        url,
        media_type,
        size,
        sha256,
        text,
    })
}

/// HTML as readable text: headings as `#` lines, lists, tables laid out; links as their text;
/// no scripts or styles. (The same settings the knowledge bases use for HTML notes.)
pub(crate) fn readable(html: &[u8]) -> String {
    html2text::config::plain()
        .link_footnotes(false)
        .allow_width_overflow()
        .string_from_read(html, 10_000)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        assert!(is_url("https://example.org/a"));
        assert!(is_url("HTTP://x"));
        assert!(!is_url("httpfile.txt"));
        assert!(!is_url("./https://x"));
        assert!(!is_url("ftp://x"));
    }

    #[test]
    fn html_becomes_text_without_scripts() {
        let t = readable(
            b"<html><head><title>T</title><script>alert(1)</script><style>p{}</style></head>\
              <body><h1>Heading</h1><p>Some <b>bold</b> text and <a href='/x'>a link</a>.</p>\
              <ul><li>one</li><li>two</li></ul></body></html>",
        );
        assert!(t.contains("# Heading"), "{t}");
        assert!(t.contains("Some **bold** text and [a link]."), "{t}");
        assert!(t.contains("one") && t.contains("two"), "{t}");
        assert!(!t.contains("alert") && !t.contains("p{}"), "{t}");
    }
}
