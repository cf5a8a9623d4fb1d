//! The test database of the postgres adapter's tests: the server named by
//! `SESSION_MANAGER_TEST_PG_URL` (scripts/test.sh starts a throwaway one), one fresh schema per
//! store, dropped when the test binary ends; admin queries. (The worker's postgres tests include
//! this file by path.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use libtest_mimic::{Arguments, Failed, Trial};

use session_store_postgres::{PgStore, PostgresAdapterConfig};

/// The variable naming the test server.
pub const URL_VAR: &str = "SESSION_MANAGER_TEST_PG_URL";

/// The test server's URL, when one is given.
pub fn url() -> Option<String> {
    std::env::var(URL_VAR).ok().filter(|u| !u.is_empty())
}

static NEXT: AtomicUsize = AtomicUsize::new(0);
static MADE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A config for a schema no other store of any test binary uses.
pub fn fresh_config(url: &str) -> PostgresAdapterConfig {
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let schema = format!("test_{}_{n}", std::process::id());
    MADE.lock().unwrap_or_else(|p| p.into_inner()).push(schema.clone());
    PostgresAdapterConfig { url: url.into(), max_connections: 4, schema }
}

/// A store on a fresh schema.
pub fn fresh_store(url: &str) -> PgStore {
    PgStore::open(&fresh_config(url)).expect("the test database opens")
}

/// Drops every schema this binary made.
pub fn drop_schemas(url: &str) {
    let schemas = std::mem::take(&mut *MADE.lock().unwrap_or_else(|p| p.into_inner()));
    let url = url.to_string();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
    runtime.block_on(async move {
        let (client, connection) =
            tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("connect");
        tokio::spawn(connection);
        for schema in schemas {
            // A validated identifier of our own making.
            client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await.ok();
        }
    });
}

/// One admin query's rows (first column, as text).
pub fn admin(url: &str, sql: &str) -> Result<Vec<String>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        let rows = client.simple_query(sql).await.map_err(|e| e.to_string())?;
        Ok(rows
            .iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_string),
                _ => None,
            })
            .collect())
    })
}

/// A test of its own against the test server's URL.
pub type DbTest = fn(&str) -> Result<(), String>;

/// One trial per test, each handed the server's URL.
pub fn db_trials(tests: &[(&'static str, DbTest)], url: &Option<String>) -> Vec<Trial> {
    let trial = |&(name, test): &(&'static str, DbTest)| {
        let url = url.clone();
        Trial::test(name, move || {
            test(&url.expect("ignored without a server")).map_err(Failed::from)
        })
    };
    tests.iter().map(trial).collect()
}

/// Runs `trials` (every one reported ignored without a server), drops this binary's schemas and
/// exits with the run's status.
pub fn run_trials(trials: Vec<Trial>, url: Option<String>) -> ! {
    let trials = match url {
        Some(_) => trials,
        None => {
            println!("postgres tests skipped (reported ignored): {URL_VAR} is not set");
            trials.into_iter().map(|t| t.with_ignored_flag(true)).collect()
        }
    };
    let conclusion = libtest_mimic::run(&Arguments::from_args(), trials);
    if let Some(url) = url {
        drop_schemas(&url);
    }
    conclusion.exit()
}
