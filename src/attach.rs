//! Which backend takes which attachments (images, PDFs) and how large, checked before anything
//! is sent or written: a backend that cannot take one is an error that names those that can,
//! never a model answering blind. The limits are each provider's documented ones (README,
//! "Images and PDFs").

use crate::config::Config;
use crate::config::providers::Protocol;
use crate::error::{Error, Result};
use crate::fmt::human_size;
use crate::media::{Attachment, IMAGE_TYPES, PDF, kind_name};
use crate::target::{Cli, Provider, Route};

const MIB: u64 = 1024 * 1024;

/// The most `-F` reads of one image or PDF (no provider takes more).
pub(crate) const MAX_READ: u64 = 32 * MIB;
/// The most bytes of images and PDFs one call reads, over all its `-F` files: above every
/// provider's limit for one message.
pub(crate) const MAX_READ_TOTAL: u64 = 64 * MIB;

/// What one backend takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Takes {
    pub(crate) images: &'static [&'static str],
    pub(crate) pdf: bool,
    /// The largest image, in bytes.
    pub(crate) image_max: u64,
    /// The largest PDF, in bytes.
    pub(crate) pdf_max: u64,
    /// All attachments of one message together.
    pub(crate) total_max: u64,
}

const ALL_IMAGES: &[&str] = &IMAGE_TYPES;
/// Gemini and Ollama do not read GIF.
const NO_GIF: &[&str] = &["image/png", "image/jpeg", "image/webp"];
const NONE: Takes = Takes {
    images: &[],
    pdf: false,
    image_max: 0,
    pdf_max: 0,
    total_max: 0,
};

/// Images and PDFs a protocol's API takes, with its documented sizes.
pub(crate) fn of_protocol(p: Protocol) -> Takes {
    match p {
        // Images up to 20 MB, PDFs (`file` parts) up to 32 MB, 50 MB a request.
        Protocol::Openai => Takes {
            images: ALL_IMAGES,
            pdf: true,
            image_max: 20 * MIB,
            pdf_max: 32 * MIB,
            total_max: 50 * MIB,
        },
        // Chat Completions on Azure: images only.
        Protocol::Azure => Takes {
            images: ALL_IMAGES,
            pdf: false,
            image_max: 20 * MIB,
            pdf_max: 0,
            total_max: 50 * MIB,
        },
        // Images up to 5 MB; PDFs within the 32 MB request.
        Protocol::Anthropic => Takes {
            images: ALL_IMAGES,
            pdf: true,
            image_max: 5 * MIB,
            pdf_max: 32 * MIB,
            total_max: 32 * MIB,
        },
        // Inline data: the whole request under 20 MB, which base64 makes 4/3 of the bytes.
        Protocol::Gemini => Takes {
            images: NO_GIF,
            pdf: true,
            image_max: 14 * MIB,
            pdf_max: 14 * MIB,
            total_max: 14 * MIB,
        },
        Protocol::Ollama => Takes {
            images: NO_GIF,
            pdf: false,
            image_max: 20 * MIB,
            pdf_max: 0,
            total_max: 50 * MIB,
        },
        // Converse: images up to 3.75 MB, documents up to 4.5 MB.
        Protocol::Bedrock => Takes {
            images: ALL_IMAGES,
            pdf: true,
            image_max: 3 * MIB + 768 * 1024,
            pdf_max: 4 * MIB + 512 * 1024,
            total_max: 32 * MIB,
        },
    }
}

/// What a CLI takes by path: what it reads itself (its own API's limits apply behind it).
pub(crate) fn of_cli(cli: Cli) -> Takes {
    match cli {
        Cli::Claude => of_protocol(Protocol::Anthropic),
        Cli::Codex => Takes {
            pdf: false,
            pdf_max: 0,
            ..of_protocol(Protocol::Openai)
        },
        Cli::Gemini | Cli::Qwen => Takes {
            images: NO_GIF,
            pdf: true,
            image_max: 14 * MIB,
            pdf_max: 14 * MIB,
            total_max: 14 * MIB,
        },
        Cli::Ollama => of_protocol(Protocol::Ollama),
    }
}

/// The protocol an HTTP provider speaks (config `"providers"` first, then the built-ins).
fn protocol_of(name: &str, config: &Config) -> Protocol {
    crate::backend::http::provider::configured(config)
        .ok()
        .and_then(|all| all.get(name).and_then(|p| p.protocol))
        .or_else(|| crate::backend::http::provider::builtin_protocol(name))
        .unwrap_or(Protocol::Openai)
}

/// Models known to take text only, by name (after any `vendor/` prefix).
fn text_only(provider: &str, model: &str) -> bool {
    let m = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    // GLM: only the vision models (`glm-4v`, `glm-4.5v`, `glm-4.1v-thinking`) see images.
    if provider == "glm" || m.starts_with("glm-") {
        return !m.trim_start_matches("glm-").contains('v');
    }
    ["gpt-3.5", "o1-mini", "o3-mini", "deepseek", "codestral"]
        .iter()
        .any(|p| m.starts_with(p))
}

/// What the backend of `route` takes.
pub(crate) fn takes(route: &Route, config: &Config) -> Takes {
    match &route.provider {
        // echo describes what it received: anything `-F` reads.
        Provider::Echo => Takes {
            images: ALL_IMAGES,
            pdf: true,
            image_max: MAX_READ,
            pdf_max: MAX_READ,
            total_max: u64::MAX,
        },
        Provider::Cli(c) => of_cli(*c),
        // A custom CLI is given text; there is no known way to hand it a file.
        Provider::Custom(_) => NONE,
        Provider::Http(name) => {
            if text_only(name, &route.model) {
                return NONE;
            }
            let mut t = of_protocol(protocol_of(name, config));
            // GLM's vision models take images (5 MB), not PDFs.
            if name == "glm" {
                t.pdf = false;
                t.image_max = 5 * MIB;
            }
            t
        }
    }
}

fn accepts(t: &Takes, media_type: &str) -> bool {
    if media_type == PDF {
        t.pdf
    } else {
        t.images.contains(&media_type)
    }
}

/// Those that take `media_type`, for the hint.
fn who_takes(media_type: &str) -> String {
    let clis: Vec<&str> = Cli::ALL
        .iter()
        .filter(|c| accepts(&of_cli(**c), media_type))
        .map(|c| c.name())
        .collect();
    let apis: Vec<&str> = [
        ("openai, openrouter", Protocol::Openai),
        ("anthropic", Protocol::Anthropic),
        ("gemini-api", Protocol::Gemini),
        ("bedrock", Protocol::Bedrock),
        ("azure", Protocol::Azure),
        ("ollama-api", Protocol::Ollama),
    ]
    .iter()
    .filter(|(_, p)| accepts(&of_protocol(*p), media_type))
    .map(|(n, _)| *n)
    .collect();
    format!(
        "the CLIs {} and the APIs {}",
        clis.join(", "),
        apis.join(", ")
    )
}

/// Can the backend of `route` take these attachments (the ones sent this turn), each within
/// its size? Checked before anything is sent: exit 2 with what can.
pub(crate) fn check(route: &Route, attachments: &[Attachment], config: &Config) -> Result<()> {
    if attachments.is_empty() {
        return Ok(());
    }
    let t = takes(route, config);
    let mut total = 0u64;
    for a in attachments {
        let kind = kind_name(&a.media_type);
        if !accepts(&t, &a.media_type) {
            let why = if t == NONE && matches!(route.provider, Provider::Http(_)) {
                format!("{} takes text only", route.label)
            } else if t == NONE {
                format!("{} is given text only", route.label)
            } else {
                format!("{} does not take a {kind}", route.label)
            };
            return Err(
                Error::usage(format!("cannot attach {} ({kind}): {why}", a.name)).hint(format!(
                    "{kind}s can be given to {}",
                    who_takes(&a.media_type)
                )),
            );
        }
        let max = if a.media_type == PDF {
            t.pdf_max
        } else {
            t.image_max
        };
        if a.size > max {
            return Err(Error::usage(format!(
                "cannot attach {}: it is {}, and {} takes a {kind} of at most {}",
                a.name,
                human_size(a.size),
                route.label,
                human_size(max)
            ))
            .hint("send a smaller file (scaled down, or fewer pages), or use a model that takes larger ones (README: Images and PDFs)"));
        }
        total = total.saturating_add(a.size);
        if total > t.total_max {
            return Err(Error::usage(format!(
                "the attachments add up to more than {1}, the most {0} takes in one message",
                route.label,
                human_size(t.total_max)
            ))
            .hint("attach fewer or smaller files"));
        }
    }
    Ok(())
}

/// The file name of a kept copy: the start of its hash (the same file is kept once), then its
/// own name made plain (`3f2a9c01d4e5-my_photo.png`).
pub(crate) fn kept_name(a: &Attachment) -> String {
    let plain: String = a
        .file_name()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    let plain = plain.trim_start_matches('.');
    format!(
        "{}-{}",
        a.sha256.get(..12).unwrap_or("0"),
        if plain.is_empty() { "file" } else { plain }
    )
}

/// Write the kept copies of `attachments` into the chat's folder (0700, files 0600), each
/// through a temporary file renamed into place; one already there is left as it is.
pub(crate) fn keep(
    store: &crate::chat::store::Store,
    id: &str,
    attachments: &[Attachment],
) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = store.files_dir(id);
    for a in attachments {
        let (Some(name), Some(data)) = (&a.kept, &a.data) else {
            continue;
        };
        if store.kept_path(id, name).is_some() {
            continue;
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| Error::io("create", &dir, e))?;
        let path = dir.join(name);
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .and_then(|mut f| {
                f.write_all(&data.0)?;
                f.sync_all()
            })
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io("write", &path, e));
        }
    }
    Ok(())
}

/// Earlier turns' kept copies (`--keep-attachments`) go again, whole, to an HTTP provider (or
/// echo) that takes them, so the model can look at them again; within what it takes in one
/// request together with this turn's. Others stay a line that says what was attached. A CLI
/// is not pointed into the chat's folder (its own file tools may not reach it).
pub(crate) fn resend_kept(
    store: &crate::chat::store::Store,
    id: &str,
    route: &Route,
    config: &Config,
    messages: &mut [crate::conversation::Message],
    fresh: &[Attachment],
) {
    if !matches!(route.provider, Provider::Http(_) | Provider::Echo) {
        return;
    }
    let mut sent: Vec<Attachment> = fresh.to_vec();
    for m in messages.iter_mut() {
        for p in m.parts.iter_mut() {
            let crate::conversation::Part::Attachment(a) = p else {
                continue;
            };
            let Some(path) = a.kept.as_deref().and_then(|k| store.kept_path(id, k)) else {
                continue;
            };
            let mut with = a.clone();
            with.data = None;
            // Only a copy still whole (its hash as recorded) is sent.
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            if bytes.len() as u64 != a.size || crate::media::sha256_hex(&bytes) != a.sha256 {
                continue;
            }
            with.data = Some(crate::media::Data(std::sync::Arc::new(bytes)));
            sent.push(with.clone());
            if check(route, &sent, config).is_ok() {
                *a = with;
            } else {
                sent.pop();
            }
        }
    }
}

/// An attachment of a turn that is sent again (`ai chat retry`, `/retry`, the page's Retry):
/// from its kept copy when there is one, else from its path (relative to the working
/// directory, as `-F` took it); either way only the very bytes that were attached (the size
/// and SHA-256 recorded), never a file changed since. A missing or changed file is an error:
/// the turn is not resent without it.
pub(crate) fn reread(
    store: &crate::chat::store::Store,
    id: &str,
    rec: crate::chat::record::AttachmentRec,
) -> Result<Attachment> {
    let shown = crate::output::sanitize(&rec.name);
    let kept = rec.kept.as_deref().and_then(|k| store.kept_path(id, k));
    let (bytes, from) = match &kept {
        Some(path) => (
            read_bounded(path).map_err(|e| Error::io("read", path, e))?,
            format!("its copy kept in chat {id}"),
        ),
        None => {
            let cwd = std::env::current_dir().and_then(|d| d.canonicalize());
            let real = cwd.as_ref().ok().and_then(|cwd| {
                let p = std::path::Path::new(&rec.name);
                let real = (!p.is_absolute())
                    .then(|| cwd.join(p).canonicalize().ok())
                    .flatten()?;
                real.starts_with(cwd).then_some(real)
            });
            let here = cwd.as_ref().map_or_else(
                |_| "the working directory".to_owned(),
                |d| d.display().to_string(),
            );
            let Some(real) = real.filter(|r| r.is_file()) else {
                return Err(Error::usage(format!(
                    "cannot resend the turn of chat {id}: its attachment {shown} is not in {here}"
                ))
                .hint(format!(
                    "run the retry in the folder the turn was sent from (-F paths are relative to it), or send the prompt again with the file: ai chat {id} -F FILE \"…\""
                )));
            };
            (
                read_bounded(&real).map_err(|e| Error::io("read", &real, e))?,
                shown.clone(),
            )
        }
    };
    let sha256 = crate::media::sha256_hex(&bytes);
    if bytes.len() as u64 != rec.size || sha256 != rec.sha256 {
        return Err(Error::usage(format!(
            "cannot resend the turn of chat {id}: {from} is not what was attached ({} now, {} then; sha256 {}… now, {}… then)",
            human_size(bytes.len() as u64),
            human_size(rec.size),
            sha256.get(..12).unwrap_or(""),
            crate::output::sanitize(rec.sha256.get(..12).unwrap_or(&rec.sha256)),
        ))
        .hint(format!(
            "to send the file as it is now, ask again with it: ai chat {id} -F {shown} \"…\""
        )));
    }
    Ok(Attachment {
        name: rec.name,
        media_type: rec.media_type,
        size: rec.size,
        sha256,
        data: Some(crate::media::Data(std::sync::Arc::new(bytes))),
        kept: rec.kept,
    })
}

/// A file read whole, up to one byte more than `-F` reads (so a larger one shows its size
/// does not match).
fn read_bounded(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_READ + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// An attachment as its message records it (no bytes).
pub(crate) fn record(a: &Attachment) -> crate::chat::record::AttachmentRec {
    crate::chat::record::AttachmentRec {
        name: a.name.clone(),
        media_type: a.media_type.clone(),
        size: a.size,
        sha256: a.sha256.clone(),
        url: None,
        kept: a.kept.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_only_models() {
        assert!(text_only("glm", "glm-4-plus"));
        assert!(!text_only("glm", "glm-4v-plus"));
        assert!(!text_only("glm", "glm-4.5v"));
        assert!(text_only("openrouter", "deepseek/deepseek-chat"));
        assert!(text_only("openai", "gpt-3.5-turbo"));
        assert!(!text_only("openai", "gpt-4o"));
        assert!(!text_only("anthropic", "claude-sonnet-4-5"));
    }

    #[test]
    fn hint_names_who_takes_pdfs() {
        let w = who_takes(PDF);
        assert!(w.contains("claude, gemini, qwen"), "{w}");
        assert!(!w.contains("codex"), "{w}");
        assert!(w.contains("anthropic") && w.contains("bedrock") && !w.contains("azure"));
        let gif = who_takes("image/gif");
        assert!(
            gif.contains("codex") && !gif.contains("gemini-api"),
            "{gif}"
        );
    }
}
