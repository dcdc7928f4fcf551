//! Notes that are not plain text: HTML pages and PDF files, read as text with their locations.
//!
//! HTML is rendered to text by `html2text`, its headings as `#` lines, so passages carry the
//! heading they are under, as a markdown note's do. A PDF's text layer is extracted page by page
//! (`pdf-extract`, cargo feature `pdf`) into sections headed `p. N`, so a source says the page;
//! its title is the document information dictionary's `/Title`, else the XMP metadata's
//! `dc:title`, when either says one.
//!
//! A PDF is parsed in a child process (`ai __pdf-text`) with its address space, CPU time and
//! wall time bounded: a hostile file (a compression bomb, a page tree of millions of pages or
//! one that loops, objects nested a million deep) can make a parser allocate, spin or overflow
//! its stack, and in the child that only ends the child. Whatever the child does not give back
//! as text is a reason the file is skipped ([`Unread`]).

use std::io::Read;

/// The most pages of one PDF that are read (the rest of a longer one is left out).
#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
pub(crate) const MAX_PAGES: usize = 2_000;

/// Why a document gave no text.
#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unread {
    /// Encrypted with a password.
    Encrypted,
    /// No text layer (a scan), or no text at all.
    NoText,
    /// Not a PDF the parser can read, or one that broke it.
    Damaged,
    /// Over the memory or time the parser may take.
    TooCostly,
    /// This `ai` was built without the `pdf` feature.
    Unsupported,
}

#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
impl Unread {
    /// As `ai kb stats --skipped` says it.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Unread::Encrypted => "encrypted",
            Unread::NoText => "no text layer (scanned?)",
            Unread::Damaged => "damaged or not readable",
            Unread::TooCostly => "too costly to read (memory or time limit)",
            Unread::Unsupported => "PDF support not built in",
        }
    }

    pub(crate) fn from_reason(reason: &str) -> Unread {
        [
            Unread::Encrypted,
            Unread::NoText,
            Unread::TooCostly,
            Unread::Unsupported,
        ]
        .into_iter()
        .find(|u| u.reason() == reason)
        .unwrap_or(Unread::Damaged)
    }
}

/// An HTML page as markdown-like text: its `<title>` (if any) and its text, headings as `#`
/// lines, links as their text in brackets (no URL), no scripts or styles.
pub(crate) fn html(text: &str) -> (Option<String>, String) {
    let title = html_title(text);
    // Emphasis unmarked (`**`, `*` would be noise in passages); a link is its text in brackets.
    let body = html2text::config::plain_no_decorate()
        .link_footnotes(false)
        .allow_width_overflow()
        .string_from_read(text.as_bytes(), 10_000)
        .unwrap_or_default();
    (title, body)
}

/// The text of the first `<title>` element, entities for `&`, `<`, `>`, quotes undone.
fn html_title(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let raw = text.get(start..end)?;
    let t = raw
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    (!t.is_empty()).then_some(t)
}

/// A PDF's title (if it says one) and its text as markdown-like sections, one a page
/// (`## p. 3`), pages without text left out. Run in a bounded child process.
pub(crate) fn pdf(bytes: &[u8]) -> Result<(Option<String>, String), Unread> {
    let (title, pages) = pdf_pages(bytes)?;
    let mut out = String::new();
    for (i, page) in pages.iter().enumerate() {
        let text = page.trim();
        if text.is_empty() {
            continue;
        }
        out.push_str(&format!("## p. {}\n\n", i + 1));
        // A line of the page that looks like a heading or a fence would cut the page's section.
        for line in text.lines() {
            let l = line.trim_start();
            if l.starts_with('#') || l.starts_with("```") || l.starts_with("~~~") {
                out.push('\\');
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.push('\n');
    }
    if out.trim().is_empty() {
        return Err(Unread::NoText);
    }
    Ok((title, out))
}

/// A title as a document's metadata gave it: one line, whitespace collapsed, at most 200
/// characters; `None` when nothing is left.
#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
fn clean_title(raw: &str) -> Option<String> {
    let t: String = raw
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(200)
        .collect();
    (!t.is_empty()).then_some(t)
}

/// The text of the first `dc:title` of an XMP packet (its `rdf:li`, or the element's own
/// text), XML's five entities undone.
#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
fn xmp_title(xmp: &str) -> Option<String> {
    let start = xmp.find("<dc:title")?;
    let end = start + xmp[start..].find("</dc:title>")?;
    let inner = &xmp[start..end];
    let inner = &inner[inner.find('>')? + 1..];
    let text = match inner.find("<rdf:li") {
        Some(li) => {
            let li = &inner[li..];
            let body = &li[li.find('>')? + 1..];
            &body[..body.find("</rdf:li>").unwrap_or(body.len())]
        }
        None => inner,
    };
    if text.contains('<') {
        return None;
    }
    clean_title(
        &text
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

#[cfg(not(feature = "pdf"))]
fn pdf_pages(_bytes: &[u8]) -> Result<(Option<String>, Vec<String>), Unread> {
    Err(Unread::Unsupported)
}

/// The limits of the child that parses a PDF.
#[cfg(feature = "pdf")]
mod limits {
    /// Address space: a compression bomb stops here.
    pub(super) const MEMORY: u64 = 1024 * 1024 * 1024;
    /// CPU seconds: a page tree that loops stops here.
    pub(super) const CPU_SECONDS: u64 = 20;
    /// Wall time without any CPU time used: a child that waits rather than computes stops here.
    /// A child that computes is bounded by its CPU seconds instead, however slowly a loaded
    /// machine gives it them (a wall limit on the whole run turned a readable PDF into "too
    /// costly" on a busy machine, so the same note was indexed or not depending on the load).
    pub(super) const IDLE: std::time::Duration = std::time::Duration::from_secs(40);
    /// Wall time in all, a backstop where CPU time cannot be read (no /proc) or a child
    /// computes a tick now and then but mostly waits.
    pub(super) const WALL: std::time::Duration = std::time::Duration::from_secs(600);
    /// The most bytes of text the child may answer.
    pub(super) const OUTPUT: usize = 8 * 1024 * 1024;
}

#[cfg(feature = "pdf")]
fn pdf_pages(bytes: &[u8]) -> Result<(Option<String>, Vec<String>), Unread> {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::time::Instant;

    let exe = std::env::current_exe().map_err(|_| Unread::Damaged)?;
    let mut cmd = Command::new(exe);
    cmd.arg("__pdf-text")
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // SAFETY: only async-signal-safe calls (setrlimit) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = |resource, value: u64| {
                let r = libc::rlimit {
                    rlim_cur: value as libc::rlim_t,
                    rlim_max: value as libc::rlim_t,
                };
                libc::setrlimit(resource, &r);
            };
            limit(libc::RLIMIT_AS, limits::MEMORY);
            limit(libc::RLIMIT_CPU, limits::CPU_SECONDS);
            limit(libc::RLIMIT_CORE, 0);
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|_| Unread::Damaged)?;
    let mut stdin = child.stdin.take();
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&input);
        }
    });
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(s) = stdout {
            let _ = s.take(limits::OUTPUT as u64 + 1).read_to_end(&mut out);
        }
        out
    });
    let started = Instant::now();
    // The CPU time the child had used when last looked at, and when that was.
    let mut cpu = (cpu_ticks(child.id()), Instant::now());
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < limits::WALL && !idle(child.id(), &mut cpu) => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let Some(status) = status else {
        return Err(Unread::TooCostly);
    };
    if !status.success() {
        use std::os::unix::process::ExitStatusExt;
        // Killed by its CPU limit (SIGXCPU) or aborted when an allocation failed under its
        // address-space limit (SIGABRT; Rust's out-of-memory handler).
        return Err(match status.signal() {
            Some(libc::SIGXCPU | libc::SIGKILL | libc::SIGABRT) => Unread::TooCostly,
            _ => Unread::Damaged,
        });
    }
    if out.len() > limits::OUTPUT {
        return Err(Unread::TooCostly);
    }
    match serde_json::from_slice::<Answer>(&out) {
        Ok(Answer::Document { title, pages }) => Ok((title, pages)),
        Ok(Answer::Pages(p)) => Ok((None, p)),
        Ok(Answer::Unread(r)) => Err(Unread::from_reason(&r)),
        Err(_) => Err(Unread::Damaged),
    }
}

/// Whether the child has used no CPU time for [`limits::IDLE`]; `last` is the CPU time it had
/// used when last looked at, and when that was. Unknown CPU time (no /proc) counts as none.
#[cfg(feature = "pdf")]
fn idle(pid: u32, last: &mut (Option<u64>, std::time::Instant)) -> bool {
    if last.1.elapsed() < limits::IDLE {
        return false;
    }
    let now = cpu_ticks(pid);
    if now.is_none() || now == last.0 {
        return true;
    }
    *last = (now, std::time::Instant::now());
    false
}

/// The CPU time (user and system, in clock ticks) a process has used, from `/proc/PID/stat`;
/// `None` where that cannot be read.
#[cfg(feature = "pdf")]
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_cpu_ticks(&stat)
}

/// utime + stime of a `/proc/PID/stat` line: fields 14 and 15, counted after the command name
/// (which may hold spaces and parentheses, so the fields start after its last `)`).
#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // fields[0] is field 3 (the state).
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// What the child answers.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Answer {
    /// Its title (if it says one) and its pages' text.
    Document {
        title: Option<String>,
        pages: Vec<String>,
    },
    /// Pages without a title (what a child of an earlier version answered).
    Pages(Vec<String>),
    Unread(String),
}

/// `ai __pdf-text`: the child. Reads a PDF on stdin, answers its pages' text as JSON on stdout.
/// Exit code 0 when it answered (text or a reason).
pub fn pdf_child() -> i32 {
    let mut bytes = Vec::new();
    if std::io::stdin()
        .take(super::scan::MAX_DOCUMENT_BYTES + 1)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return 1;
    }
    let answer = match extract(&bytes) {
        Ok((title, pages)) => Answer::Document { title, pages },
        Err(u) => Answer::Unread(u.reason().to_owned()),
    };
    let Ok(json) = serde_json::to_vec(&answer) else {
        return 1;
    };
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    i32::from(out.write_all(&json).and_then(|()| out.flush()).is_err())
}

#[cfg(not(feature = "pdf"))]
fn extract(_bytes: &[u8]) -> Result<(Option<String>, Vec<String>), Unread> {
    Err(Unread::Unsupported)
}

/// The title a PDF's metadata says: `/Title` of the document information dictionary (the
/// trailer's `/Info`), else `dc:title` of the XMP stream the catalog's `/Metadata` names (read
/// only when its encoded stream is under 1 MiB).
#[cfg(feature = "pdf")]
fn pdf_title(doc: &pdf_extract::Document) -> Option<String> {
    let info = doc
        .trailer
        .get_deref(b"Info", doc)
        .and_then(|o| o.as_dict())
        .ok();
    if let Some(t) = info
        .and_then(|d| d.get_deref(b"Title", doc).ok())
        .and_then(|o| pdf_extract::decode_text_string(o).ok())
        .and_then(|t| clean_title(&t))
    {
        return Some(t);
    }
    let stream = doc
        .catalog()
        .ok()?
        .get_deref(b"Metadata", doc)
        .ok()?
        .as_stream()
        .ok()?;
    if stream.content.len() > 1 << 20 {
        return None;
    }
    let xml = stream
        .decompressed_content()
        .unwrap_or_else(|_| stream.content.clone());
    xmp_title(&String::from_utf8_lossy(&xml[..xml.len().min(4 << 20)]))
}

#[cfg(feature = "pdf")]
fn extract(bytes: &[u8]) -> Result<(Option<String>, Vec<String>), Unread> {
    use pdf_extract::Document;
    // The parser may refuse an encrypted file before it can say so.
    let encrypted = memchr::memmem::find(bytes, b"/Encrypt").is_some();
    let mut doc = Document::load_mem(bytes).map_err(|_| {
        if encrypted {
            Unread::Encrypted
        } else {
            Unread::Damaged
        }
    })?;
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(Unread::Encrypted);
    }
    let mut dev = bounded::Pages::new();
    // One walk over the pages; the device stops it after the pages and text it may take.
    let done = pdf_extract::output_doc(&doc, &mut dev);
    let (pages, stopped) = dev.finish();
    if done.is_err() && !stopped && pages.iter().all(|p| p.trim().is_empty()) {
        return Err(Unread::Damaged);
    }
    Ok((pdf_title(&doc), pages))
}

/// An output device that keeps each page's text apart and stops the walk after [`MAX_PAGES`]
/// pages or [`super::scan::MAX_FILE_BYTES`] of text.
#[cfg(feature = "pdf")]
mod bounded {
    use std::cell::RefCell;
    use std::rc::Rc;

    use pdf_extract::{
        ColorSpace, ConvertToFmt, MediaBox, OutputDev, OutputError, Path, PlainTextOutput,
        Transform,
    };

    /// The text of the page being read, shared with the plain-text device that writes it.
    #[derive(Clone, Default)]
    pub(super) struct Sink(Rc<RefCell<String>>);

    impl std::fmt::Write for Sink {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.borrow_mut().push_str(s);
            Ok(())
        }
    }

    impl ConvertToFmt for Sink {
        type Writer = Sink;
        fn convert(self) -> Sink {
            self
        }
    }

    pub(super) struct Pages {
        text: PlainTextOutput<Sink>,
        sink: Sink,
        pages: Vec<String>,
        bytes: usize,
        stopped: bool,
    }

    impl Pages {
        pub(super) fn new() -> Pages {
            let sink = Sink::default();
            Pages {
                text: PlainTextOutput::new(sink.clone()),
                sink,
                pages: Vec::new(),
                bytes: 0,
                stopped: false,
            }
        }

        /// The pages read (a page the walk broke off in too), and whether it was stopped.
        pub(super) fn finish(mut self) -> (Vec<String>, bool) {
            let rest = std::mem::take(&mut *self.sink.0.borrow_mut());
            if !rest.is_empty() {
                self.pages.push(rest);
            }
            (self.pages, self.stopped)
        }
    }

    impl OutputDev for Pages {
        fn begin_page(
            &mut self,
            page_num: u32,
            media_box: &MediaBox,
            art_box: Option<(f64, f64, f64, f64)>,
        ) -> Result<(), OutputError> {
            if self.pages.len() >= super::MAX_PAGES
                || self.bytes > super::super::scan::MAX_FILE_BYTES as usize
            {
                self.stopped = true;
                return Err(OutputError::FormatError(std::fmt::Error));
            }
            self.text.begin_page(page_num, media_box, art_box)
        }
        fn end_page(&mut self) -> Result<(), OutputError> {
            let r = self.text.end_page();
            let page = std::mem::take(&mut *self.sink.0.borrow_mut());
            self.bytes += page.len();
            self.pages.push(page);
            r
        }
        fn output_character(
            &mut self,
            trm: &Transform,
            width: f64,
            spacing: f64,
            font_size: f64,
            char: &str,
        ) -> Result<(), OutputError> {
            self.text
                .output_character(trm, width, spacing, font_size, char)
        }
        fn begin_word(&mut self) -> Result<(), OutputError> {
            self.text.begin_word()
        }
        fn end_word(&mut self) -> Result<(), OutputError> {
            self.text.end_word()
        }
        fn end_line(&mut self) -> Result<(), OutputError> {
            self.text.end_line()
        }
        fn stroke(
            &mut self,
            ctm: &Transform,
            colorspace: &ColorSpace,
            color: &[f64],
            path: &Path,
        ) -> Result<(), OutputError> {
            self.text.stroke(ctm, colorspace, color, path)
        }
        fn fill(
            &mut self,
            ctm: &Transform,
            colorspace: &ColorSpace,
            color: &[f64],
            path: &Path,
        ) -> Result<(), OutputError> {
            self.text.fill(ctm, colorspace, color, path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_keeps_headings_and_text_without_markup() {
        let (title, body) = html(
            "<html><head><title>The &amp; page</title><style>p{color:red}</style>\
             <script>var x = 1;</script></head><body><h1>Setup</h1><p>Install the \
             <a href=\"https://x\">tool</a>.</p><h2>Backups</h2><p>Nightly.</p></body></html>",
        );
        assert_eq!(title.as_deref(), Some("The & page"));
        assert!(body.contains("# Setup"), "{body}");
        assert!(body.contains("## Backups"), "{body}");
        assert!(body.contains("Install the [tool]."), "{body}");
        assert!(!body.contains("color"), "{body}");
        assert!(!body.contains("var x"), "{body}");
        assert!(!body.contains("https://x"), "{body}");
    }

    #[test]
    fn cpu_time_is_read_after_a_command_name_with_spaces_and_parentheses() {
        let stat = "4242 (ai (pdf) x) R 1 2 3 4 5 6 7 8 9 10 117 23 0 0 20 0 1 0";
        assert_eq!(stat_cpu_ticks(stat), Some(140));
        assert_eq!(stat_cpu_ticks("4242 (ai) R 1 2"), None);
        #[cfg(all(feature = "pdf", target_os = "linux"))]
        assert!(cpu_ticks(std::process::id()).is_some());
    }

    #[test]
    fn titles_from_metadata_are_one_clean_line() {
        assert_eq!(
            clean_title("  Annual\n report\t2024 ").as_deref(),
            Some("Annual report 2024")
        );
        assert_eq!(clean_title(" \u{0} \n"), None);
        assert_eq!(clean_title(&"x".repeat(500)).unwrap().len(), 200);
        let xmp = r#"<x:xmpmeta><rdf:RDF><rdf:Description><dc:title><rdf:Alt>
            <rdf:li xml:lang="x-default">Tides &amp; Currents</rdf:li></rdf:Alt></dc:title>
            </rdf:Description></rdf:RDF></x:xmpmeta>"#;
        assert_eq!(xmp_title(xmp).as_deref(), Some("Tides & Currents"));
        assert_eq!(
            xmp_title("<dc:title>Plain</dc:title>").as_deref(),
            Some("Plain")
        );
        assert_eq!(xmp_title("<dc:creator>Someone</dc:creator>"), None);
        assert_eq!(xmp_title("<dc:title><rdf:Alt></rdf:Alt></dc:title>"), None);
    }

    #[test]
    fn reasons_read_back() {
        for u in [
            Unread::Encrypted,
            Unread::NoText,
            Unread::Damaged,
            Unread::TooCostly,
            Unread::Unsupported,
        ] {
            assert_eq!(Unread::from_reason(u.reason()), u);
        }
    }
}
