//! Which store the tests' knowledge bases live in: one set of knowledge-base tests, two stores.
//! By default every base is a SQLite file in the test's home. With `AI_TEST_KB_STORE=postgres`
//! (`.ci/run` runs the knowledge-base tests a second time so), every `ai kb add` a test makes
//! without `--store` gets `--store postgres`, and every call of that test gets
//! `AI_KB_DATABASE_URL`: a database of its own on the shared test server
//! ([`postgres::shared`]), made when the test adds its first base and dropped with its
//! [`Env`](super::Env). A test that looks at the SQLite file itself (damage, a full disk, the
//! file's layout) says so with [`sqlite_only`] and passes without doing anything on PostgreSQL.

use std::process::Command;
use std::sync::OnceLock;

use super::postgres;

/// Whether this run keeps knowledge bases on PostgreSQL (`AI_TEST_KB_STORE=postgres`).
pub fn on_postgres() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| match std::env::var("AI_TEST_KB_STORE").as_deref() {
        Ok("postgres") => true,
        Ok("" | "sqlite") | Err(_) => false,
        Ok(other) => panic!("AI_TEST_KB_STORE={other}: say sqlite or postgres"),
    })
}

/// True (and a line saying why) when this run is on PostgreSQL and the test is about the
/// SQLite file: `if sqlite_only("…") { return; }`.
pub fn sqlite_only(why: &str) -> bool {
    if on_postgres() {
        eprintln!("SQLite only: {why}");
    }
    on_postgres()
}

/// The test's database on the shared server, made on first use.
#[derive(Default)]
pub struct KbStore {
    database: OnceLock<(String, String)>,
}

impl KbStore {
    /// The URL of the test's database, made now if it is not yet.
    fn url(&self) -> &str {
        &self
            .database
            .get_or_init(|| {
                let pg = postgres::shared().unwrap_or_else(|| {
                    panic!("AI_TEST_KB_STORE=postgres needs the test PostgreSQL server")
                });
                let db = pg.database();
                (pg.url(&db), db)
            })
            .0
    }

    /// Put the bases of this call on PostgreSQL when the run says so: `--store postgres`
    /// after `kb add` (when the test gives no store), and the test's database in
    /// `AI_KB_DATABASE_URL`.
    pub(super) fn apply(&self, cmd: &mut Command, words: &mut Vec<String>) {
        if !on_postgres() {
            return;
        }
        let adds = words.windows(2).any(|w| w[0] == "kb" && w[1] == "add")
            && !words
                .iter()
                .any(|w| w == "--store" || w.starts_with("--store="));
        if adds {
            self.url();
            cmd.args(["--store", "postgres"]);
            words.extend(["--store".to_owned(), "postgres".to_owned()]);
        }
        if let Some((url, _)) = self.database.get() {
            cmd.env("AI_KB_DATABASE_URL", url);
        }
    }

    /// Run `sql` in the test's database (made now if it is not yet); its rows as
    /// [`Pg::psql`](postgres::Pg::psql) gives them.
    #[allow(dead_code)]
    pub fn psql(&self, sql: &str) -> String {
        self.url();
        let (_, db) = self.database.get().expect("made above");
        postgres::shared().expect("the server").psql(db, sql)
    }

    /// The URL every call of the test gets in `AI_KB_DATABASE_URL` (a test that starts `ai`
    /// another way than through [`Env`](super::Env) passes it on), once a base was added.
    #[allow(dead_code)]
    pub fn database_url(&self) -> Option<&str> {
        self.database.get().map(|(u, _)| u.as_str())
    }
}

impl Drop for KbStore {
    fn drop(&mut self) {
        if let (Some((_, db)), Some(pg)) = (self.database.get(), postgres::shared()) {
            pg.drop_database(db);
        }
    }
}
