//! Knowledge bases on PostgreSQL with pgvector (issue 18): the server the tests start
//! themselves (tests/support/postgres.rs).

use crate::support::postgres;

#[test]
fn the_test_server_has_pgvector_pg_trgm_and_unaccent() {
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    pg.psql(
        &db,
        "CREATE EXTENSION vector; CREATE EXTENSION pg_trgm; CREATE EXTENSION unaccent",
    );
    // The first cosine distance is where a pgvector built for other CPUs dies.
    let d = pg.psql(
        &db,
        "SELECT round(('[1,0,0]'::vector <=> '[0,1,0]'::vector)::numeric, 3)",
    );
    assert_eq!(d, "1.000");
    assert_eq!(
        pg.psql(&db, "SELECT unaccent('Über Straße')"),
        "Uber Strasse"
    );
    // Each test has a database of its own.
    assert_ne!(pg.database(), db);
}
