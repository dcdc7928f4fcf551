//! A tiny WebDriver client (the W3C protocol over HTTP, with ureq) driving headless Chromium
//! through chromedriver, for the page of `ai serve`. [`Browser::start`] finds chromedriver and
//! Chromium; without them it says how to install them and returns `None` (the test is skipped),
//! or fails when `AI_REQUIRE_BROWSER=1` (as `.ci/run` sets). Everything ends when the
//! [`Browser`] is dropped.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The key WebDriver names an element by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long `wait` waits at most (seconds).
const WAIT: u64 = 60;
/// How long one WebDriver command (a page load, Chromium's start) may take at most.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(180);

pub struct Browser {
    driver: Child,
    agent: ureq::Agent,
    /// `http://127.0.0.1:PORT/session/ID`.
    session: String,
    _profile: tempfile::TempDir,
}

/// A program on PATH, or in /usr/bin (Debian's place for both).
fn find(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let dirs = path.split(':').chain(["/usr/bin", "/usr/lib/chromium"]);
    for dir in dirs.filter(|d| !d.is_empty()) {
        for name in names {
            let p = Path::new(dir).join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

impl Browser {
    /// Start chromedriver and a headless Chromium with a fresh profile.
    pub fn start() -> Option<Browser> {
        let driver = find(&["chromedriver"]);
        let chromium = find(&["chromium", "chromium-browser", "google-chrome"]);
        let (Some(driver), Some(chromium)) = (driver, chromium) else {
            // `cargo test` on a fresh machine passes without them (the README's two commands are
            // the whole set-up); CI sets AI_REQUIRE_BROWSER=1 and installs them, so there the
            // page is always tested.
            let how = "the browser test needs Chromium and chromedriver: \
                       apt-get install -y chromium chromium-driver";
            if std::env::var("AI_REQUIRE_BROWSER").is_ok_and(|v| v == "1") {
                panic!("{how} (AI_REQUIRE_BROWSER=1 is set)");
            }
            eprintln!("SKIPPED: {how}");
            return None;
        };
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").expect("a free port");
            l.local_addr().expect("its address").port()
        };
        let child = Command::new(&driver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", driver.display()));
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // Generous: on a loaded 2-core machine starting Chromium or loading a page can take
            // far longer than on an idle one (30 s was hit); a hang still ends the test.
            .timeout_global(Some(COMMAND_TIMEOUT))
            .build()
            .into();
        let profile = tempfile::Builder::new()
            .prefix("ai-browser-")
            .tempdir()
            .expect("profile dir");
        let base = format!("http://127.0.0.1:{port}");
        let mut browser = Browser {
            driver: child,
            agent,
            session: String::new(),
            _profile: profile,
        };
        let start = Instant::now();
        loop {
            let ready = browser
                .agent
                .get(&format!("{base}/status"))
                .call()
                .ok()
                .and_then(|mut r| r.body_mut().read_json::<Value>().ok())
                .is_some_and(|v| v["value"]["ready"] == true);
            if ready {
                break;
            }
            assert!(
                start.elapsed() < COMMAND_TIMEOUT,
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let args = json!([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--window-size=1280,960",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-domain-reliability",
            "--no-pings",
            "--no-proxy-server",
            format!("--user-data-dir={}", browser._profile.path().display()),
        ]);
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args},
        }}});
        // Chromium's start is the slowest step under load: one more try if the first fails.
        let url = format!("{base}/session");
        let v = browser
            .try_call("POST", &url, Some(caps.clone()))
            .unwrap_or_else(|e| {
                eprintln!("{e}; trying once more");
                browser.call("POST", &url, Some(caps))
            });
        let id = v["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {v}"));
        browser.session = format!("{base}/session/{id}");
        Some(browser)
    }

    /// One WebDriver command; its `value`. A WebDriver error fails the test.
    fn call(&self, method: &str, url: &str, body: Option<Value>) -> Value {
        self.try_call(method, url, body)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// One WebDriver command; its `value`, or what went wrong.
    fn try_call(&self, method: &str, url: &str, body: Option<Value>) -> Result<Value, String> {
        let res = match (method, body) {
            ("GET", _) => self.agent.get(url).call(),
            ("DELETE", _) => self.agent.delete(url).call(),
            (_, body) => self.agent.post(url).send_json(body.unwrap_or(json!({}))),
        };
        let mut res = res.map_err(|e| format!("WebDriver {method} {url}: {e}"))?;
        let v: Value = res
            .body_mut()
            .with_config()
            .limit(64 * 1024 * 1024)
            .read_json()
            .map_err(|e| format!("WebDriver {method} {url}: not JSON: {e}"))?;
        let value = v.get("value").cloned().unwrap_or(Value::Null);
        if let Some(e) = value.get("error") {
            return Err(format!(
                "WebDriver {method} {url}: {e}: {}",
                value["message"]
            ));
        }
        Ok(value)
    }

    fn post(&self, path: &str, body: Value) -> Value {
        self.call("POST", &format!("{}{path}", self.session), Some(body))
    }

    /// Open a URL.
    pub fn go(&self, url: &str) {
        self.post("/url", json!({ "url": url }));
    }

    pub fn back(&self) {
        self.post("/back", json!({}));
    }

    /// Run a script in the page (`return …` gives a value); `arguments[0..]` are `args`.
    pub fn script(&self, script: &str, args: Value) -> Value {
        self.post("/execute/sync", json!({ "script": script, "args": args }))
    }

    /// The element a CSS selector finds first.
    pub fn find(&self, css: &str) -> String {
        let v = self.post("/element", json!({ "using": "css selector", "value": css }));
        v[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {v}"))
            .to_owned()
    }

    pub fn click(&self, css: &str) {
        let id = self.find(css);
        self.post(&format!("/element/{id}/click"), json!({}));
    }

    /// Type into an element (`\u{E007}` is Enter).
    pub fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css);
        self.post(&format!("/element/{id}/value"), json!({ "text": text }));
    }

    /// Wait until `script` returns something truthy; that value. The limit is a hang guard, not
    /// a timing check: generous, so a loaded machine never trips it.
    pub fn wait(&self, what: &str, script: &str) -> Value {
        let start = Instant::now();
        loop {
            let v = self.script(script, json!([]));
            let truthy = match &v {
                Value::Null | Value::Bool(false) => false,
                Value::String(s) => !s.is_empty(),
                Value::Number(n) => n.as_f64() != Some(0.0),
                _ => true,
            };
            if truthy {
                return v;
            }
            if start.elapsed() >= Duration::from_secs(WAIT) {
                // What the page shows says why (an error, a stalled stream, a refused call).
                let shown = self.script(
                    "return document.body ? document.body.innerText.slice(-3000) : ''",
                    json!([]),
                );
                panic!("timed out waiting for {what}; the page shows:\n{shown}");
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Size the window (CSS pixels): a phone's width, or a desktop's.
    pub fn resize(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({ "width": width, "height": height }));
    }

    /// A PNG of the window.
    pub fn screenshot(&self) -> Vec<u8> {
        let v = self.call("GET", &format!("{}/screenshot", self.session), None);
        base64(v.as_str().expect("a screenshot"))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.agent.delete(&self.session).call();
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Standard base64 (WebDriver's screenshots).
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for v in text.bytes().filter_map(value) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}
