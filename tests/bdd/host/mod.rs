//! The hosts a scenario runs on: the core's catalog dispatcher over a `MemStore` ("core over
//! memory", [`memory`]) or the worker's `Worker::call` over an `FsStore` in a temp data_dir
//! ("worker over fs", [`worker`]). `main` runs the pure scenarios once per host; every world of a
//! run is built on the host [`select`]ed for it.

mod memory;
mod worker;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
}

impl HostKind {
    /// Both hosts, in the order the suite runs them.
    pub const ALL: [HostKind; 2] = [HostKind::Memory, HostKind::Worker];

    /// The name the report gives this host's run (appended to each pure feature's name).
    pub fn label(self) -> &'static str {
        match self {
            HostKind::Memory => "core over memory",
            HostKind::Worker => "worker over fs",
        }
    }
}

/// Whether the current run is the worker's (runs are sequential: `main` sets it before each).
static WORKER_RUN: AtomicBool = AtomicBool::new(false);

/// Builds the worlds of the next run over `kind`.
pub fn select(kind: HostKind) {
    WORKER_RUN.store(kind == HostKind::Worker, Ordering::SeqCst);
}

/// A fresh, empty host of the current run, reading time and ids from `clock` and `ids`.
pub fn build(clock: Arc<ManualClock>, ids: Arc<SeqIds>) -> Box<dyn Host> {
    if WORKER_RUN.load(Ordering::SeqCst) {
        Box::new(worker::WorkerHost::new(clock, ids))
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
