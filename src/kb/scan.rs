//! Which files of a folder are notes. A walk that reads only metadata (and `.gitignore` files):
//! hidden names, ignored, excluded, unsupported and very large files are skipped and counted;
//! symlinked folders are never followed (no loops), symlinked files are when they point to a
//! regular file inside the folder (a link out of it, to `/etc/passwd` or a key file, is
//! counted under `links`, as `-F` refuses it). Binary content is told later, from the first bytes the sync reads
//! ([`is_binary`]).

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::chunk::Kind;
use super::glob::Pattern;
use crate::error::{Error, Result};

/// Files larger than this are skipped (counted `large`): 2 MiB of text is a book, not a note.
pub(crate) const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// PDF files larger than this are skipped (counted `large`): the text is what counts, and a PDF
/// carries fonts and images beside it.
pub(crate) const MAX_DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;

/// The largest file of a kind the sync reads.
pub(crate) fn max_bytes(kind: Kind) -> u64 {
    if kind == Kind::Pdf {
        MAX_DOCUMENT_BYTES
    } else {
        MAX_FILE_BYTES
    }
}

/// How many leading bytes [`is_binary`] looks at.
pub(crate) const SNIFF_BYTES: usize = 8 * 1024;

/// Extensions indexed as markdown without `--include`.
const MARKDOWN: &[&str] = &["md", "markdown", "mdx"];

/// Extensions indexed as plain text without `--include`.
const TEXT: &[&str] = &[
    "txt", "rst", "org", "adoc", "py", "rs", "ts", "tsx", "js", "jsx", "go", "java", "kt", "c",
    "h", "cc", "cpp", "hpp", "cs", "rb", "php", "swift", "scala", "sh", "bash", "zsh", "fish",
    "sql", "toml", "yaml", "yml", "ini", "cfg", "lua", "r", "pl", "ex", "exs", "hs", "ml", "clj",
    "vim", "css", "scss", "xml", "tex",
];

/// Extensions indexed as HTML pages (their text and headings, no markup).
const HTML: &[&str] = &["html", "htm", "xhtml"];

/// Extensions indexed as PDF files (their text layer, page by page).
const PDF: &[&str] = &["pdf"];

/// One note file found by [`scan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The path relative to the root, '/'-separated (lossy if a name is not UTF-8).
    pub(crate) rel: String,
    /// The path to open (the link itself for a symlinked file).
    pub(crate) path: PathBuf,
    pub(crate) size: u64,
    /// Modification time in nanoseconds since the Unix epoch (negative before it).
    pub(crate) mtime_ns: i64,
    pub(crate) kind: Kind,
}

/// What the walk (and then the sync, which reads the files) left out, by reason. A skipped
/// folder counts once, whatever it holds.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Skipped {
    /// Names starting with '.' (files and folders, `.git` and `.gitignore` included).
    pub(crate) hidden: u64,
    /// Matched by a `.gitignore`.
    pub(crate) ignored: u64,
    /// Matched by `--exclude`.
    pub(crate) excluded: u64,
    /// Not a known text extension, or not matched by `--include`; sockets, fifos and the like.
    pub(crate) unsupported: u64,
    /// Over [`MAX_FILE_BYTES`].
    pub(crate) large: u64,
    /// Symlinks not followed: to a folder (loops), or to something that is not a regular file.
    pub(crate) links: u64,
    /// Folders that could not be listed, files whose metadata could not be read, broken
    /// symlinks, unreadable `.gitignore` files; files the sync could not read.
    pub(crate) unreadable: u64,
    /// Found binary when the sync read them.
    pub(crate) binary: u64,
    /// A second file with a note ID already taken (counted by the sync).
    pub(crate) duplicate: u64,
    /// Notes a program writes, not a person: Excalidraw drawings (`*.excalidraw.md`), whose
    /// text is the drawing's JSON. Listed by `ai kb stats NAME --skipped`.
    pub(crate) generated: u64,
    /// Their paths (relative to the root), for that list.
    #[serde(skip)]
    pub(crate) generated_paths: Vec<String>,
    /// HTML and PDF files that gave no text (encrypted, scanned, damaged, too costly to
    /// parse), counted by the sync, which remembers them until they change.
    pub(crate) no_text: u64,
    /// Their paths and why, for `ai kb stats NAME --skipped`.
    #[serde(skip)]
    pub(crate) no_text_paths: Vec<(String, String)>,
    /// The paths (relative, '/'-separated) of folders whose listing failed or was incomplete,
    /// and of entries whose type could not be read: the scan cannot say what is gone below
    /// them, so the sync keeps their notes.
    #[serde(skip)]
    pub(crate) unlisted: Vec<String>,
}

impl Skipped {
    /// Is the note at `rel` below (or at) a path the scan could not list?
    pub(crate) fn unlisted_covers(&self, rel: &str) -> bool {
        self.unlisted.iter().any(|u| {
            u.is_empty()
                || rel == u
                || rel
                    .strip_prefix(u.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
    }
}

impl Skipped {
    pub(crate) fn total(&self) -> u64 {
        self.hidden
            + self.ignored
            + self.excluded
            + self.unsupported
            + self.large
            + self.links
            + self.unreadable
            + self.binary
            + self.duplicate
            + self.generated
            + self.no_text
    }
}

/// Which files count as notes: the `--include` and `--exclude` globs.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
}

impl Filter {
    /// Compile the globs. Without `include`, the known extensions are notes; with it, only the
    /// files it matches. A glob without '/' matches a name at any depth (`*.md`); with one it is
    /// anchored at the root (`drafts/**`).
    pub(crate) fn new(include: &[String], exclude: &[String]) -> Result<Filter> {
        let compile = |flag: &str, globs: &[String]| {
            globs
                .iter()
                .map(|glob| {
                    Pattern::cli(glob).map_err(|why| {
                        Error::usage(format!("invalid {flag} glob {glob:?}: {why}")).hint(
                            "`*` and `?` match within a folder, `**` across folders; \
                             write a literal [ as \\[",
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()
        };
        Ok(Filter {
            include: compile("--include", include)?,
            exclude: compile("--exclude", exclude)?,
        })
    }

    /// The kind of note the file is, or `None` when it is not one.
    fn kind(&self, rel: &str, name: &str) -> Option<Kind> {
        let ext = extension(name);
        let is =
            |list: &[&str]| ext.is_some_and(|e| list.iter().any(|l| e.eq_ignore_ascii_case(l)));
        let known = if is(MARKDOWN) {
            Some(Kind::Markdown)
        } else if is(HTML) {
            Some(Kind::Html)
        } else if is(PDF) {
            Some(Kind::Pdf)
        } else if is(TEXT) {
            Some(Kind::Text)
        } else {
            None
        };
        if self.include.is_empty() {
            known
        } else if self.include.iter().any(|p| p.matches(rel, false)) {
            Some(known.unwrap_or(Kind::Text))
        } else {
            None
        }
    }
}

/// The kind of note a file of this name is without `--include` (`None`: not one).
pub(crate) fn kind_of(name: &str) -> Option<Kind> {
    let name = name.rsplit('/').next().unwrap_or(name);
    Filter::default().kind(name, name)
}

/// Whether a file is a note a program generated (Excalidraw's `NAME.excalidraw.md`).
fn generated(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".excalidraw.md") || lower.ends_with(".excalidraw")
}

/// A file name's extension, if it has one (`.bashrc` has none).
fn extension(name: &str) -> Option<&str> {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => Some(ext),
        _ => None,
    }
}

/// Read the note file `path` as the sync may: a regular file, at most [`MAX_FILE_BYTES`] (+1,
/// so that more is seen); with `root`, only when its real path lies inside it (the walk
/// already saw to that for the files it found). Opened without blocking, so a FIFO or a device
/// put in a note's place is refused, never waited on.
pub(crate) fn read_file(root: Option<&Path>, path: &Path, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = |why: &str| io::Error::new(io::ErrorKind::InvalidInput, why.to_owned());
    let path = match root {
        Some(root) => {
            let real = fs::canonicalize(path)?;
            if !real.starts_with(fs::canonicalize(root)?) {
                return Err(refuse("it leads outside the notes folder"));
            }
            real
        }
        None => path.to_owned(),
    };
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refuse("it is not a regular file"));
    }
    if meta.len() > max {
        return Err(refuse(&format!(
            "it is larger than {} MiB",
            max / (1024 * 1024)
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The note files under `root`, sorted by `rel`, and what was skipped. A root that is not a
/// readable folder is an error; anything unreadable below it is skipped and counted.
pub(crate) fn scan(root: &Path, filter: &Filter) -> Result<(Vec<Entry>, Skipped)> {
    let meta = fs::metadata(root).map_err(|e| Error::io("read folder", root, e))?;
    if !meta.is_dir() {
        let e = io::Error::new(io::ErrorKind::NotADirectory, "not a folder");
        return Err(Error::io("read folder", root, e));
    }
    let listing = fs::read_dir(root).map_err(|e| Error::io("read folder", root, e))?;
    let mut walk = Walk {
        filter,
        root: fs::canonicalize(root).map_err(|e| Error::io("read folder", root, e))?,
        entries: Vec::new(),
        skipped: Skipped::default(),
        rules: Vec::new(),
    };
    walk.folder(listing, "");
    let mut entries = walk.entries;
    entries.sort_by(|a, b| a.rel.cmp(&b.rel).then_with(|| a.path.cmp(&b.path)));
    Ok((entries, walk.skipped))
}

/// The patterns of one `.gitignore`, relative to its folder (`base`, "" at the root).
struct Rules {
    base: String,
    patterns: Vec<Pattern>,
}

struct Walk<'a> {
    filter: &'a Filter,
    /// The root, with every link resolved: a symlinked file is followed only to a target
    /// below it.
    root: PathBuf,
    entries: Vec<Entry>,
    skipped: Skipped,
    /// The `.gitignore` rules of the folders from the root down to the current one.
    rules: Vec<Rules>,
}

impl Walk<'_> {
    fn folder(&mut self, listing: fs::ReadDir, rel: &str) {
        let mut children = Vec::new();
        for child in listing {
            match child {
                Ok(child) => children.push(child),
                Err(_) => {
                    self.skipped.unreadable += 1;
                    self.skipped.unlisted.push(rel.to_owned());
                }
            }
        }
        let gitignore = children
            .iter()
            .find(|c| c.file_name() == OsStr::new(".gitignore"));
        let pushed = match gitignore.map(|c| fs::read(c.path())) {
            Some(Ok(bytes)) => {
                let text = String::from_utf8_lossy(&bytes);
                let patterns = text
                    .lines()
                    .filter_map(Pattern::gitignore)
                    .filter_map(|p| p.ok()) // as git does: a broken line is no rule
                    .collect();
                self.rules.push(Rules {
                    base: rel.to_owned(),
                    patterns,
                });
                true
            }
            Some(Err(_)) => {
                self.skipped.unreadable += 1;
                false
            }
            None => false,
        };
        for child in children {
            let name = child.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                self.skipped.hidden += 1;
                continue;
            }
            let child_rel = if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            };
            let Ok(file_type) = child.file_type() else {
                self.skipped.unreadable += 1;
                self.skipped.unlisted.push(child_rel);
                continue;
            };
            if file_type.is_dir() {
                if self.ignored(&child_rel, true) {
                    self.skipped.ignored += 1;
                } else if self
                    .filter
                    .exclude
                    .iter()
                    .any(|p| p.matches_folder(&child_rel))
                {
                    self.skipped.excluded += 1;
                } else {
                    match fs::read_dir(child.path()) {
                        Ok(listing) => self.folder(listing, &child_rel),
                        Err(_) => {
                            self.skipped.unreadable += 1;
                            self.skipped.unlisted.push(child_rel);
                        }
                    }
                }
            } else if file_type.is_file() {
                self.file(&child, &child_rel, &name, None);
            } else if file_type.is_symlink() {
                match fs::metadata(child.path()) {
                    Ok(meta) if meta.is_file() && !self.inside(&child.path()) => {
                        self.skipped.links += 1;
                    }
                    Ok(meta) if meta.is_file() => self.file(&child, &child_rel, &name, Some(meta)),
                    Ok(meta) if self.ignored(&child_rel, meta.is_dir()) => {
                        self.skipped.ignored += 1;
                    }
                    Ok(_) => self.skipped.links += 1,
                    Err(_) => self.skipped.unreadable += 1,
                }
            } else {
                self.skipped.unsupported += 1;
            }
        }
        if pushed {
            self.rules.pop();
        }
    }

    /// Does the link `path` lead to a file below the root?
    fn inside(&self, path: &Path) -> bool {
        fs::canonicalize(path).is_ok_and(|target| target.starts_with(&self.root))
    }

    /// A regular file (or a symlink to one, with its target's metadata).
    fn file(&mut self, child: &fs::DirEntry, rel: &str, name: &str, meta: Option<fs::Metadata>) {
        if self.ignored(rel, false) {
            self.skipped.ignored += 1;
            return;
        }
        if self.filter.exclude.iter().any(|p| p.matches(rel, false)) {
            self.skipped.excluded += 1;
            return;
        }
        let Some(kind) = self.filter.kind(rel, name) else {
            self.skipped.unsupported += 1;
            return;
        };
        let meta = match meta.map_or_else(|| child.metadata(), Ok) {
            Ok(meta) => meta,
            Err(_) => {
                self.skipped.unreadable += 1;
                return;
            }
        };
        if meta.len() > max_bytes(kind) {
            self.skipped.large += 1;
            return;
        }
        if generated(name) {
            self.skipped.generated += 1;
            self.skipped.generated_paths.push(rel.to_owned());
            return;
        }
        self.entries.push(Entry {
            rel: rel.to_owned(),
            path: child.path(),
            size: meta.len(),
            mtime_ns: mtime_ns(&meta),
            kind,
        });
    }

    /// Whether the `.gitignore` files ignore `rel`: the last matching line decides, the deepest
    /// file first; a `!` line re-includes.
    fn ignored(&self, rel: &str, is_dir: bool) -> bool {
        for rules in self.rules.iter().rev() {
            let sub = if rules.base.is_empty() {
                rel
            } else {
                match rel
                    .strip_prefix(rules.base.as_str())
                    .and_then(|r| r.strip_prefix('/'))
                {
                    Some(sub) => sub,
                    None => continue,
                }
            };
            if let Some(p) = rules.patterns.iter().rev().find(|p| p.matches(sub, is_dir)) {
                return !p.negated;
            }
        }
        false
    }
}

fn mtime_ns(meta: &fs::Metadata) -> i64 {
    let Ok(time) = meta.modified() else {
        return 0;
    };
    match time.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_nanos()).map_or(i64::MIN, |n| -n),
    }
}

/// Whether the first bytes of a file say it is not text: a NUL byte in the first 8 KiB, or more
/// than a tenth of them invalid UTF-8 or control characters. A Latin-1 note (a few umlauts
/// invalid as UTF-8) is still text; see [`decode`].
pub(crate) fn is_binary(head: &[u8]) -> bool {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    if memchr::memchr(0, head).is_some() {
        return true;
    }
    let control = |b: &u8| matches!(b, 0x01..=0x08 | 0x0e..=0x1a | 0x1c..=0x1f | 0x7f);
    let mut bad = 0usize;
    // A character cut in two at the end of the head adds at most 3: noise against the tenth.
    // Bytes that are not UTF-8 but Latin-1 letters and signs (0xA0–0xFF) are text.
    for chunk in head.utf8_chunks() {
        bad += chunk.valid().bytes().filter(control).count()
            + chunk.invalid().iter().filter(|b| **b < 0xa0).count();
    }
    bad * 10 > head.len()
}

/// A text file's content as text: UTF-8 where it is (a leading BOM kept; `note::read` drops it);
/// each byte that is not UTF-8 read as Windows-1252, so a Latin-1 note reads right and one stray
/// byte in a UTF-8 note (a `\x92` apostrophe pasted from elsewhere) spoils only itself.
pub(crate) fn decode(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return text.into();
    }
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        out.extend(chunk.invalid().iter().map(|&b| cp1252(b)));
    }
    out.into()
}

/// A byte as Windows-1252 (Latin-1 with printable characters in 0x80–0x9F).
fn cp1252(b: u8) -> char {
    const HIGH: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž',
        '\u{8f}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}',
        'ž', 'Ÿ',
    ];
    match b {
        0x80..=0x9f => HIGH[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
