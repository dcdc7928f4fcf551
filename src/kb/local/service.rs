//! The query-embedding service of a long-running `ai` (`ai serve`, `ai mcp`). Their calls run as
//! child `ai` processes (nothing a child does can take the server down), so a child would load a
//! local model for every grounded call. Instead the server keeps the model loaded (the
//! process-wide cache of [`super::Source::shared`]) and answers its children's query
//! embeddings over a Unix socket in a folder only the user can enter; the child finds it in
//! `AI_EMBED_SOCKET`. Anything wrong with the service (gone, a model it cannot load, a reply it
//! cannot read) and the child loads the model itself, as a one-shot call does: the service only
//! saves time, it never decides an answer.
//!
//! One request a connection, one JSON line each way: `{"spec": "local:…", "texts": [...]}` →
//! `{"vectors": [[...], ...]}` or `{"error": "..."}`.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use super::{Role, Source};
use crate::output::Ui;

/// The variable a child finds the socket in.
pub(crate) const ENV: &str = "AI_EMBED_SOCKET";
/// The longest request line read (queries are short; a grounded query is at most a few kB).
const MAX_REQUEST: u64 = 1 << 20;
/// How long a child waits for the service before it loads the model itself.
const WAIT: Duration = Duration::from_secs(120);

/// This process's socket, once started.
static SOCKET: OnceLock<PathBuf> = OnceLock::new();

/// The socket children are to use (for their environment), when this process serves one.
pub(crate) fn socket() -> Option<&'static Path> {
    SOCKET.get().map(PathBuf::as_path)
}

/// Start answering query embeddings for this process's children, with the models of `home`.
/// Best effort: when the socket cannot be made, children load models themselves.
pub(crate) fn start(home: &Path) {
    if SOCKET.get().is_some() {
        return;
    }
    let dir = std::env::temp_dir().join(format!(
        "ai-embed-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    ));
    // Made 0700 before the socket exists, so no other user can connect in between.
    if std::fs::create_dir(&dir).is_err()
        || std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).is_err()
    {
        return;
    }
    let path = dir.join("embed.sock");
    let Ok(listener) = UnixListener::bind(&path) else {
        let _ = std::fs::remove_dir(&dir);
        return;
    };
    let home = home.to_owned();
    let spawned = std::thread::Builder::new()
        .name("embed-service".into())
        .spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let home = home.clone();
                let _ = std::thread::Builder::new()
                    .name("embed-request".into())
                    .spawn(move || answer(conn, &home));
            }
        });
    if spawned.is_ok() {
        let _ = SOCKET.set(path);
        CLEANUP.get_or_init(|| Cleanup(dir));
    }
}

/// Removes the socket's folder when the process ends normally (a killed one leaves an empty
/// folder and a dead socket in the temp dir).
struct Cleanup(PathBuf);
static CLEANUP: OnceLock<Cleanup> = OnceLock::new();

/// Remove the socket (call before the process exits).
pub(crate) fn stop() {
    if let Some(c) = CLEANUP.get() {
        let _ = std::fs::remove_dir_all(&c.0);
    }
}

#[derive(serde::Deserialize)]
struct Request {
    spec: String,
    texts: Vec<String>,
}

fn answer(conn: UnixStream, home: &Path) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let mut line = Vec::new();
    let Ok(reader) = conn.try_clone() else { return };
    if BufReader::new(reader.take(MAX_REQUEST))
        .read_until(b'\n', &mut line)
        .is_err()
    {
        return;
    }
    let reply = match serde_json::from_slice::<Request>(&line) {
        Ok(req) => match embed(&req, home) {
            Ok(vectors) => serde_json::json!({ "vectors": vectors }),
            Err(e) => serde_json::json!({ "error": e }),
        },
        Err(e) => serde_json::json!({ "error": format!("not a request: {e}") }),
    };
    let mut conn = conn;
    let _ = writeln!(conn, "{reply}");
}

fn embed(req: &Request, home: &Path) -> Result<Vec<Vec<f32>>, String> {
    let rest = req
        .spec
        .strip_prefix("local:")
        .or_else(|| (req.spec == "local").then_some(""))
        .ok_or("not a local model")?;
    let source = Source::parse(rest).map_err(|e| e.to_string())?;
    // A Hub model not on disk is the child's to download (with its own progress and errors).
    if let Some(dir) = source.hub_dir(home)
        && !super::hub::is_complete(&dir)
    {
        return Err("not downloaded".into());
    }
    let ui = Ui::new(false);
    let model = source.shared(home, &ui).map_err(|e| e.to_string())?;
    let texts: Vec<&str> = req.texts.iter().map(String::as_str).collect();
    model.embed(&texts, Role::Query).map_err(|e| e.to_string())
}

/// Query vectors from the parent's service, or `None` (no service, or it could not answer:
/// the caller loads the model itself).
pub(crate) fn query(spec: &str, texts: &[&str]) -> Option<Vec<Vec<f32>>> {
    let path = std::env::var_os(ENV)?;
    let mut conn = UnixStream::connect(path).ok()?;
    conn.set_read_timeout(Some(WAIT)).ok()?;
    let req = serde_json::json!({ "spec": spec, "texts": texts });
    writeln!(conn, "{req}").ok()?;
    let mut line = Vec::new();
    BufReader::new(conn.take(64 << 20))
        .read_until(b'\n', &mut line)
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&line).ok()?;
    let vectors: Vec<Vec<f32>> = serde_json::from_value(v.get("vectors")?.clone()).ok()?;
    (vectors.len() == texts.len() && vectors.iter().flatten().all(|x| x.is_finite()))
        .then_some(vectors)
}
