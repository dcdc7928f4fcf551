//! The PostgreSQL store (`--store postgres://…`): a knowledge base shared by a team. Each base
//! has a schema of its own, `ai_kb_NAME`, with the tables of the SQLite store: `meta` (schema
//! version, embedding model and size, …), `notes`, and `chunks` whose rows carry the passage,
//! its vector (pgvector, `vector(N)` with an HNSW index for cosine distance once the size is
//! known), its keywords as a `tsvector` (the `simple` configuration over the Snowball stems the
//! sync computes, unaccented: title A, aliases B, heading C, text D) and its folded text for
//! pg_trgm (compound parts: `sicherung` in "Datenbanksicherung").
//!
//! Concurrency: every write happens in transactions; a sync holds a session advisory lock on
//! its base for its whole run (another sync of the same base, from any machine, waits for it),
//! and the server drops the lock and rolls back the open transaction when a sync dies. Searches
//! read a committed state (MVCC).
//!
//! The client is the `postgres` crate (a small tokio runtime inside, made only here), with TLS
//! through rustls when the server offers it, as libpq: `sslmode=prefer` (the default) and
//! `require` encrypt without checking the server's certificate, `verify-ca` and `verify-full`
//! check it against `sslrootcert` (a PEM file, `system`, or `~/.postgresql/root.crt`),
//! `disable` never tries; `PGSSLMODE`, `PGSSLROOTCERT` and `PGCHANNELBINDING` when the URL
//! does not say.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

use postgres::types::{ToSql, Type};
use postgres::{Client, Statement};

use super::{
    Keywords, Kind, Known, Linked, NoteNames, NoteRow, Passage, PassageRow, Store, StoreError,
    StoreResult, Table,
};
use crate::error::{Error, Result};
use crate::kb::linked;

mod batch;
mod records;
mod search;
mod tls;

/// Bumped when the tables change shape; a newer one is refused with a hint.
pub(crate) const SCHEMA: u32 = 3;

pub(crate) struct Postgres {
    client: RefCell<Client>,
    name: String,
    /// The URL without its password.
    place: String,
    statements: RefCell<HashMap<String, Statement>>,
    /// A rebuild (`kb sync --full`) in progress on this connection: its tables are made in a
    /// schema beside the base's, `ai_kbnew_NAME`, switched in when it is done ([`Self::switch`]).
    rebuilding: std::cell::Cell<bool>,
    /// Whether the base's passages have the `heads` column ([`HEADS`]).
    heads: std::cell::Cell<bool>,
    /// How many passage rows this session wrote (a sync that wrote many tidies the table at
    /// its end; see `finish_sync`).
    wrote: std::cell::Cell<usize>,
    /// What the connection was made with: a cancel request goes the same way
    /// ([`Self::exec_cancellable`]).
    tls: tls::MakeTls,
}

/// A URL as it may be shown: without its password (in the user part or a `password=`
/// parameter). The client library takes everything before the URL's first `@` as the user
/// and password, even a `/` or `?` in them, and reads parameter names percent-decoded: what it
/// could take for the password is left out, so the user part ends at the last `@` (a `@` in a
/// parameter hides the host too, never a password).
pub(crate) fn redact(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let rest_start = scheme_end + 3;
        if let Some(at) = out[rest_start..].rfind('@')
            && let Some(colon) = out[rest_start..rest_start + at].find(':')
        {
            out.replace_range(rest_start + colon..rest_start + at, ":***");
        }
    }
    // `?password=…` or `&password=…` (the name may be percent-encoded), and `password=…`
    // after a space.
    let (head, query) = match out.find('?') {
        Some(q) => (&out[..=q], &out[q + 1..]),
        None => (out.as_str(), ""),
    };
    let query = query
        .split('&')
        .map(|part| match part.split_once('=') {
            Some((k, _)) if percent_decode(k).trim() == "password" => format!("{k}=***"),
            _ => part.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&");
    let joined = format!("{head}{query}");
    let mut result = String::with_capacity(joined.len());
    let mut rest = joined.as_str();
    while let Some(i) = rest.find("password=") {
        let before = &rest[..i];
        let boundary = before.is_empty() || before.ends_with(['?', '&', ' ']);
        result.push_str(before);
        result.push_str("password=");
        rest = &rest[i + "password=".len()..];
        if boundary {
            result.push_str("***");
            let end = rest.find(['&', ' ']).unwrap_or(rest.len());
            rest = &rest[end..];
        }
    }
    result.push_str(rest);
    result
}

/// The password for `user`@`host`:`port`/`db` in a pgpass file (`host:port:db:user:password`,
/// `*` matches anything, `\:` and `\\` escape).
fn pgpass(text: &str, host: &str, port: u16, db: &str, user: &str) -> Option<String> {
    let port = port.to_string();
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                }
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        fields.push(cur);
        if fields.len() != 5 {
            continue;
        }
        let ok = |f: &str, v: &str| f == "*" || f == v;
        if ok(&fields[0], host)
            && ok(&fields[1], &port)
            && ok(&fields[2], db)
            && ok(&fields[3], user)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

/// The name of a schema of base `name`: `prefix` and the name, or, when that is longer than
/// PostgreSQL keeps of a name (63 bytes: it cuts the rest silently, so two long base names
/// would share one schema), the name's start and a hash of all of it, the same on every machine.
fn schema_name(prefix: &str, name: &str) -> String {
    const MAX: usize = 63;
    let full = format!("{prefix}{name}");
    if full.len() <= MAX {
        return full;
    }
    let digest = ring::digest::digest(&ring::digest::SHA256, name.as_bytes());
    let hash: String = digest.as_ref()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut keep = MAX - prefix.len() - hash.len() - 1;
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    format!("{prefix}{}_{hash}", &name[..keep])
}

fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// A failure of the server, by kind.
fn classify(e: &postgres::Error) -> Kind {
    use postgres::error::SqlState;
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        return if *code == SqlState::LOCK_NOT_AVAILABLE
            || *code == SqlState::T_R_DEADLOCK_DETECTED
            || *code == SqlState::T_R_SERIALIZATION_FAILURE
            || *code == SqlState::QUERY_CANCELED
        {
            Kind::Busy
        } else if *code == SqlState::DISK_FULL || *code == SqlState::OUT_OF_MEMORY {
            Kind::DiskFull
        } else if *code == SqlState::INSUFFICIENT_PRIVILEGE
            || *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
            || *code == SqlState::READ_ONLY_SQL_TRANSACTION
        {
            Kind::Access
        } else if *code == SqlState::UNDEFINED_TABLE
            || *code == SqlState::UNDEFINED_COLUMN
            || *code == SqlState::DATA_CORRUPTED
            || *code == SqlState::INDEX_CORRUPTED
        {
            Kind::Damaged
        } else if *code == SqlState::ADMIN_SHUTDOWN
            || *code == SqlState::CRASH_SHUTDOWN
            || *code == SqlState::CANNOT_CONNECT_NOW
            || code.code().starts_with("08")
        {
            Kind::Unreachable
        } else {
            Kind::Bug
        };
    }
    // No answer from the server: closed, refused, timed out, or lost mid-query. Anything else
    // the client refused (a value it cannot convert) is ours.
    let io = std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>());
    let text = e.to_string();
    if e.is_closed() || io || text.contains("connect") || text.contains("timed out") {
        Kind::Unreachable
    } else {
        Kind::Bug
    }
}

/// Connect as `config` says, within its connect timeout for each host as libpq counts it:
/// until the server has signed the client in, not only until it took the connection (a
/// server that never answers, or something else on its port that waits for another
/// protocol, would hold `ai` forever). Ctrl+C or a termination signal ends the wait.
fn connect_within(
    config: &postgres::Config,
    tls: tls::MakeTls,
    place: &str,
    name: &str,
) -> Result<std::result::Result<Client, postgres::Error>> {
    let limit = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(Duration::from_secs(10))
        * u32::try_from(config.get_hosts().len().max(1)).unwrap_or(1);
    let (tx, rx) = std::sync::mpsc::channel();
    let config = config.clone();
    // Left to itself when it does not answer in time: its socket closes with the process,
    // or when the server lets go.
    std::thread::Builder::new()
        .name("pg-connect".into())
        .spawn(move || {
            let _ = tx.send(config.connect(tls));
        })
        .map_err(|e| Error::backend(format!("cannot start a thread to connect: {e}")))?;
    let deadline = std::time::Instant::now() + limit;
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(r) => return Ok(r),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Error::backend(format!(
                    "cannot reach the server of knowledge base {name} ({place}): the connection ended"
                )));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        if crate::signal::interrupted() {
            return Err(Error::Interrupted);
        }
        if std::time::Instant::now() >= deadline {
            return Err(Error::backend(format!(
                "cannot reach the server of knowledge base {name} ({place}): it took the connection but did not answer as PostgreSQL within {} s",
                limit.as_secs()
            ))
            .hint("check that the URL names a PostgreSQL server's host and port, and that the server is not overloaded (connect_timeout=SECONDS in the URL waits longer)"));
        }
    }
}

/// The message of a server error without the URL in it.
fn detail(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_owned(),
        None => {
            let s = e.to_string();
            match std::error::Error::source(e) {
                Some(src) if !s.contains(&src.to_string()) => format!("{s}: {src}"),
                _ => s,
            }
        }
    }
}

/// `%XX` escapes of a URL's query value, decoded.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

const TABLES: &str = "
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE notes (
    n bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    path text NOT NULL,
    title text NOT NULL,
    ordering text,
    hash text NOT NULL,
    size bigint NOT NULL,
    mtime bigint NOT NULL,
    aliases text NOT NULL DEFAULT '',
    lang text
);
CREATE INDEX notes_path ON notes(path);
CREATE TABLE chunks (
    c bigserial PRIMARY KEY,
    note bigint NOT NULL REFERENCES notes(n) ON DELETE CASCADE,
    seq integer NOT NULL,
    heading text NOT NULL,
    start_line bigint NOT NULL,
    end_line bigint NOT NULL,
    text text NOT NULL,
    hash text NOT NULL,
    vector vector,
    words tsvector,
    gram_title text NOT NULL DEFAULT '',
    gram_heading text NOT NULL DEFAULT '',
    gram_text text NOT NULL DEFAULT '',
    grams text GENERATED ALWAYS AS (gram_title || ' ; ' || gram_heading || ' ; ' || gram_text) STORED
);
CREATE INDEX chunks_note ON chunks(note, seq);
CREATE INDEX chunks_unembedded ON chunks(c) WHERE vector IS NULL;
";

/// The indexes searches read the passages by: their keywords (`words`, `heads`), the trigrams
/// of compound parts (`grams`), and the vectors' HNSW graph (cosine; once the column has a
/// size). Made at the end of a sync or copy over all rows at once ([`Postgres::index_rows`]):
/// a first sync of 2,000 notes spends 70% of its writes on the trigram index when it follows
/// every insert, and an HNSW index built row by row took 57 s where the whole sync now takes
/// 21 s.
const ROW_INDEXES: &str = "
CREATE INDEX IF NOT EXISTS chunks_words ON chunks USING gin(words);
CREATE INDEX IF NOT EXISTS chunks_heads ON chunks USING gin(heads);
CREATE INDEX IF NOT EXISTS chunks_grams ON chunks USING gin(grams gin_trgm_ops);
";
const VECTOR_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS chunks_vector ON chunks USING hnsw (vector vector_cosine_ops);";

/// The keywords of titles, aliases and headings alone (weights A, B, C of `words`), indexed
/// ([`ROW_INDEXES`]): a search for common words looks there only, and would otherwise read
/// every passage a word is in to check where it stands. Made by the server from `words` (an
/// `ai` that does not know the column writes it too), added by the next sync to a base made
/// before it.
const HEADS: &str = "
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS heads tsvector
    GENERATED ALWAYS AS (ts_filter(words, '{a,b,c}')) STORED;
";

/// The tables schema 2 added: the links of each note (`key`: the name's last part without
/// `.md`, in lowercase, as [`linked::key`] makes it; `l` keeps their order) and the documents
/// (HTML, PDF) that gave no text, as the SQLite store keeps them.
const LINKS_UNREAD: &str = "
CREATE TABLE links (
    l bigserial PRIMARY KEY,
    note bigint NOT NULL REFERENCES notes(n) ON DELETE CASCADE,
    line bigint NOT NULL,
    wiki boolean NOT NULL,
    name text NOT NULL,
    key text NOT NULL
);
CREATE INDEX links_note ON links(note);
CREATE INDEX links_key ON links(key);
CREATE TABLE unread (
    path text PRIMARY KEY,
    size bigint NOT NULL,
    mtime bigint NOT NULL,
    reason text NOT NULL
);
";

/// What schema 3 added: in how many passages each word is (`freqs`, a word as the `words`
/// column holds it), and how many passages there are (`passages` in `meta`), kept by the
/// server itself as rows are written: a search reads them in one indexed lookup where it
/// counted the passages of each of its words (a common word: most of the table). Triggers, so
/// that every writer keeps them (a sync, a copy, a keyword migration, an older path) in the
/// transaction that writes the rows: a sync killed midway leaves rows and counts as they were.
/// Inserts and deletes are counted a statement at a time; a change of `words` row by row
/// (the vectors' updates never fire it). The functions name the tables by the schema of the
/// rows, so a rebuild or copy renamed into place keeps counting its own.
const COUNTS: &str = "
CREATE TABLE freqs (word text PRIMARY KEY, n bigint NOT NULL);
INSERT INTO meta VALUES ('passages', '0');
CREATE FUNCTION counted_added() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE format('INSERT INTO %I.freqs AS f (word, n)
                      SELECT lexeme, count(*) FROM added, unnest(added.words)
                      GROUP BY lexeme ORDER BY lexeme
                  ON CONFLICT (word) DO UPDATE SET n = f.n + excluded.n', TG_TABLE_SCHEMA);
  EXECUTE format('UPDATE %I.meta SET value = (value::bigint + (SELECT count(*) FROM added))::text
                  WHERE key = ''passages''', TG_TABLE_SCHEMA);
  RETURN NULL;
END $f$;
CREATE FUNCTION counted_gone() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE format('UPDATE %I.freqs AS f SET n = f.n - g.k
                  FROM (SELECT lexeme, count(*) AS k FROM gone, unnest(gone.words)
                        GROUP BY lexeme) g
                  WHERE f.word = g.lexeme', TG_TABLE_SCHEMA);
  EXECUTE format('UPDATE %I.meta SET value = (value::bigint - (SELECT count(*) FROM gone))::text
                  WHERE key = ''passages''', TG_TABLE_SCHEMA);
  RETURN NULL;
END $f$;
CREATE FUNCTION counted_words() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  IF OLD.words IS NOT NULL THEN
    EXECUTE format('UPDATE %I.freqs SET n = n - 1 WHERE word = ANY($1)', TG_TABLE_SCHEMA)
      USING tsvector_to_array(OLD.words);
  END IF;
  IF NEW.words IS NOT NULL THEN
    EXECUTE format('INSERT INTO %I.freqs AS f (word, n) SELECT w, 1 FROM unnest($1) AS w
                    ORDER BY w ON CONFLICT (word) DO UPDATE SET n = f.n + 1', TG_TABLE_SCHEMA)
      USING tsvector_to_array(NEW.words);
  END IF;
  RETURN NULL;
END $f$;
CREATE TRIGGER chunks_added AFTER INSERT ON chunks REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION counted_added();
CREATE TRIGGER chunks_gone AFTER DELETE ON chunks REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION counted_gone();
CREATE TRIGGER chunks_words AFTER UPDATE OF words ON chunks
    FOR EACH ROW WHEN (OLD.words IS DISTINCT FROM NEW.words) EXECUTE FUNCTION counted_words();
";

/// How many passage rows a sync writes before it tidies the table at its end (`finish_sync`):
/// a first sync or a large change, not an edit of a few notes.
const VACUUM_AFTER: usize = 1_000;

/// The most memory (MB) the server is asked for to build an HNSW index in one go.
const INDEX_MEMORY_MB: u64 = 1024;

impl Postgres {
    /// Count passage rows written, for `finish_sync`.
    fn touched(&self, rows: usize) {
        self.wrote.set(self.wrote.get().saturating_add(rows));
    }

    /// Connect to the server at `url` and open (with `create`, make) the tables of `name`.
    pub(crate) fn open(name: &str, url: &str, create: bool) -> Result<Postgres> {
        let pg = Postgres::connect(name, url)?;
        pg.prepare(create)?;
        Ok(pg)
    }

    /// Connect to the server at `url` for a rebuild of `name` (`kb sync --full`): the base's
    /// tables are not looked at, so a damaged base can be rebuilt; [`Self::reset`] makes new
    /// ones, once the sync holds the base's lock.
    pub(crate) fn connect(name: &str, url: &str) -> Result<Postgres> {
        let place = redact(url);
        let mut tls = tls::tls_settings(name, url)?;
        let mut config: postgres::Config = tls.url.parse().map_err(|e| {
            Error::config(format!(
                "the store of knowledge base {name} is not a PostgreSQL URL ({place}): {e}"
            ))
            .hint("write it as postgres://USER@HOST:PORT/DATABASE")
        })?;
        // As libpq: a Unix socket is not encrypted, whatever sslmode says (PGSSLMODE=verify-full
        // in a profile must not keep `ai` from a server on this machine).
        let hosts = config.get_hosts();
        if !hosts.is_empty()
            && hosts
                .iter()
                .all(|h| matches!(h, postgres::config::Host::Unix(_)))
        {
            config.ssl_mode(postgres::config::SslMode::Disable);
            tls.check = tls::Check::Nothing;
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.application_name("ai");
        if config.get_password().is_none() {
            let user = config.get_user().unwrap_or("").to_owned();
            if let Some(p) = std::env::var_os("PGPASSWORD") {
                config.password(p.to_string_lossy().as_bytes());
            } else if let Some(file) = std::env::var_os("PGPASSFILE")
                .map(std::path::PathBuf::from)
                .or_else(|| dirs::home_dir().map(|h| h.join(".pgpass")))
                && let Ok(text) = std::fs::read_to_string(&file)
            {
                let host = match config.get_hosts().first() {
                    Some(postgres::config::Host::Tcp(h)) => h.clone(),
                    _ => "localhost".to_owned(),
                };
                let port = config.get_ports().first().copied().unwrap_or(5432);
                let db = config.get_dbname().unwrap_or(&user).to_owned();
                if let Some(p) = pgpass(&text, &host, port, &db, &user) {
                    config.password(p);
                }
            }
        }
        let make_tls = tls::config(name, &tls)?;
        let client = connect_within(&config, make_tls.clone(), &place, name)?.map_err(|e| {
            let kind = classify(&e);
            let why = detail(&e);
            if why.contains("server does not support TLS") {
                return Error::config(format!(
                    "the server of knowledge base {name} ({place}) does not offer TLS, which {} asks for",
                    tls.said
                ))
                .hint("turn TLS on at the server (ssl = on), or leave sslmode out of the URL and PGSSLMODE unset (prefer: encrypted when the server offers it)");
            }
            if why.contains("invalid peer certificate") {
                let e = Error::config(format!(
                    "the server of knowledge base {name} ({place}) did not prove who it is: {why}"
                ));
                return if why.contains("not valid for name") {
                    e.hint("give the server by a name its certificate is made out to (sslmode=verify-ca checks the authority only)")
                } else {
                    e.hint("give the authority that signed its certificate with sslrootcert=/path/to/root.crt in the URL (sslmode=require encrypts without checking the server)")
                };
            }
            if why.contains("channel binding check failed") {
                return Error::config(format!(
                    "the server of knowledge base {name} refused the sign-in ({place}): {why}"
                ))
                .hint("the hash of the server's certificate that ai sent (tls-server-end-point) is not the one the server computed: add channel_binding=disable to the URL to sign in without channel binding");
            }
            if why.contains("channel binding") {
                return Error::config(format!(
                    "the server of knowledge base {name} ({place}) did not sign in with channel binding, which the URL asks for (channel_binding=require): {why}"
                ))
                .hint("channel binding needs TLS and SCRAM-SHA-256 passwords at the server (ssl = on, password_encryption = scram-sha-256); or leave channel_binding out of the URL and PGCHANNELBINDING unset");
            }
            match kind {
                // pg_hba.conf has only `hostssl` lines for the client.
                Kind::Access if why.contains("no encryption") => Error::config(format!(
                    "the server of knowledge base {name} refused the sign-in ({place}): {why}"
                ))
                .hint(format!("the server takes TLS connections only: drop {}", tls.said)),
                Kind::Access => Error::config(format!(
                    "the server of knowledge base {name} refused the sign-in ({place}): {why}"
                ))
                .hint("check the user and password (in the URL, PGPASSWORD or ~/.pgpass)"),
                _ => Error::backend(format!(
                    "cannot reach the server of knowledge base {name} ({place}): {why}"
                ))
                .hint("check that the server runs and accepts connections, then try again"),
            }
        })?;
        Ok(Postgres {
            client: RefCell::new(client),
            name: name.to_owned(),
            place,
            statements: RefCell::new(HashMap::new()),
            rebuilding: std::cell::Cell::new(false),
            heads: std::cell::Cell::new(false),
            wrote: std::cell::Cell::new(0),
            tls: make_tls,
        })
    }

    fn schema(&self) -> String {
        if self.rebuilding.get() {
            self.beside()
        } else {
            quote_ident(&schema_name("ai_kb_", &self.name))
        }
    }

    /// The schema a rebuild is made in (no base's: their schemas start `ai_kb_`).
    fn beside(&self) -> String {
        quote_ident(&schema_name("ai_kbnew_", &self.name))
    }

    fn err(&self, e: &postgres::Error) -> StoreError {
        StoreError::new(classify(e), &self.name, &self.place, detail(e))
    }

    fn exec(&self, sql: &str) -> StoreResult<()> {
        self.client
            .borrow_mut()
            .batch_execute(sql)
            .map_err(|e| self.err(&e))
    }

    /// [`Self::exec`] for a statement that may run for minutes (an index build over every
    /// passage, a VACUUM): a Ctrl+C (or a termination signal) meanwhile cancels it at the
    /// server, as psql does, and it ends as [`Kind::Interrupted`] instead of when the server
    /// is done. A thread watches for the signal while the statement runs.
    fn exec_cancellable(&self, sql: &str) -> StoreResult<()> {
        use std::sync::atomic::{AtomicBool, Ordering};
        let token = self.client.borrow().cancel_token();
        let tls = self.tls.clone();
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let watching = std::sync::Arc::clone(&done);
        let watcher = std::thread::Builder::new()
            .name("pg-cancel".into())
            .spawn(move || {
                while !watching.load(Ordering::SeqCst) {
                    if crate::signal::interrupted() {
                        // Not sent (the server gone): the statement ends with the connection.
                        let _ = token.cancel_query(tls);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
        let result = self.exec(sql);
        done.store(true, Ordering::SeqCst);
        if let Ok(w) = watcher {
            let _ = w.join();
        }
        match result {
            Err(mut e) if crate::signal::interrupted() => {
                e.kind = Kind::Interrupted;
                Err(e)
            }
            r => r,
        }
    }

    /// `sql` is a whole `BEGIN; … COMMIT;`: rolled back when any statement of it fails, so the
    /// connection is usable again and nothing of it stays.
    fn transaction(&self, sql: &str) -> StoreResult<()> {
        let done = self.exec(sql);
        if done.is_err() {
            self.exec("ROLLBACK").ok();
        }
        done
    }

    fn stmt(&self, sql: &str) -> StoreResult<Statement> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let s = self
            .client
            .borrow_mut()
            .prepare(sql)
            .map_err(|e| self.err(&e))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_owned(), s.clone());
        Ok(s)
    }

    /// Rows of two columns (a passage and its score) as pairs.
    fn pairs<A, B>(&self, rows: &[postgres::Row]) -> StoreResult<Vec<(A, B)>>
    where
        A: for<'a> postgres::types::FromSql<'a>,
        B: for<'a> postgres::types::FromSql<'a>,
    {
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<std::result::Result<_, postgres::Error>>()
            .map_err(|e| self.err(&e))
    }

    fn rows(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<Vec<postgres::Row>> {
        let st = self.stmt(sql)?;
        self.client
            .borrow_mut()
            .query(&st, params)
            .map_err(|e| self.err(&e))
    }

    fn row(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<Option<postgres::Row>> {
        let st = self.stmt(sql)?;
        self.client
            .borrow_mut()
            .query_opt(&st, params)
            .map_err(|e| self.err(&e))
    }

    fn execute(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<u64> {
        let st = self.stmt(sql)?;
        self.client
            .borrow_mut()
            .execute(&st, params)
            .map_err(|e| self.err(&e))
    }

    fn count(&self, sql: &str) -> StoreResult<u64> {
        let n: i64 = self
            .typed(sql, &[])?
            .first()
            .map_or(Ok(0), |r| r.try_get(0))
            .map_err(|e| self.err(&e))?;
        Ok(n.max(0) as u64)
    }

    fn prepare(&self, create: bool) -> Result<()> {
        let schema = self.schema();
        let (exists, heads): (bool, bool) = self
            .typed(
                "SELECT to_regclass($1) IS NOT NULL, EXISTS (SELECT 1 FROM pg_attribute
                     WHERE attrelid = to_regclass($2) AND attname = 'heads' AND NOT attisdropped)",
                &[
                    (&format!("{schema}.meta"), Type::TEXT),
                    (&format!("{schema}.chunks"), Type::TEXT),
                ],
            )?
            .first()
            .map_or(Ok((false, false)), |r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .map_err(|e| self.err(&e))?;
        // Made now, with the column.
        self.heads.set(heads || !exists);
        if !exists {
            if !create {
                return Err(Error::not_found(format!(
                    "knowledge base {} has no index yet on {}",
                    self.name, self.place
                ))
                .hint(format!("build it with: ai kb sync {}", self.name)));
            }
            // One maker at a time (two machines adding the same base).
            let made = self.transaction(&format!(
                "BEGIN;
                 SELECT pg_advisory_xact_lock(hashtext('ai_kb'));
                 CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public;
                 CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
                 CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public;
                 CREATE SCHEMA IF NOT EXISTS {schema};
                 SET LOCAL search_path = {schema}, public;
                 DO $$ BEGIN
                   IF to_regclass('meta') IS NULL THEN
                     EXECUTE $t${TABLES}$t$;
                     EXECUTE $t${HEADS}$t$;
                     EXECUTE $t${LINKS_UNREAD}$t$;
                     EXECUTE $t${COUNTS}$t$;
                     INSERT INTO meta VALUES ('schema', '{SCHEMA}'), ('chunker', '{}'),
                         ('keywords', '{}');
                   END IF;
                 END $$;
                 COMMIT;",
                super::CHUNKER,
                super::KEYWORDS
            ));
            made.map_err(|e| self.extension_error(e))?;
        }
        self.exec(&format!("SET search_path = {schema}, public"))?;
        if self.meta("schema")?.as_deref() == Some("1") {
            self.migrate_1()?;
        }
        if self.meta("schema")?.as_deref() == Some("2") {
            self.migrate_2()?;
        }
        match self.meta("schema")? {
            Some(v) if v == SCHEMA.to_string() => Ok(()),
            Some(v) => {
                let newer = v.parse::<u32>().is_ok_and(|n| n > SCHEMA);
                Err(StoreError::new(
                    Kind::Refused { found: v, newer },
                    &self.name,
                    &self.place,
                    "",
                )
                .into())
            }
            None => Err(StoreError::new(
                Kind::Damaged,
                &self.name,
                &self.place,
                "its schema version is missing",
            )
            .into()),
        }
    }

    /// A failure making the base's tables, naming the extension the server lacks when that
    /// is why.
    fn extension_error(&self, e: StoreError) -> Error {
        if let Some(ext) = ["vector", "pg_trgm", "unaccent"]
            .into_iter()
            .find(|x| e.detail.contains(&format!("\"{x}\"")))
        {
            let package = if ext == "vector" {
                "pgvector"
            } else {
                "postgresql-contrib"
            };
            return Error::config(format!(
                "the server of knowledge base {} ({}) cannot load the extension {ext}: {}",
                self.name, self.place, e.detail
            ))
            .hint(format!(
                "install {package} on the server (or ask its administrator to run: CREATE EXTENSION {ext})"
            ));
        }
        e.into()
    }

    /// Schema 1 to 2: the links and unread tables, and every note marked to be read again
    /// (its next sync fills the links). Under the base's lock of makers, once.
    fn migrate_1(&self) -> StoreResult<()> {
        self.transaction(&format!(
            "BEGIN;
             SELECT pg_advisory_xact_lock(hashtext('ai_kb'));
             DO $$ BEGIN
               IF (SELECT value FROM meta WHERE key = 'schema') = '1' THEN
                 EXECUTE $t${LINKS_UNREAD}$t$;
                 UPDATE notes SET mtime = -1;
                 UPDATE meta SET value = '2' WHERE key = 'schema';
               END IF;
             END $$;
             COMMIT;"
        ))
    }

    /// Schema 2 to 3: the counts of words and passages ([`COUNTS`]), counted once from the
    /// rows. The table is locked against writers first (a sync of another machine under way
    /// finishes before, the next one waits), so no row is written between the count and the
    /// triggers that keep it. Under the lock of makers, once.
    fn migrate_2(&self) -> StoreResult<()> {
        self.transaction(&format!(
            "BEGIN;
             SELECT pg_advisory_xact_lock(hashtext('ai_kb'));
             LOCK TABLE chunks IN SHARE ROW EXCLUSIVE MODE;
             DO $$ BEGIN
               IF (SELECT value FROM meta WHERE key = 'schema') = '2' THEN
                 EXECUTE $t${COUNTS}$t$;
                 INSERT INTO freqs SELECT lexeme, count(*) FROM chunks, unnest(words) GROUP BY lexeme;
                 UPDATE meta SET value = (SELECT count(*) FROM chunks)::text WHERE key = 'passages';
                 UPDATE meta SET value = '{SCHEMA}' WHERE key = 'schema';
               END IF;
             END $$;
             COMMIT;"
        ))
    }

    /// The note a link names, by the rules of [`linked::resolve`].
    fn resolve(&self, name: &str, wiki: bool) -> StoreResult<Option<Linked>> {
        const SELECT: &str = "SELECT id, title, ordering, path FROM notes";
        let one = |r: Option<postgres::Row>| {
            r.map(|r| linked_row(&r))
                .transpose()
                .map_err(|e| self.err(&e))
        };
        let by_id = one(self.row(&format!("{SELECT} WHERE id = $1"), &[&name])?)?;
        if by_id.is_some() {
            return Ok(by_id);
        }
        if !wiki {
            return one(self.row(
                &format!(
                    "{SELECT} WHERE path = $1::text OR path = $1::text || '.md'
                     ORDER BY path = $1::text DESC LIMIT 1"
                ),
                &[&name],
            )?);
        }
        let name = name.trim_start_matches('/');
        let bare = match name.len().checked_sub(3) {
            Some(k) if name.is_char_boundary(k) && name[k..].eq_ignore_ascii_case(".md") => {
                &name[..k]
            }
            _ => name,
        };
        if bare.is_empty() {
            return Ok(None);
        }
        let lit = linked::literal(bare);
        // ILIKE is case-insensitive, as Obsidian's lookup (and SQLite's LIKE) is; paths sort
        // by their bytes, as in SQLite.
        let by_file = one(self.row(
            &format!(
                "{SELECT} WHERE path ILIKE $1::text || '.md' OR path ILIKE '%/' || $1::text || '.md'
                    OR path ILIKE $1::text OR path ILIKE '%/' || $1::text
                 ORDER BY (path ILIKE $1::text || '.md' OR path ILIKE $1::text) DESC,
                     length(path), path COLLATE \"C\"
                 LIMIT 1"
            ),
            &[&lit],
        )?)?;
        if by_file.is_some() || bare.contains('/') {
            return Ok(by_file);
        }
        one(self.row(
            &format!(
                "{SELECT} WHERE lower(title) = lower($1::text)
                    OR (E'\\n' || aliases || E'\\n') ILIKE '%' || E'\\n' || $2::text || E'\\n' || '%'
                 ORDER BY lower(title) = lower($1::text) DESC, length(path), path COLLATE \"C\"
                 LIMIT 1"
            ),
            &[&bare, &lit],
        )?)
    }

    /// Make the base's tables again, empty, beside the old ones (the session keeps its sync
    /// lock). Searches and grounded turns meanwhile keep the whole old index, never none or a part;
    /// what a rebuild that died left there is dropped first.
    pub(crate) fn reset(&self) -> Result<()> {
        self.exec(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.beside()))?;
        self.rebuilding.set(true);
        self.statements.borrow_mut().clear();
        self.prepare(true)
    }

    /// The indexes of the passages ([`ROW_INDEXES`], and the vectors' once their column has a
    /// size) that are not there yet: made over all rows at once after a sync or copy wrote
    /// them into new tables, not row by row as they were written (a first sync, a `--full`
    /// rebuild, a copy; a later sync finds them made and they follow its writes). Until then a
    /// search reads every row (the same results, slower); a sync stopped before leaves them to
    /// the next one. The server may use memory for the build (`maintenance_work_mem`) as large
    /// as the table, or twice the vectors, at most [`INDEX_MEMORY_MB`].
    pub(super) fn index_rows(&self) -> StoreResult<()> {
        let row = self
            .row(
                "SELECT to_regclass('chunks_words') IS NOT NULL AND to_regclass('chunks_heads') IS NOT NULL
                     AND to_regclass('chunks_grams') IS NOT NULL,
                     to_regclass('chunks_vector') IS NOT NULL,
                     pg_table_size('chunks'),
                     (SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem')",
                &[],
            )?
            .ok_or_else(|| StoreError::new(Kind::Damaged, &self.name, &self.place, "no chunks table"))?;
        let get = || -> std::result::Result<(bool, bool, i64, i64), postgres::Error> {
            Ok((
                row.try_get(0)?,
                row.try_get(1)?,
                row.try_get(2)?,
                row.try_get(3)?,
            ))
        };
        let (keywords, vectors, bytes, allowed_kb) = get().map_err(|e| self.err(&e))?;
        let dims = if vectors { None } else { self.vector_dims()? };
        if keywords && dims.is_none() {
            return Ok(());
        }
        let vector_bytes = match dims {
            // 4 bytes a dimension, and about as much again for the graph's neighbours.
            Some(d) => self.embedded()? * d as u64 * 8,
            None => 0,
        };
        let mb = (bytes.max(0) as u64).max(vector_bytes) >> 20;
        let mb = mb.clamp(64, INDEX_MEMORY_MB);
        // Raised, never lowered: an administrator may allow more (ALTER ROLE … SET
        // maintenance_work_mem), which a large HNSW build needs to be fast.
        let (set, reset) = if mb.saturating_mul(1024) > allowed_kb.max(0) as u64 {
            (
                format!("SET maintenance_work_mem = '{mb}MB';"),
                "RESET maintenance_work_mem;",
            )
        } else {
            (String::new(), "")
        };
        // In the caller's transaction when it has one (a copy's), else in one of its own. A
        // Ctrl+C cancels it (minutes at 100,000 notes): the indexes not made yet are made by
        // the next sync (or copy).
        self.exec_cancellable(&format!(
            "{set}
             {ROW_INDEXES}
             {}
             {reset}",
            if dims.is_some() { VECTOR_INDEX } else { "" }
        ))?;
        self.statements.borrow_mut().clear();
        Ok(())
    }

    /// Put a finished rebuild in the place of the base's tables, in one transaction.
    pub(crate) fn switch(&self) -> Result<()> {
        if !self.rebuilding.get() {
            return Ok(());
        }
        let beside = self.schema();
        self.rebuilding.set(false);
        let schema = self.schema();
        self.statements.borrow_mut().clear();
        // The old tables' lock may be a long wait (a slow search holds them): a Ctrl+C meanwhile
        // is looked at once it is taken, before the commit, and keeps the old base.
        let done = self
            .exec(&format!(
                "BEGIN;
                 DROP SCHEMA IF EXISTS {schema} CASCADE;
                 ALTER SCHEMA {beside} RENAME TO {schema};"
            ))
            .map_err(Error::from)
            .and_then(|()| crate::error::stop_if_interrupted())
            .and_then(|()| {
                self.exec(&format!("SET search_path = {schema}, public; COMMIT;"))
                    .map_err(Error::from)
            });
        if let Err(e) = done {
            self.exec("ROLLBACK").ok();
            self.rebuilding.set(true);
            return Err(e);
        }
        Ok(())
    }

    /// The size of the vectors column, when it has one.
    fn vector_dims(&self) -> StoreResult<Option<i32>> {
        let r = self.row(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass('chunks') AND attname = 'vector'",
            &[],
        )?;
        let m: Option<i32> = r
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(|e| self.err(&e))?;
        Ok(m.filter(|m| *m > 0))
    }
}

/// A term as a tsquery lexeme: quoted, with the columns (weights) it may be found in.
fn lexeme(term: &str, weights: &str) -> String {
    let t = term.replace('\\', "\\\\").replace('\'', "''");
    format!(
        "'{t}'{}{weights}",
        if weights.is_empty() { "" } else { ":" }
    )
}

/// An FTS5 expression as [`super::super::search`] writes them (`"a" OR ("b" OR "c") OR
/// {title heading} : "d"`) as a tsquery (`'a' | 'b' | 'c' | 'd':AC`).
fn tsquery(fts: &str) -> String {
    terms_of(fts)
        .into_iter()
        .map(|(t, w)| lexeme(&t, &w))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The terms of an FTS5 expression with the weights of the columns they are limited to.
fn terms_of(fts: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chars = fts.chars().peekable();
    let mut columns = String::new();
    let mut depth_with_columns: Option<usize> = None;
    let mut depth = 0usize;
    let mut single = false;
    while let Some(c) = chars.next() {
        match c {
            '{' => {
                let mut cols = String::new();
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                    cols.push(c);
                }
                columns = cols
                    .split_whitespace()
                    .filter_map(|c| match c {
                        "title" => Some('A'),
                        "aliases" => Some('B'),
                        "heading" => Some('C'),
                        "text" => Some('D'),
                        _ => None,
                    })
                    .collect();
                // The next term, or the next parenthesized group.
                while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ':') {
                    chars.next();
                }
                if chars.peek() == Some(&'(') {
                    chars.next();
                    depth += 1;
                    depth_with_columns = Some(depth);
                } else {
                    single = true;
                }
            }
            '(' => depth += 1,
            ')' => {
                if depth_with_columns == Some(depth) {
                    depth_with_columns = None;
                    columns.clear();
                }
                depth = depth.saturating_sub(1);
            }
            '"' => {
                let mut t = String::new();
                while let Some(c) = chars.next() {
                    if c == '"' {
                        if chars.peek() == Some(&'"') {
                            chars.next();
                            t.push('"');
                            continue;
                        }
                        break;
                    }
                    t.push(c);
                }
                out.push((t, columns.clone()));
                if single {
                    single = false;
                    columns.clear();
                }
            }
            _ => {}
        }
    }
    out
}

/// Folded text without its marks, as the keyword columns hold it.
const UNACCENT: &str = "public.unaccent";

impl Store for Postgres {
    fn place(&self) -> String {
        self.place.clone()
    }

    fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        self.typed(
            "SELECT value FROM meta WHERE key = $1",
            &[(&key, postgres::types::Type::TEXT)],
        )?
        .first()
        .map(|r| r.try_get(0))
        .transpose()
        .map_err(|e| self.err(&e))
    }

    fn set_meta(&self, key: &str, value: Option<&str>) -> StoreResult<()> {
        match value {
            Some(v) => self.execute(
                "INSERT INTO meta VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&key, &v],
            ),
            None => self.execute("DELETE FROM meta WHERE key = $1", &[&key]),
        }
        .map(|_| ())
    }

    fn migrate_keywords(&self) -> StoreResult<()> {
        // Every count is 0 once no passage has words: emptied first, so the trigger of each
        // row finds nothing to take from. Decremented row by row, one count is updated once for
        // each passage with its word in one transaction, each update reading the versions
        // the ones before it left: quadratic (1,500 passages: 14.4 s, against 0.9 s).
        self.exec(&format!(
            "BEGIN;
             DELETE FROM freqs;
             UPDATE chunks SET words = NULL;
             UPDATE notes SET mtime = -1, lang = NULL;
             INSERT INTO meta VALUES ('keywords', '{}'), ('reindexing', '1')
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value;
             COMMIT;",
            super::KEYWORDS
        ))
    }

    fn notes(&self) -> StoreResult<u64> {
        self.count("SELECT count(*) FROM notes")
    }

    fn passages(&self) -> StoreResult<u64> {
        // Kept by the server as rows are written ([`COUNTS`]).
        match self.meta("passages")?.and_then(|v| v.parse::<u64>().ok()) {
            Some(n) => Ok(n),
            None => self.count("SELECT count(*) FROM chunks"),
        }
    }

    fn embedded(&self) -> StoreResult<u64> {
        self.count("SELECT count(*) FROM chunks WHERE vector IS NOT NULL")
    }

    fn languages(&self) -> StoreResult<Vec<String>> {
        self.rows(
            "SELECT DISTINCT lang FROM notes WHERE lang IS NOT NULL ORDER BY lang",
            &[],
        )?
        .iter()
        .map(|r| r.try_get(0).map_err(|e| self.err(&e)))
        .collect()
    }

    fn disk_bytes(&self) -> u64 {
        let sql = "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
                   JOIN pg_namespace s ON s.oid = c.relnamespace
                   WHERE s.nspname = current_schema() AND c.relkind = 'r'";
        self.count(sql).unwrap_or(0)
    }

    fn lock_sync(&self) -> StoreResult<()> {
        // Held by this session until it ends: a sync that dies lets go of it.
        let key = format!("ai_kb_{}", self.name);
        self.execute("SELECT pg_advisory_lock(hashtext($1))", &[&key])
            .map(|_| ())
    }

    fn begin(&self) -> StoreResult<()> {
        self.exec("BEGIN")
    }

    fn commit(&self) -> StoreResult<()> {
        self.exec("COMMIT")
    }

    fn rollback(&self) {
        let _ = self.exec("ROLLBACK");
    }

    fn known(&self) -> StoreResult<HashMap<String, Known>> {
        let rows = self.rows(
            "SELECT n, id, path, hash, title, ordering, size, mtime, aliases, lang FROM notes",
            &[],
        )?;
        let mut out = HashMap::with_capacity(rows.len());
        for r in rows {
            let get = || -> std::result::Result<(String, Known), postgres::Error> {
                Ok((
                    r.try_get(1)?,
                    Known {
                        n: r.try_get(0)?,
                        path: r.try_get(2)?,
                        hash: r.try_get(3)?,
                        title: r.try_get(4)?,
                        ordering: r.try_get(5)?,
                        size: r.try_get(6)?,
                        mtime: r.try_get(7)?,
                        aliases: r.try_get(8)?,
                        lang: r.try_get(9)?,
                    },
                ))
            };
            let (id, k) = get().map_err(|e| self.err(&e))?;
            out.insert(id, k);
        }
        Ok(out)
    }

    fn stats_by_path(&self) -> StoreResult<HashMap<String, (i64, i64)>> {
        let rows = self.rows("SELECT path, size, mtime FROM notes", &[])?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.try_get(0).map_err(|e| self.err(&e))?,
                    (
                        r.try_get(1).map_err(|e| self.err(&e))?,
                        r.try_get(2).map_err(|e| self.err(&e))?,
                    ),
                ))
            })
            .collect()
    }

    fn insert_note(&self, note: &NoteRow<'_>) -> StoreResult<i64> {
        let r = self.row(
            "INSERT INTO notes (id, path, title, ordering, hash, size, mtime, aliases, lang)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING n",
            &[
                &note.id,
                &note.path,
                &note.title,
                &note.ordering,
                &note.hash,
                &note.size,
                &note.mtime,
                &note.aliases,
                &note.lang,
            ],
        )?;
        r.map_or(Ok(0), |r| r.try_get(0)).map_err(|e| self.err(&e))
    }

    fn update_note(&self, n: i64, note: &NoteRow<'_>) -> StoreResult<()> {
        self.execute(
            "UPDATE notes SET path = $2, title = $3, ordering = $4, hash = $5, size = $6, mtime = $7, aliases = $8, lang = $9 WHERE n = $1",
            &[
                &n,
                &note.path,
                &note.title,
                &note.ordering,
                &note.hash,
                &note.size,
                &note.mtime,
                &note.aliases,
                &note.lang,
            ],
        )
        .map(|_| ())
    }

    fn delete_note(&self, n: i64) -> StoreResult<()> {
        if self.delete_passages(n)? {
            self.vectors_changed()?;
        }
        self.execute("DELETE FROM notes WHERE n = $1", &[&n])
            .map(|_| ())
    }

    fn passages_of(&self, n: i64) -> StoreResult<Vec<(i64, String, String)>> {
        self.rows(
            "SELECT c, heading, text FROM chunks WHERE note = $1 ORDER BY seq",
            &[&n],
        )?
        .iter()
        .map(|r| {
            Ok((
                r.try_get(0).map_err(|e| self.err(&e))?,
                r.try_get(1).map_err(|e| self.err(&e))?,
                r.try_get(2).map_err(|e| self.err(&e))?,
            ))
        })
        .collect()
    }

    fn vectors_of(&self, n: i64) -> StoreResult<HashMap<String, Vec<f32>>> {
        let rows = self.rows(
            "SELECT hash, vector FROM chunks WHERE note = $1 AND vector IS NOT NULL",
            &[&n],
        )?;
        let mut out = HashMap::new();
        for r in rows {
            let h: String = r.try_get(0).map_err(|e| self.err(&e))?;
            let v: pgvector::Vector = r.try_get(1).map_err(|e| self.err(&e))?;
            out.insert(h, v.to_vec());
        }
        Ok(out)
    }

    fn delete_passages(&self, n: i64) -> StoreResult<bool> {
        self.touched(1);
        let r = self.row(
            "WITH gone AS (DELETE FROM chunks WHERE note = $1 RETURNING vector IS NOT NULL AS v)
             SELECT coalesce(bool_or(v), false) FROM gone",
            &[&n],
        )?;
        r.map_or(Ok(false), |r| r.try_get(0))
            .map_err(|e| self.err(&e))
    }

    fn insert_passage(&self, n: i64, p: &PassageRow<'_>) -> StoreResult<i64> {
        let vector = p.vector.map(|v| pgvector::Vector::from(v.to_vec()));
        let (seq, start, end) = (p.seq as i32, i64::from(p.start_line), i64::from(p.end_line));
        let r = self.row(
            "INSERT INTO chunks (note, seq, heading, start_line, end_line, text, hash, vector)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING c",
            &[
                &n, &seq, &p.heading, &start, &end, &p.text, &p.hash, &vector,
            ],
        )?;
        r.map_or(Ok(0), |r| r.try_get(0)).map_err(|e| self.err(&e))
    }

    fn index_keywords(&self, c: i64, k: &Keywords) -> StoreResult<()> {
        self.touched(1);
        self.execute(
            &format!(
                "UPDATE chunks SET words =
                    setweight(to_tsvector('simple', {UNACCENT}($2)), 'A') ||
                    setweight(to_tsvector('simple', {UNACCENT}($3)), 'B') ||
                    setweight(to_tsvector('simple', {UNACCENT}($4)), 'C') ||
                    setweight(to_tsvector('simple', {UNACCENT}($5)), 'D'),
                  gram_title = {UNACCENT}($6), gram_heading = {UNACCENT}($7),
                  gram_text = {UNACCENT}($8)
                 WHERE c = $1"
            ),
            &[
                &c,
                &k.title,
                &k.aliases,
                &k.heading,
                &k.text,
                &k.gram_title,
                &k.gram_heading,
                &k.gram_text,
            ],
        )
        .map(|_| ())
    }

    fn unindex(&self, c: i64) -> StoreResult<()> {
        self.touched(1);
        self.execute(
            "UPDATE chunks SET words = NULL, gram_title = '', gram_heading = '', gram_text = '' WHERE c = $1",
            &[&c],
        )
        .map(|_| ())
    }

    fn vectors_changed(&self) -> StoreResult<()> {
        // The HNSW index follows every write; nothing derived to mark stale.
        Ok(())
    }

    /// The column takes its size (when the sync knows it, before the first passage is written:
    /// on rows it is a rewrite of the table, 1.9 s at 2,000 notes). Its HNSW index is made once
    /// the vectors are written ([`Postgres::index_rows`]).
    fn size_vectors(&self, dims: usize) -> StoreResult<()> {
        if self.vector_dims()? != i32::try_from(dims).ok() {
            self.exec(&format!(
                "ALTER TABLE chunks ALTER COLUMN vector TYPE vector({dims})"
            ))?;
            self.statements.borrow_mut().clear();
        }
        Ok(())
    }

    fn unembedded(&self) -> StoreResult<Vec<(i64, usize)>> {
        self.rows(
            "SELECT c, (octet_length(heading) + octet_length(text) + 2)::bigint
             FROM chunks WHERE vector IS NULL ORDER BY c",
            &[],
        )?
        .iter()
        .map(|r| {
            let c: i64 = r.try_get(0).map_err(|e| self.err(&e))?;
            let b: i64 = r.try_get(1).map_err(|e| self.err(&e))?;
            Ok((c, b.max(0) as usize))
        })
        .collect()
    }

    fn embed_input(&self, c: i64) -> StoreResult<(String, String, String)> {
        let r = self
            .row(
                "SELECT c.heading, c.text, n.title FROM chunks c JOIN notes n ON n.n = c.note WHERE c.c = $1",
                &[&c],
            )?
            .ok_or_else(|| {
                StoreError::new(Kind::Damaged, &self.name, &self.place, "a passage is gone")
            })?;
        let get = || -> std::result::Result<_, postgres::Error> {
            Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))
        };
        get().map_err(|e| self.err(&e))
    }

    fn set_vector(&self, c: i64, v: &[f32]) -> StoreResult<()> {
        self.touched(1);
        self.size_vectors(v.len())?;
        let v = pgvector::Vector::from(v.to_vec());
        self.execute("UPDATE chunks SET vector = $2 WHERE c = $1", &[&c, &v])
            .map(|_| ())
    }

    fn set_vectors(&self, rows: &[(i64, Vec<f32>)]) -> StoreResult<()> {
        self.touched(rows.len());
        self.set_vectors_at_once(rows)
    }

    fn embed_inputs(&self, cs: &[i64]) -> StoreResult<Vec<(String, String, String)>> {
        self.embed_inputs_at_once(cs)
    }

    fn insert_passages(&self, n: i64, rows: &[(PassageRow<'_>, Keywords)]) -> StoreResult<()> {
        self.touched(rows.len());
        self.insert_passages_at_once(n, rows)
    }

    fn finish_sync(&self, _dims: usize) -> StoreResult<Option<String>> {
        // After writing many passages: their pages marked all-visible and the GIN indexes'
        // pending lists merged, as autovacuum would later. Searches right after the sync then
        // count words from the indexes without visiting every row (a search of three common
        // words over 10,000 notes: 700 → 280 ms). It reads the whole table (2.6 s at 10,000
        // notes), so a sync of a few edited notes leaves it to autovacuum. Not in a
        // transaction; skipped with a warning by the server for a user who does not own the
        // table. A saving, not a duty (as SQLite's compaction): the sync's rows are committed,
        // so a VACUUM that fails (a lock it cannot get in time, a cancel) is a warning, not
        // the sync's failure, and a rebuild is still put in place.
        // A Ctrl+C cancels either, and the sync stops (exit 130) as it does elsewhere.
        self.index_rows()?;
        if self.wrote.replace(0) >= VACUUM_AFTER
            && let Err(e) = self.exec_cancellable("VACUUM (ANALYZE) chunks")
        {
            if e.kind == Kind::Interrupted {
                return Err(e);
            }
            return Ok(Some(format!(
                "warning: knowledge base {} is synced, but tidying its passages after the sync (VACUUM) failed: {}; the server's autovacuum does it later",
                self.name, e.detail
            )));
        }
        Ok(None)
    }

    fn doc_freq(&self, word: &str) -> StoreResult<u64> {
        let q = lexeme(word, "");
        let r = self.row(
            &format!(
                "SELECT count(*) FROM chunks WHERE words @@ to_tsquery('simple', {UNACCENT}($1))"
            ),
            &[&q],
        )?;
        let n: i64 = r
            .map_or(Ok(0), |r| r.try_get(0))
            .map_err(|e| self.err(&e))?;
        Ok(n.max(0) as u64)
    }

    fn doc_freqs(&self, words: &[String], cap: u64) -> StoreResult<Vec<u64>> {
        self.doc_freqs_at_once(words, cap)
    }

    fn matches_fewer_each(
        &self,
        table: Table,
        queries: &[String],
        cap: usize,
    ) -> StoreResult<Vec<bool>> {
        self.matches_fewer_at_once(table, queries, cap)
    }

    fn passages_by(&self, cs: &[i64]) -> StoreResult<Vec<Option<Passage>>> {
        self.passages_at_once(cs)
    }

    fn matches_fewer(&self, table: Table, query: &str, cap: usize) -> StoreResult<bool> {
        let cap = cap as i64;
        let n: i64 = match table {
            Table::Words => self.row(
                &format!(
                    "SELECT count(*) FROM (SELECT 1 FROM chunks WHERE words @@ to_tsquery('simple', {UNACCENT}($1)) LIMIT $2) m"
                ),
                &[&tsquery(query), &cap],
            )?,
            Table::Grams => self.row(
                "SELECT count(*) FROM (SELECT 1 FROM chunks WHERE grams LIKE ANY($1) LIMIT $2) m",
                &[&like_patterns(query), &cap],
            )?,
        }
        .map_or(Ok(0), |r| r.try_get(0))
        .map_err(|e| self.err(&e))?;
        Ok((n as usize) < cap as usize)
    }

    fn keyword(
        &self,
        table: Table,
        weights: &[f64],
        query: &str,
        limit: usize,
    ) -> StoreResult<Vec<(i64, f64)>> {
        let limit = limit as i64;
        let rows = match table {
            Table::Words => {
                // ts_rank_cd's weights are {D, C, B, A}: text, heading, aliases, title.
                // (at most 1 each: scaled by the largest)
                let top = weights.iter().copied().fold(f64::MIN_POSITIVE, f64::max);
                let w = |i: usize| (weights.get(i).copied().unwrap_or(1.0) / top) as f32;
                let ws: Vec<f32> = vec![w(3), w(2), w(1), w(0)];
                // Terms looked for in titles, aliases and headings only are found in their
                // column (the same passages, ranked by all their words).
                let terms = terms_of(query);
                let column = if self.heads.get()
                    && terms
                        .iter()
                        .all(|(_, w)| !w.is_empty() && w.chars().all(|c| "ABC".contains(c)))
                {
                    "heads"
                } else {
                    "words"
                };
                self.typed(
                    &format!(
                        "SELECT c, ts_rank_cd($3::real[], words, q, 1)::float8 AS s
                         FROM chunks, to_tsquery('simple', {UNACCENT}($1)) q
                         WHERE {column} @@ q ORDER BY s DESC, c LIMIT $2"
                    ),
                    &[
                        (&tsquery(query), Type::TEXT),
                        (&limit, Type::INT8),
                        (&ws, Type::FLOAT4_ARRAY),
                    ],
                )?
            }
            Table::Grams => {
                let w = |i: usize| weights.get(i).copied().unwrap_or(1.0);
                let (wt, wh, wx) = (w(0), w(1), w(2));
                self.typed(
                    "SELECT c, (SELECT sum(CASE WHEN gram_title LIKE p THEN $3::float8 ELSE 0 END
                                     + CASE WHEN gram_heading LIKE p THEN $4::float8 ELSE 0 END
                                     + CASE WHEN gram_text LIKE p THEN $5::float8 ELSE 0 END)
                               FROM unnest($1::text[]) p)::float8 AS s
                     FROM chunks WHERE grams LIKE ANY($1) ORDER BY s DESC, c LIMIT $2",
                    &[
                        (&like_patterns(query), Type::TEXT_ARRAY),
                        (&limit, Type::INT8),
                        (&wt, Type::FLOAT8),
                        (&wh, Type::FLOAT8),
                        (&wx, Type::FLOAT8),
                    ],
                )?
            }
        };
        self.pairs(&rows)
    }

    fn nearest(&self, query: &[f32], top: usize) -> StoreResult<Vec<(i64, f32)>> {
        if top == 0 {
            return Ok(Vec::new());
        }
        // HNSW returns at most ef_search candidates.
        self.exec(&format!(
            "SET hnsw.ef_search = {}",
            (top * 2).clamp(40, 1000)
        ))?;
        let v = pgvector::Vector::from(query.to_vec());
        let top = top as i64;
        let rows = self.rows(
            "SELECT c, (1 - (vector <=> $1))::real FROM chunks WHERE vector IS NOT NULL
             ORDER BY vector <=> $1 LIMIT $2",
            &[&v, &top],
        )?;
        self.pairs(&rows)
    }

    fn passage(&self, c: i64) -> StoreResult<Option<Passage>> {
        Ok(self.passages_at_once(&[c])?.pop().flatten())
    }

    fn find_note(&self, name: &str) -> StoreResult<Option<Linked>> {
        let linked = |r: &postgres::Row| -> std::result::Result<Linked, postgres::Error> {
            Ok(Linked {
                id: r.try_get(0)?,
                title: r.try_get(1)?,
                ordering: r.try_get(2)?,
                path: r.try_get(3)?,
            })
        };
        if let Some(r) = self.row(
            "SELECT id, title, ordering, path FROM notes WHERE id = $1 OR path = $1
             ORDER BY id = $1 DESC LIMIT 1",
            &[&name],
        )? {
            return linked(&r).map(Some).map_err(|e| self.err(&e));
        }
        let name = name.trim();
        if name.is_empty() {
            return Ok(None);
        }
        let bare = name.strip_suffix(".md").unwrap_or(name);
        let lit = linked::literal(bare);
        let r = self.row(
            "SELECT id, title, ordering, path FROM notes
             WHERE lower(path) = lower($1 || '.md')
                OR path ILIKE '%/' || $2 || '.md'
                OR lower(path) = lower($1)
                OR lower(title) = lower($1)
             ORDER BY path = $1 || '.md' DESC, path NOT LIKE '%/%' DESC, length(path), path
             LIMIT 1",
            &[&bare, &lit],
        )?;
        if r.is_some() {
            return r.map(|r| linked(&r)).transpose().map_err(|e| self.err(&e));
        }
        // As the SQLite store: else one of its aliases (a line of `aliases`), any case.
        let r = self.row(
            "SELECT id, title, ordering, path FROM notes
             WHERE (E'\\n' || aliases || E'\\n') ILIKE '%' || E'\\n' || $1::text || E'\\n' || '%'
             ORDER BY path NOT LIKE '%/%' DESC, length(path), path COLLATE \"C\"
             LIMIT 1",
            &[&linked::literal(name)],
        )?;
        r.map(|r| linked(&r)).transpose().map_err(|e| self.err(&e))
    }

    fn note_names(&self, cs: &[i64]) -> StoreResult<Vec<NoteNames>> {
        let rows = self.rows(
            "SELECT n.id, n.title, n.path, n.aliases
             FROM unnest($1::bigint[]) WITH ORDINALITY AS u(c, i)
             JOIN chunks ch ON ch.c = u.c JOIN notes n ON n.n = ch.note ORDER BY u.i",
            &[&cs],
        )?;
        rows.iter()
            .map(|r| {
                Ok(NoteNames {
                    id: r.try_get(0)?,
                    title: r.try_get(1)?,
                    path: r.try_get(2)?,
                    aliases: r.try_get(3)?,
                })
            })
            .collect::<std::result::Result<_, postgres::Error>>()
            .map_err(|e| self.err(&e))
    }

    fn passages_of_note(&self, id: &str) -> StoreResult<Vec<i64>> {
        let rows = self.rows(
            "SELECT c.c FROM chunks c JOIN notes n ON n.n = c.note WHERE n.id = $1 ORDER BY c.seq",
            &[&id],
        )?;
        rows.iter()
            .map(|r| r.try_get(0))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| self.err(&e))
    }

    fn linked_from(&self, note: &Linked) -> StoreResult<Vec<Linked>> {
        // As the SQLite store: the links whose key is one of the note's names (ID, file name,
        // title, aliases), kept when they resolve to it.
        let aliases: String = self
            .row("SELECT aliases FROM notes WHERE id = $1", &[&note.id])?
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(|e| self.err(&e))?
            .unwrap_or_default();
        let mut keys = vec![
            linked::key(&note.id),
            linked::key(&note.path),
            linked::key(&note.title),
        ];
        keys.extend(aliases.lines().map(linked::key));
        keys.sort_unstable();
        keys.dedup();
        let rows = self.rows(
            "SELECT * FROM (
                 SELECT DISTINCT l.name, l.wiki, n.id, n.title, n.ordering, n.path FROM links l
                 JOIN notes n ON n.n = l.note
                 WHERE l.key = ANY($1) AND n.id <> $2
             ) d ORDER BY path COLLATE \"C\"",
            &[&keys, &note.id],
        )?;
        let mut reaches: HashMap<(String, bool), bool> = HashMap::new();
        let mut out: Vec<Linked> = Vec::new();
        for r in rows {
            let get = || -> std::result::Result<(String, bool, Linked), postgres::Error> {
                Ok((
                    r.try_get(0)?,
                    r.try_get(1)?,
                    Linked {
                        id: r.try_get(2)?,
                        title: r.try_get(3)?,
                        ordering: r.try_get(4)?,
                        path: r.try_get(5)?,
                    },
                ))
            };
            let (name, wiki, from) = get().map_err(|e| self.err(&e))?;
            if out.last().is_some_and(|l| l.id == from.id) {
                continue;
            }
            let hit = match reaches.get(&(name.clone(), wiki)) {
                Some(&h) => h,
                None => {
                    let h = self.resolve(&name, wiki)?.is_some_and(|t| t.id == note.id);
                    reaches.insert((name, wiki), h);
                    h
                }
            };
            if hit {
                out.push(from);
                if out.len() >= linked::MAX_LINKED_FROM {
                    break;
                }
            }
        }
        Ok(out)
    }

    fn links(&self, id: &str) -> StoreResult<Vec<linked::Link>> {
        let rows = self.rows(
            "SELECT l.name, l.line, l.wiki FROM links l JOIN notes n ON n.n = l.note
             WHERE n.id = $1 ORDER BY l.l",
            &[&id],
        )?;
        let mut seen: HashMap<(String, bool), Option<Linked>> = HashMap::new();
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let get = || -> std::result::Result<(String, i64, bool), postgres::Error> {
                Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))
            };
            let (name, line, wiki) = get().map_err(|e| self.err(&e))?;
            let note = match seen.get(&(name.clone(), wiki)) {
                Some(n) => n.clone(),
                None => {
                    let n = self.resolve(&name, wiki)?;
                    seen.insert((name.clone(), wiki), n.clone());
                    n
                }
            };
            out.push(linked::Link {
                name,
                line: u32::try_from(line).unwrap_or(0),
                wiki,
                note,
            });
        }
        Ok(out)
    }

    fn prepare_sync(&self) -> StoreResult<()> {
        // The tables are made by the schema's migration when the base is opened (`prepare`),
        // which marks every note to be read again. The column of headings' keywords is derived
        // (no version of its own): added here, under the sync's lock.
        if !self.heads.get() {
            self.exec(HEADS)?;
            self.statements.borrow_mut().clear();
            self.heads.set(true);
        }
        Ok(())
    }

    fn set_links(&self, n: i64, links: &[linked::Written]) -> StoreResult<()> {
        self.set_links_at_once(n, links)
    }

    fn unread(&self) -> StoreResult<Vec<(String, i64, i64, String)>> {
        let rows = self.rows(
            "SELECT path, size, mtime, reason FROM unread ORDER BY path COLLATE \"C\"",
            &[],
        )?;
        rows.iter()
            .map(|r| {
                let get = || -> std::result::Result<(String, i64, i64, String), postgres::Error> {
                    Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?))
                };
                get().map_err(|e| self.err(&e))
            })
            .collect()
    }

    fn set_unread(&self, path: &str, stat: (i64, i64), why: Option<&str>) -> StoreResult<()> {
        match why {
            Some(why) => self.execute(
                "INSERT INTO unread (path, size, mtime, reason) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (path) DO UPDATE
                 SET size = excluded.size, mtime = excluded.mtime, reason = excluded.reason",
                &[&path, &stat.0, &stat.1, &why],
            ),
            None => self.execute("DELETE FROM unread WHERE path = $1", &[&path]),
        }
        .map(|_| ())
    }
}

/// A note's row (`id, title, ordering, path`) as a [`Linked`].
fn linked_row(r: &postgres::Row) -> std::result::Result<Linked, postgres::Error> {
    Ok(Linked {
        id: r.try_get(0)?,
        title: r.try_get(1)?,
        ordering: r.try_get(2)?,
        path: r.try_get(3)?,
    })
}

/// The terms of an FTS5 expression as `LIKE` patterns for the folded text (`%term%`).
fn like_patterns(fts: &str) -> Vec<String> {
    terms_of(fts)
        .into_iter()
        .map(|(t, _)| format!("%{}%", linked::literal(&strip(&t))))
        .collect()
}

/// Latin letters without their marks (what unaccent does to the indexed text), as the search
/// folds them for SQLite's tokenizer.
fn strip(t: &str) -> String {
    super::strip_marks(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redact("postgres://ann:s3cret@db.example:5432/team"),
            "postgres://ann:***@db.example:5432/team"
        );
        assert_eq!(
            redact("postgres://ann@db/team?password=s3cret&sslmode=require"),
            "postgres://ann@db/team?password=***&sslmode=require"
        );
        assert_eq!(redact("postgres://db/team"), "postgres://db/team");
        assert_eq!(redact("postgresql://a:b:c@h/d"), "postgresql://a:***@h/d");
    }

    #[test]
    fn passwords_with_url_characters_or_encoded_names_never_show() {
        // The client takes all before the first `@` as user and password: a `/`, `?` or `@`
        // in the password is still the password.
        for (url, shown) in [
            ("postgres://u:pa/ss@h:1/db", "postgres://u:***@h:1/db"),
            ("postgres://u:pa?ss@h:1/db", "postgres://u:***@h:1/db"),
            ("postgres://u:pw@ss@h:1/db", "postgres://u:***@h:1/db"),
            (
                "postgres://u:a/b?c=d@h/db?sslmode=require",
                "postgres://u:***@h/db?sslmode=require",
            ),
            (
                "postgres://h/db?pass%77ord=s3cret&sslmode=require",
                "postgres://h/db?pass%77ord=***&sslmode=require",
            ),
            (
                "postgres://h/db?%70assword=s3cret",
                "postgres://h/db?%70assword=***",
            ),
        ] {
            assert_eq!(redact(url), shown, "{url}");
            let config: postgres::Config = url.parse().expect(url);
            if let Some(p) = config.get_password() {
                let p = String::from_utf8_lossy(p);
                assert!(!redact(url).contains(p.as_ref()), "{url}");
            }
        }
    }

    #[test]
    fn pgpass_lines_match_with_wildcards_and_escapes() {
        let text = "# comment\nother:5432:*:ann:no\ndb:*:team:ann:pa\\:ss\n*:*:*:*:any\n";
        assert_eq!(
            pgpass(text, "db", 5433, "team", "ann").as_deref(),
            Some("pa:ss")
        );
        assert_eq!(pgpass(text, "x", 1, "y", "z").as_deref(), Some("any"));
        assert_eq!(pgpass("h:1:d:u\n", "h", 1, "d", "u"), None);
    }

    #[test]
    fn fts_expressions_become_tsqueries() {
        assert_eq!(tsquery("\"a\" OR \"b\""), "'a' | 'b'");
        assert_eq!(
            tsquery("(\"lauf\" OR \"laufen\") OR \"x\""),
            "'lauf' | 'laufen' | 'x'"
        );
        assert_eq!(
            tsquery("{title aliases heading} : (\"the\" OR \"die\") OR {title heading} : \"a\""),
            "'the':ABC | 'die':ABC | 'a':AC"
        );
        assert_eq!(tsquery("\"it's\""), "'it''s'");
        assert_eq!(
            like_patterns("\"sicherung\" OR \"a_b\""),
            ["%sicherung%", "%a\\_b%"]
        );
    }

    #[test]
    fn long_base_names_get_schemas_of_their_own() {
        assert_eq!(schema_name("ai_kb_", "team"), "ai_kb_team");
        let n57 = "n".repeat(57);
        assert_eq!(schema_name("ai_kb_", &n57), format!("ai_kb_{n57}"));
        // Two names alike in their first 63 bytes, as PostgreSQL would cut them.
        let a = format!("{}a", "x".repeat(63));
        let b = format!("{}b", "x".repeat(63));
        for prefix in ["ai_kb_", "ai_kbnew_"] {
            let (sa, sb) = (schema_name(prefix, &a), schema_name(prefix, &b));
            assert_ne!(sa, sb);
            assert!(sa.len() <= 63 && sb.len() <= 63, "{sa} {sb}");
            assert!(sa.starts_with(prefix) && sa.contains("xxxx"), "{sa}");
            // The same on every machine, every time.
            assert_eq!(sa, schema_name(prefix, &a));
        }
        // Just over the limit is hashed too.
        let n58 = "n".repeat(58);
        assert_eq!(schema_name("ai_kb_", &n58).len(), 63);
        assert_ne!(schema_name("ai_kb_", &n58), format!("ai_kb_{}", &n58[..57]));
    }
}
