//! "worker over fs" and "worker over postgres": every call through `Worker::call` (session lock,
//! inline vs blocking path, mode gate, publishing through the emitter) over an `FsStore` in a
//! temp data_dir, or a `PgStore` on a fresh schema of the test database, built without an engine
//! and with the scenario's clock and ids. Bindings go through the worker's
//! trigger handler into the emitter's tables; the events of a call are the envelopes the emitter
//! feeds a `session::store::events` subscriber, decoded back. A restart drops the worker (the
//! `FsStore` closes) and opens a new one on the same data_dir (or schema); the binding tables are kept, as
//! the engine registers the bindings again when a worker reconnects.

use std::future::Future;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use iii_sdk::trigger::{TriggerConfig, TriggerHandler};
use iii_sdk::Error;
use serde_json::{json, Value};
use session_core::events::STORE_EVENTS;
use session_core::record::SessionState;
use session_core::wire::EventEnvelope;
use session_core::{catalog, jsonl, transfer, Emitted, Limits, ManualClock, SeqIds, Store};
use session_manager::config::{AdapterConfig, FsAdapterConfig, PostgresAdapterConfig};
use session_manager::emitter::{Delivery, Emitter, Sink};
use session_manager::runtime::Runtime;
use session_manager::triggers::BindingHandler;
use session_manager::worker::Worker;
use session_manager::SyncMode;

use super::{binding_name, function_id, CallError, Called, Host};

/// The worker's own engine URL (never dialled: there is no engine).
const URL: &str = "ws://bdd.invalid";

/// The function the store-events feed delivers every event to (not a scenario binding).
const EVENTS_FUNCTION: &str = "bdd-events::capture";

/// Records every delivery the emitter makes.
#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<Delivery>>);

#[async_trait]
impl Sink for Recorder {
    async fn deliver(&self, delivery: Delivery) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(delivery);
    }
}

#[derive(Debug)]
pub struct WorkerHost {
    /// `None` only while restarting.
    worker: Option<Worker>,
    emitter: Emitter,
    recorder: Arc<Recorder>,
    clock: Arc<ManualClock>,
    ids: Arc<SeqIds>,
    /// Declared last: removed after the worker closed its files.
    backend: Backend,
}

/// Where a worker host keeps its sessions.
#[derive(Debug)]
pub enum Backend {
    /// An fs store in this temp data_dir.
    Fs(tempfile::TempDir),
    /// A postgres store on this (fresh) schema.
    Postgres(PostgresAdapterConfig),
}

impl WorkerHost {
    pub fn new(clock: Arc<ManualClock>, ids: Arc<SeqIds>, backend: Backend) -> Self {
        let recorder = Arc::new(Recorder::default());
        let emitter = Emitter::new(recorder.clone());
        emitter
            .subscriptions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .bind(STORE_EVENTS, EVENTS_FUNCTION, EVENTS_FUNCTION, &json!({}))
            .expect("the store-events feed takes any config");
        let mut host = WorkerHost { worker: None, emitter, recorder, clock, ids, backend };
        host.worker = Some(host.open());
        host
    }

    /// A worker on this host's data_dir or schema. The fs store never fsyncs (`never`): the
    /// scenarios check semantics, and a restart reopens files the OS still holds.
    fn open(&self) -> Worker {
        let adapter = match &self.backend {
            Backend::Fs(dir) => AdapterConfig::Fs(FsAdapterConfig {
                data_dir: dir.path().to_string_lossy().into_owned(),
                fsync: SyncMode::Never,
            }),
            Backend::Postgres(config) => AdapterConfig::Postgres(config.clone()),
        };
        let runtime =
            Runtime::build(&adapter, URL, Default::default(), &self.emitter).expect("the runtime");
        Worker::new(None, URL.into(), runtime, Limits::default(), self.emitter.clone())
            .with_sources(self.clock.clone(), self.ids.clone())
    }

    fn worker(&self) -> &Worker {
        self.worker.as_ref().expect("the worker is open")
    }

    fn handler(&self, trigger_type: &str) -> Result<BindingHandler, String> {
        let trigger = catalog::all_trigger_types()
            .find(|t| t.id == trigger_type)
            .ok_or_else(|| format!("no trigger type {trigger_type}"))?;
        Ok(BindingHandler::new(trigger.id, self.emitter.subscriptions.clone()))
    }
}

/// Runs `future` to its end on the suite's tokio runtime (steps are synchronous; the worker's
/// blocking path needs the runtime's blocking pool).
fn block_on<F: Future>(future: F) -> F::Output {
    tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(future))
}

fn trigger_config(name: &str, config: Value) -> TriggerConfig {
    TriggerConfig {
        id: name.into(),
        function_id: function_id(name),
        config,
        metadata: None,
        namespace: None,
    }
}

impl Host for WorkerHost {
    fn call(&mut self, limits: Limits, function_id: &str, payload: Value) -> Called {
        let op = catalog::operation(function_id)
            .unwrap_or_else(|| panic!("{function_id} is not in the catalog"));
        let worker = self.worker();
        worker.set_limits(limits);
        let result = match block_on(worker.call(op, payload)) {
            Ok(response) => Ok(response),
            Err(Error::Remote { code, message, .. }) => Err(CallError { code, message }),
            Err(other) => panic!("{function_id}: the worker answered a non-core error: {other}"),
        };
        let delivered =
            std::mem::take(&mut *self.recorder.0.lock().unwrap_or_else(|p| p.into_inner()));
        let (mut events, mut deliveries) = (Vec::new(), Vec::new());
        for d in delivered {
            if d.function_id == EVENTS_FUNCTION {
                let envelope: EventEnvelope =
                    serde_json::from_value(d.payload).expect("the feed delivers envelopes");
                events.push(Emitted::from_envelope(&envelope).expect("a known event"));
            } else if let Some(name) = binding_name(&d.function_id) {
                deliveries.push((name.to_string(), d.payload));
            }
        }
        Called { result, events, deliveries }
    }

    fn bind(&mut self, name: &str, trigger_type: &str, config: &Value) -> Result<(), String> {
        let handler = self.handler(trigger_type)?;
        block_on(handler.register_trigger(trigger_config(name, config.clone())))
            .map_err(|e| e.to_string())
    }

    fn unbind(&mut self, name: &str, trigger_type: &str) {
        let handler = self.handler(trigger_type).expect("a bound trigger type exists");
        block_on(handler.unregister_trigger(trigger_config(name, Value::Null))).expect("unbinds");
    }

    fn restart(&mut self) {
        drop(self.worker.take());
        self.worker = Some(self.open());
    }

    fn store(&self) -> Arc<dyn Store + Send + Sync> {
        self.worker().runtime().store.clone()
    }

    /// Replayed from the session files (or rows) with the store's rules: what a restart would
    /// find.
    fn session_states(&self) -> Vec<(String, SessionState)> {
        let dir = match &self.backend {
            Backend::Fs(dir) => dir.path(),
            Backend::Postgres(config) => {
                let store = session_manager::pg::PgStore::open(config).expect("opens");
                let ids = store.session_ids().expect("lists");
                return ids
                    .into_iter()
                    .map(|sid| {
                        let state = store.session_state(&sid).expect("replays");
                        (sid, state)
                    })
                    .collect();
            }
        };
        let ids = session_manager::transfer::session_ids(dir).expect("the data_dir lists");
        ids.into_iter()
            .map(|sid| {
                let bytes = std::fs::read(dir.join(transfer::file_name(&sid))).expect("reads");
                (sid, jsonl::replay(&bytes).0)
            })
            .collect()
    }
}
