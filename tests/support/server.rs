//! A tiny scripted HTTP/1.1 server on `127.0.0.1:0`, one per test. It records every request
//! and answers the N-th one with the N-th scripted reply ([`Server::start`]), or every one by
//! calling a function of the request ([`Server::respond`]), written in the pieces the reply
//! gives (with pauses between them if asked), optionally cutting the connection mid-body.
//! Every reply carries `Connection: close`, so each request arrives on a fresh connection.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    /// A header's value (names compare case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "request body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// How the body of a reply is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length` of the whole body.
    Length,
    /// No length: the body ends when the connection closes.
    Close,
    /// `Transfer-Encoding: chunked`, one chunk per piece.
    Chunked,
}

#[derive(Debug, Clone)]
enum Step {
    Bytes(Vec<u8>),
    Pause(Duration),
    /// Close the socket here, without finishing the body.
    Cut,
    /// Wait here until the test opens the gate.
    Hold(Gate),
}

/// A gate a reply waits at ([`Reply::hold`]) until the test opens it: what was sent before it
/// is all the client can have seen, however slowly the machine runs.
#[derive(Debug, Clone, Default)]
pub struct Gate(Arc<(Mutex<bool>, std::sync::Condvar)>);

impl Gate {
    pub fn new() -> Gate {
        Gate::default()
    }

    /// Let every reply waiting at the gate go on (and every later one pass).
    pub fn open(&self) {
        let (open, cv) = &*self.0;
        *open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = true;
        cv.notify_all();
    }

    /// Wait until it is open, or the server stops (false).
    fn pass(&self, stop: &AtomicBool) -> bool {
        let (open, cv) = &*self.0;
        let mut is_open = open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while !*is_open {
            if stop.load(Ordering::SeqCst) {
                return false;
            }
            // Woken by `open`; the timeout only looks at `stop` now and then.
            is_open = cv
                .wait_timeout(is_open, Duration::from_millis(50))
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        true
    }
}

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    steps: Vec<Step>,
    framing: Framing,
}

impl Reply {
    pub fn new(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            steps: Vec::new(),
            framing: Framing::Length,
        }
    }

    /// A JSON body, sent whole with a length.
    pub fn json(status: u16, body: &str) -> Reply {
        Reply::new(status)
            .header("Content-Type", "application/json")
            .body(body)
    }

    /// An SSE stream: each string is one write (chunked encoding), so events may be split
    /// anywhere the test likes.
    pub fn sse(pieces: &[&str]) -> Reply {
        let mut r = Reply::new(200)
            .header("Content-Type", "text/event-stream")
            .framing(Framing::Chunked);
        for p in pieces {
            r = r.body(p);
        }
        r
    }

    /// An NDJSON stream (Ollama): each string is one write.
    pub fn ndjson(pieces: &[&str]) -> Reply {
        let mut r = Reply::new(200)
            .header("Content-Type", "application/x-ndjson")
            .framing(Framing::Chunked);
        for p in pieces {
            r = r.body(p);
        }
        r
    }

    /// An AWS event stream (Bedrock): each frame is one write.
    pub fn eventstream(frames: &[Vec<u8>]) -> Reply {
        let mut r = Reply::new(200)
            .header("Content-Type", "application/vnd.amazon.eventstream")
            .framing(Framing::Chunked);
        for f in frames {
            r = r.bytes(f);
        }
        r
    }

    /// One more piece of body as raw bytes (binary framing).
    pub fn bytes(mut self, piece: &[u8]) -> Reply {
        self.steps.push(Step::Bytes(piece.to_vec()));
        self
    }

    pub fn header(mut self, k: &str, v: &str) -> Reply {
        self.headers.push((k.to_owned(), v.to_owned()));
        self
    }

    /// One more piece of body, written separately (one chunk when chunked).
    pub fn body(mut self, piece: &str) -> Reply {
        self.steps.push(Step::Bytes(piece.as_bytes().to_vec()));
        self
    }

    pub fn pause(mut self, ms: u64) -> Reply {
        self.steps.push(Step::Pause(Duration::from_millis(ms)));
        self
    }

    /// Send the rest only once `gate` is open.
    pub fn hold(mut self, gate: &Gate) -> Reply {
        self.steps.push(Step::Hold(gate.clone()));
        self
    }

    /// Drop the connection here: the rest of the body never comes.
    pub fn cut(mut self) -> Reply {
        self.steps.push(Step::Cut);
        self
    }

    pub fn framing(mut self, f: Framing) -> Reply {
        self.framing = f;
        self
    }
}

/// Answers every request, in place of a script.
type Responder = Box<dyn Fn(&Recorded) -> Reply + Send + Sync>;

struct Shared {
    requests: Mutex<Vec<Recorded>>,
    script: Mutex<std::collections::VecDeque<Reply>>,
    responder: Option<Responder>,
    stop: AtomicBool,
}

pub struct Server {
    addr: std::net::SocketAddr,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Start a server that answers requests with `script`, in order. A request beyond the
    /// script gets a 599 (which no client retries and every test notices).
    pub fn start(script: Vec<Reply>) -> Server {
        Server::launch(script, None)
    }

    /// Start a server that answers every request with `f(request)` (requests are recorded as
    /// with a script). `f` runs on the server's thread, one request at a time.
    pub fn respond(f: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Server {
        Server::launch(Vec::new(), Some(Box::new(f)))
    }

    fn launch(script: Vec<Reply>, responder: Option<Responder>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            requests: Mutex::new(Vec::new()),
            script: Mutex::new(script.into()),
            responder,
            stop: AtomicBool::new(false),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                serve(&s, conn);
            }
        });
        Server {
            addr,
            shared,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `127.0.0.1:PORT`.
    pub fn host_port(&self) -> String {
        self.addr.to_string()
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// The only request; fails the test when there were more or none.
    pub fn only(&self) -> Recorded {
        let r = self.requests();
        assert_eq!(r.len(), 1, "expected exactly one request, got {r:#?}");
        r.into_iter().next().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so the thread ends.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A port on 127.0.0.1 where nothing listens (one bound and released again), so a connection
/// is refused at once.
pub fn closed_port_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    drop(l);
    format!("http://{addr}")
}

fn serve(shared: &Shared, conn: TcpStream) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(match conn.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let Some(req) = read_request(&mut reader) else {
        return;
    };
    shared.requests.lock().unwrap().push(req.clone());
    let reply = match &shared.responder {
        // A responder that panics (a failed assertion in it) answers 598 and keeps the server
        // serving, so `ai` does not wait for a reply that never comes.
        Some(f) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&req)))
            .unwrap_or_else(|_| {
                Reply::json(
                    598,
                    r#"{"error":{"message":"the test's responder panicked"}}"#,
                )
            }),
        None => shared
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| {
                Reply::json(599, r#"{"error":{"message":"test script exhausted"}}"#)
            }),
    };
    let _ = write_reply(conn, &reply, &shared.stop);
}

fn read_request(r: &mut BufReader<TcpStream>) -> Option<Recorded> {
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end_matches(['\r', '\n']);
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _): &&(String, String)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if let Some(len) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(len, 0);
        r.read_exact(&mut body).ok()?;
    } else if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    }
    Some(Recorded {
        method,
        target,
        headers,
        body,
    })
}

fn write_reply(mut conn: TcpStream, reply: &Reply, stop: &AtomicBool) -> std::io::Result<()> {
    let reason = match reply.status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Whatever",
    };
    let mut head = format!(
        "HTTP/1.1 {} {reason}\r\nConnection: close\r\n",
        reply.status
    );
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let total: usize = reply
        .steps
        .iter()
        .map(|s| match s {
            Step::Bytes(b) => b.len(),
            _ => 0,
        })
        .sum();
    match reply.framing {
        Framing::Length => head.push_str(&format!("Content-Length: {total}\r\n")),
        Framing::Close => {}
        Framing::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes())?;
    conn.flush()?;
    for step in &reply.steps {
        match step {
            Step::Bytes(b) => {
                if reply.framing == Framing::Chunked {
                    if b.is_empty() {
                        continue; // an empty chunk would end the body
                    }
                    conn.write_all(format!("{:x}\r\n", b.len()).as_bytes())?;
                    conn.write_all(b)?;
                    conn.write_all(b"\r\n")?;
                } else {
                    conn.write_all(b)?;
                }
                conn.flush()?;
            }
            Step::Pause(d) => {
                // In slices, so a finished test does not wait for the pause to end.
                let until = std::time::Instant::now() + *d;
                while std::time::Instant::now() < until {
                    if stop.load(Ordering::SeqCst) {
                        return Ok(());
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            Step::Hold(gate) => {
                if !gate.pass(stop) {
                    return Ok(());
                }
            }
            Step::Cut => {
                // A hard close: the client sees the body end early.
                let _ = conn.shutdown(Shutdown::Both);
                return Ok(());
            }
        }
    }
    if reply.framing == Framing::Chunked {
        conn.write_all(b"0\r\n\r\n")?;
    }
    conn.flush()?;
    let _ = conn.shutdown(Shutdown::Write);
    // Let the client read everything before the socket is dropped (dropping with unread
    // input would send a reset that could eat the tail of the reply).
    let mut sink = [0u8; 256];
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    while let Ok(n) = conn.read(&mut sink) {
        if n == 0 {
            break;
        }
    }
    Ok(())
}
