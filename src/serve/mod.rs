//! `ai serve`: the HTTP API on 127.0.0.1 (see [`routes`] for the endpoints). Every request
//! that does something runs as its own `ai` process, so chats continue over HTTP with the same
//! files and locks as from the shell.
//!
//! Hardened against the review's findings (D3–D5, N3): requests must name the served address
//! in `Host` and come from no other origin ([`guard`]); tokens are long; connections, calls,
//! request time, call time and the output kept per call are bounded; a failed `accept()` (out
//! of descriptors) is logged and retried, never the end of the server; a client that goes
//! away stops its call as Ctrl+C would. The server ends only by a signal (Ctrl+C, SIGTERM),
//! after passing it on to the calls under way so they save what they have.

mod call;
pub(crate) mod child;
mod guard;
mod http;
mod notes;
mod page;
mod render;
pub(crate) mod reply;
mod routes;
mod sign;

use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rand::Rng;

use crate::error::{Error, Result};
use crate::output::Ui;

pub(crate) struct Options {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) token: Option<String>,
    pub(crate) no_auth: bool,
    pub(crate) limits: Limits,
}

/// What one server allows at once and for how long.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Model calls (`POST /call`) running at once; more get 429.
    pub(crate) max_calls: usize,
    /// Connections open at once; more get 503.
    pub(crate) max_connections: usize,
    /// How long one call (one `ai` child) may run before it is stopped.
    pub(crate) call_timeout: Duration,
    /// How long a request may take to arrive.
    pub(crate) idle_timeout: Duration,
    /// The most bytes of one child's output held in memory.
    pub(crate) max_output: usize,
}

/// What every connection's thread shares.
struct Shared {
    token: Option<String>,
    served: guard::Served,
    exe: PathBuf,
    limits: Limits,
    /// Calls running now.
    calls: AtomicUsize,
    /// Connections open now.
    connections: AtomicUsize,
    /// Signs the URLs of sources (plain links to notes, which carry no header).
    signer: sign::Signer,
    /// The chats, for their kept attachments (`GET /chats/ID/files/NAME`).
    store: Option<crate::chat::store::Store>,
}

/// How long a connection may take to read an answer before it counts as gone.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);
/// The pause after a failed `accept()` before the next try.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

pub(crate) fn run(opts: Options, ui: &Ui) -> Result<()> {
    let token = token(&opts, ui)?;
    // `[::1]`, as in a URL, is `::1`.
    let host = opts
        .host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(&opts.host);
    let addrs: Vec<SocketAddr> = (host, opts.port)
        .to_socket_addrs()
        .map_err(|e| {
            Error::usage(format!("cannot listen on {}: {e}", opts.host))
                .hint("give an address: ai serve --host 127.0.0.1")
        })?
        .collect();
    if token.is_none() && (addrs.is_empty() || addrs.iter().any(|a| !a.ip().is_loopback())) {
        return Err(Error::usage(format!(
            "--no-auth on {} would let anyone on the network use your keys",
            opts.host
        ))
        .hint("keep the default host 127.0.0.1, or use a token"));
    }
    let listener = TcpListener::bind(&addrs[..]).map_err(|e| {
        Error::usage(format!("cannot listen on {}:{}: {e}", opts.host, opts.port))
            .hint("choose another port: ai serve PORT")
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::backend(format!("cannot read the address listened on: {e}")))?;
    let exe = std::env::current_exe()
        .map_err(|e| Error::backend(format!("cannot find the ai program itself: {e}")))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| Error::backend(format!("cannot set up the listener: {e}")))?;
    // The one line scripts and tests wait for; shown even with -q.
    say(&format!("ai serve: listening on http://{addr}"));
    ui.notice(&open_line(addr, token.as_deref(), opts.token_generated()));
    let shared = Arc::new(Shared {
        token,
        served: guard::Served { addr },
        exe,
        limits: opts.limits,
        calls: AtomicUsize::new(0),
        connections: AtomicUsize::new(0),
        signer: sign::Signer::new(),
        store: crate::config::Home::locate()
            .ok()
            .map(|h| crate::chat::store::Store::new(&h)),
    });
    // Grounded calls run as children: they embed their queries with the local model this
    // process keeps loaded.
    if let Ok(home) = crate::config::Home::locate() {
        crate::kb::local::service::start(&home.dir);
    }
    accept_loop(&listener, &shared);
    crate::kb::local::service::stop();
    // Interrupted: the calls under way were told to stop (the signal thread passed the signal
    // on); give them a moment to save and answer.
    let until = Instant::now() + Duration::from_secs(15);
    while shared.connections.load(Ordering::SeqCst) > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(Error::Interrupted)
}

/// `ai serve: open http://127.0.0.1:8765/#token=…`: the page, with a token `ai serve` made
/// in the fragment (which a browser sends to no server and puts in no Referer). A token the
/// user gave is not printed again: the page asks for it.
fn open_line(addr: SocketAddr, token: Option<&str>, generated: bool) -> String {
    let mut shown = addr;
    if addr.ip().is_unspecified() {
        shown.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    match token {
        Some(t) if generated => format!("ai serve: open http://{shown}/#token={t}"),
        Some(_) => format!("ai serve: open http://{shown}/ (the page asks for the token)"),
        None => format!("ai serve: open http://{shown}/"),
    }
}

/// The token clients must send: `--token`, else `AI_CLI_SERVER_TOKEN`, else a new one (printed).
/// `None` with `--no-auth`.
fn token(opts: &Options, ui: &Ui) -> Result<Option<String>> {
    if opts.no_auth {
        return Ok(None);
    }
    if let Some(t) = &opts.token {
        guard::check_token(t, "--token")?;
        return Ok(Some(t.clone()));
    }
    if let Some(t) = std::env::var("AI_CLI_SERVER_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
    {
        guard::check_token(&t, "AI_CLI_SERVER_TOKEN")?;
        return Ok(Some(t));
    }
    let t = generate_token();
    ui.notice(&format!(
        "ai serve: token (send it as \"Authorization: Bearer …\"): {t}"
    ));
    Ok(Some(t))
}

fn generate_token() -> String {
    let mut rng = rand::rng();
    (0..32)
        .map(|_| format!("{:x}", rng.random_range(0..16u8)))
        .collect()
}

/// A line on stderr (the server's log).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Accept connections until a signal asks the server to stop. A failed accept (out of file
/// descriptors, a connection aborted before it was taken) is logged once per kind and retried
/// after a pause: the connections that hold descriptors end by themselves (idle ones time out).
fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    let mut failing: Option<ErrorKind> = None;
    let mut logged_at = Instant::now();
    while !crate::signal::interrupted() {
        if !readable(listener, 250) {
            continue;
        }
        match listener.accept() {
            Ok((stream, _)) => {
                if failing.take().is_some() {
                    say("ai serve: accepting connections again");
                }
                dispatch(stream, shared);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(e) => {
                if failing != Some(e.kind()) || logged_at.elapsed() > Duration::from_secs(10) {
                    say(&format!(
                        "ai serve: cannot accept a connection: {e}; retrying"
                    ));
                    failing = Some(e.kind());
                    logged_at = Instant::now();
                }
                std::thread::sleep(ACCEPT_BACKOFF);
            }
        }
    }
}

/// Wait up to `ms` for a connection to accept.
fn readable(listener: &TcpListener, ms: i32) -> bool {
    let mut fd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll(2) reads and writes only the one pollfd we own.
    let n = unsafe { libc::poll(&mut fd, 1, ms) };
    n > 0
}

/// Serve a connection on a thread of its own, or refuse it (503) when too many are open.
fn dispatch(stream: TcpStream, shared: &Arc<Shared>) {
    let mut stream = stream;
    let taken = shared
        .connections
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < shared.limits.max_connections).then_some(n + 1)
        });
    if taken.is_err() {
        http::refuse_busy(&mut stream);
        return;
    }
    let slot = ConnectionSlot(Arc::clone(shared));
    let spawned = std::thread::Builder::new()
        .name("serve-conn".into())
        .spawn(move || {
            let slot = slot;
            let _ = stream.set_nonblocking(false);
            let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
            let conn = http::Conn::new(stream, slot.0.limits.idle_timeout);
            routes::handle(conn, &slot.0);
        });
    if let Err(e) = spawned {
        // The closure, with the stream and the slot, is dropped: the connection closes.
        say(&format!(
            "ai serve: cannot start a thread for a connection: {e}"
        ));
    }
}

/// A place among the open connections, given back when dropped.
struct ConnectionSlot(Arc<Shared>);

impl Options {
    /// Will `ai serve` make the token (none given)?
    fn token_generated(&self) -> bool {
        !self.no_auth
            && self.token.is_none()
            && std::env::var("AI_CLI_SERVER_TOKEN").map_or(true, |t| t.is_empty())
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::SeqCst);
    }
}
