//! The hosts a scenario runs on: the core's catalog dispatcher over a `MemStore` ("core over
//! memory", [`memory`]) or the worker's `Worker::call` over an `FsStore` in a temp data_dir
//! ("worker over fs", [`worker`]) or over a `PgStore` on a fresh schema of the test database
//! ("worker over postgres", run only when `SESSION_MANAGER_TEST_PG_URL` names one, else reported
//! skipped). `main` runs the pure scenarios once per host; every world of a run is built on the
//! host [`select`]ed for it.

mod memory;
mod worker;

use std::fmt;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use session_core::record::SessionState;
use session_core::{Emitted, Limits, ManualClock, SeqIds, SessionError, Store};

/// Which host a run's worlds are built over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostKind {
    /// The core's catalog dispatcher over a `MemStore`.
    Memory,
    /// `Worker::call` (locks, inline vs blocking path, mode gate, publishing) over an `FsStore`.
    Worker,
    /// `Worker::call` over a `PgStore` (the test database).
    Postgres,
}

/// The variable naming the test database (scripts/test.sh starts a throwaway server).
pub const PG_URL_VAR: &str = "SESSION_MANAGER_TEST_PG_URL";

impl HostKind {
    /// Every host, in the order the suite runs them.
    pub const ALL: [HostKind; 3] = [HostKind::Memory, HostKind::Worker, HostKind::Postgres];

    /// The name the report gives this host's run (appended to each pure feature's name).
    pub fn label(self) -> &'static str {
        match self {
            HostKind::Memory => "core over memory",
            HostKind::Worker => "worker over fs",
            HostKind::Postgres => "worker over postgres",
        }
    }

    /// Whether this host is the worker's (over either store).
    pub fn is_worker(self) -> bool {
        self != HostKind::Memory
    }
}

/// The test database's URL, when one is given.
pub fn pg_url() -> Option<String> {
    std::env::var(PG_URL_VAR).ok().filter(|u| !u.is_empty())
}

/// The current run's host (runs are sequential: `main` sets it before each).
static RUN: AtomicU8 = AtomicU8::new(0);
/// Schemas the postgres run made, dropped after it.
pub static PG_SCHEMAS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static NEXT_SCHEMA: AtomicUsize = AtomicUsize::new(0);

/// Builds the worlds of the next run over `kind`.
pub fn select(kind: HostKind) {
    RUN.store(kind as u8, Ordering::SeqCst);
}

/// A fresh, empty host of the current run, reading time and ids from `clock` and `ids`.
pub fn build(clock: Arc<ManualClock>, ids: Arc<SeqIds>) -> Box<dyn Host> {
    let run = RUN.load(Ordering::SeqCst);
    if run == HostKind::Worker as u8 {
        let dir = tempfile::tempdir().expect("a temp data_dir");
        Box::new(worker::WorkerHost::new(clock, ids, worker::Backend::Fs(dir)))
    } else if run == HostKind::Postgres as u8 {
        let url = pg_url().expect("the postgres run needs the test database");
        let n = NEXT_SCHEMA.fetch_add(1, Ordering::SeqCst);
        let schema = format!("bdd_{}_{n}", std::process::id());
        PG_SCHEMAS.lock().unwrap_or_else(|p| p.into_inner()).push(schema.clone());
        let config =
            session_manager::config::PostgresAdapterConfig { url, max_connections: 2, schema };
        Box::new(worker::WorkerHost::new(clock, ids, worker::Backend::Postgres(config)))
    } else {
        Box::new(memory::MemoryHost::new(clock, ids))
    }
}

/// A failed call as its caller sees it: the error code and the `"<code>: <text>"` message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    pub code: String,
    pub message: String,
}

impl From<&SessionError> for CallError {
    fn from(e: &SessionError) -> Self {
        CallError { code: e.code.as_str().to_string(), message: e.message() }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// What one call did.
#[derive(Debug)]
pub struct Called {
    pub result: Result<Value, CallError>,
    /// The events it fired, in order (none when it failed).
    pub events: Vec<Emitted>,
    /// Every delivery to a scenario binding: (binding name, payload), in order.
    pub deliveries: Vec<(String, Value)>,
}

/// One host: where calls run, bindings live and the store is kept.
pub trait Host: fmt::Debug {
    /// Runs catalog function `function_id` with the live `limits`. Panics on an id outside the
    /// catalog (the scenario is wrong).
    fn call(&mut self, limits: Limits, function_id: &str, payload: Value) -> Called;
    /// Binds scenario binding `name` on `trigger_type`; the rejection text on a bad config.
    fn bind(&mut self, name: &str, trigger_type: &str, config: &Value) -> Result<(), String>;
    /// Removes binding `name` of `trigger_type`.
    fn unbind(&mut self, name: &str, trigger_type: &str);
    /// Closes the store and opens it again on what it kept (see each host for what that means).
    fn restart(&mut self);
    /// The store itself (for direct `catalog::call`s and dumps).
    fn store(&self) -> Arc<dyn Store + Send + Sync>;
    /// Every stored session's full state (meta, entries, leaf, commit markers), sorted by id.
    fn session_states(&self) -> Vec<(String, SessionState)>;
}

/// The function a scenario binding `name` is bound to.
fn function_id(name: &str) -> String {
    format!("bdd::{name}")
}

/// The scenario binding a delivery to `function_id` is for.
fn binding_name(function_id: &str) -> Option<&str> {
    function_id.strip_prefix("bdd::")
}
