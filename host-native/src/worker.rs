//! The worker's shared state and the per-call path: mode gate, session lock, blocking dispatch on
//! the live runtime, then publishing the events of the landed write.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use iii_sdk::{Error, IIIClient};
use serde_json::Value;
use session_core::backend::CallResult;
use session_core::catalog::{self, OpKind, Operation};
use session_core::wire::ReloadStatus;
use session_core::{Clock, Env, IdGen, Limits, Redraw, SessionError, Store};
use tokio::sync::OwnedMutexGuard;

use crate::clock::{random_ids, SystemClock};
use crate::emitter::Emitter;
use crate::locks::{lock_key, SessionLocks};
use crate::runtime::Runtime;

/// Everything a handler needs.
pub struct Worker {
    /// The engine connection (`None` in tests without an engine).
    pub iii: Option<IIIClient>,
    /// This instance's engine URL.
    pub url: String,
    /// The command line's say over an fs adapter (`--fs-sync`, `--search-index`), for runtimes
    /// built on reload.
    pub fs_flags: crate::runtime::FsFlags,
    /// The `--postgres-url` override of the configured adapter, for runtimes built on reload.
    pub postgres_url: Option<String>,
    runtime: RwLock<Arc<Runtime>>,
    limits: RwLock<Limits>,
    pub locks: SessionLocks,
    pub emitter: Emitter,
    /// The clock and id source of every call (the system clock and uuid v4 ids).
    sources: Sources,
    pub status: Mutex<ReloadStatus>,
    /// Serializes hot reloads.
    pub reload: tokio::sync::Mutex<()>,
    /// Calls of [`Worker::call`] in progress: a write that is the only one flushes on its own
    /// thread ([`Worker::execute`]).
    in_flight: AtomicUsize,
}

/// One call counted in [`Worker::in_flight`] while it lives.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        InFlight(count)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Where a call's time and fresh ids come from.
#[derive(Clone)]
struct Sources {
    clock: Arc<dyn Clock + Send + Sync>,
    ids: Arc<dyn IdGen + Send + Sync>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").field("url", &self.url).finish_non_exhaustive()
    }
}

impl Worker {
    pub fn new(
        iii: Option<IIIClient>,
        url: String,
        runtime: Runtime,
        limits: Limits,
        emitter: Emitter,
    ) -> Self {
        runtime.set_feed_retention(limits.feed_retention());
        Worker {
            iii,
            url,
            fs_flags: crate::runtime::FsFlags::default(),
            postgres_url: None,
            runtime: RwLock::new(Arc::new(runtime)),
            limits: RwLock::new(limits),
            locks: SessionLocks::default(),
            emitter,
            sources: Sources { clock: Arc::new(SystemClock), ids: Arc::new(random_ids()) },
            status: Mutex::new(ReloadStatus::default()),
            reload: tokio::sync::Mutex::new(()),
            in_flight: AtomicUsize::new(0),
        }
    }

    /// This worker with another clock and id source for every call: deterministic tests (the
    /// BDD suite runs its scenarios through [`Worker::call`] with a manual clock and sequential
    /// ids). Production workers keep the system clock and uuid v4 ids of [`Worker::new`].
    pub fn with_sources(
        mut self,
        clock: Arc<dyn Clock + Send + Sync>,
        ids: Arc<dyn IdGen + Send + Sync>,
    ) -> Self {
        self.sources = Sources { clock, ids };
        self
    }

    /// The live runtime (a snapshot: a call finishes on the runtime it started with).
    pub fn runtime(&self) -> Arc<Runtime> {
        self.runtime.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Swaps the runtime in; returns the previous one.
    pub fn swap_runtime(&self, runtime: Runtime) -> Arc<Runtime> {
        runtime.set_feed_retention(self.limits().feed_retention());
        let mut slot = self.runtime.write().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *slot, Arc::new(runtime))
    }

    pub fn limits(&self) -> Limits {
        *self.limits.read().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_limits(&self, limits: Limits) {
        self.runtime().set_feed_retention(limits.feed_retention());
        *self.limits.write().unwrap_or_else(|p| p.into_inner()) = limits;
    }

    pub fn reload_status(&self) -> ReloadStatus {
        self.status.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Runs one catalog function (not the operator ones) and publishes its events.
    pub async fn call(&self, op: &'static Operation, payload: Value) -> Result<Value, Error> {
        let _in_flight = InFlight::enter(&self.in_flight);
        let runtime = self.runtime();
        if op.kind == OpKind::StoreProtocol && !runtime.is_authoritative() {
            return Err(Error::Handler(format!(
                "session::store::* is served only by an authoritative (fs or postgres mode) \
                 instance; this instance is currently in {} mode",
                runtime.mode()
            )));
        }
        // A write on its way (the fs store's journal, `fsync: group`), until it landed: its
        // record joins the flush the records already waiting get.
        let landing = if op.effects.writes { runtime.store.write_arriving() } else { None };
        let locked = match lock_key(op, &payload) {
            Some(key) => Some(self.locks.lock(&key).await),
            None => None,
        };
        let (guard, mut turn) = match locked {
            Some(locked) => (Some(locked.guard), Some(locked.turn)),
            None => (None, None),
        };
        let result = self.execute(&runtime, op, payload, (guard, landing)).await?;
        // Events in the order the calls held the session's lock (their flushes may end in any).
        if let Some(turn) = turn.as_mut() {
            turn.predecessor().await;
        }
        match result {
            Ok(outcome) => {
                runtime.publish(&self.emitter, &outcome.events).await;
                Ok(outcome.response)
            }
            Err(e) => Err(remote(&e)),
        }
    }

    /// The store part of a call, the session lock (`guard`) held while it decides and writes:
    /// first on this thread when the store may serve it without blocking
    /// ([`Backend::try_here`](session_core::Backend::try_here): the fs store from memory), on this thread when it is the only call
    /// on a store that waits on threads of its own ([`Backend::waits_elsewhere`](session_core::Backend::waits_elsewhere): postgres) or for a call
    /// cheaper than the hand-offs ([`Backend::runs_here_alone`](session_core::Backend::runs_here_alone): a selective search on fs), else
    /// on a blocking thread ([`Backend::run`](session_core::Backend::run)). A write whose flush the store shares between
    /// calls (the fs store's `fsync: group`, issue 16) releases the lock before it waits for its
    /// [`Durable`](session_core::Durable), so the session's next writers are decided meanwhile and share that flush; a
    /// read waits until what it saw is durable ([`Backend::read_settles`](session_core::Backend::read_settles)). The write's token
    /// ([`Backend::write_arriving`](session_core::Backend::write_arriving)) ends with the lock.
    async fn execute(
        &self,
        runtime: &Arc<Runtime>,
        op: &'static Operation,
        mut payload: Value,
        guard: (Option<OwnedMutexGuard<()>>, Option<Box<dyn Send>>),
    ) -> Result<CallResult, Error> {
        let limits = self.limits();
        let panicked =
            |e: tokio::task::JoinError| Error::Runtime(format!("{} panicked: {e}", op.id));
        let backend = &runtime.store;
        let read_of = match op.effects.writes {
            false => payload.get("session_id").and_then(Value::as_str).map(String::from),
            true => None,
        };
        let mut ran = None;
        // A write's try here may draw ids before the view refuses: the rerun gets the same ones.
        let mut sources = self.sources.clone();
        if backend.may_try_here(op) {
            // The try works on a copy (the payload is kept for a rerun on a blocking thread), and
            // cloning a `Value` recurses: first refuse what the core refuses for its depth or
            // size, so no payload of any depth is ever cloned.
            let budget = op.effects.request_budget(&limits);
            payload = session_core::limits::check(payload, budget).map_err(|e| remote(&e))?;
            let redraw = op.effects.writes.then(|| {
                let redraw = Arc::new(Redraw::new(self.sources.ids.clone()));
                sources.ids = redraw.clone();
                redraw
            });
            let mut try_run = |store: &dyn Store| run(store, &sources, limits, op, payload.clone());
            ran = backend.try_here(op, &mut try_run);
            if let (None, Some(redraw)) = (&ran, redraw) {
                redraw.again();
            }
        }
        let (result, durable) = match ran {
            Some(ran) => ran,
            None => {
                let cheap = backend.runs_here_alone(op, &payload);
                let (runtime, mut payload) = (runtime.clone(), Some(payload));
                let mut call = move |store: &dyn Store| match payload.take() {
                    Some(payload) => run(store, &sources, limits, op, payload),
                    None => Err(SessionError::storage(format!("{} was run twice", op.id))),
                };
                if (runtime.store.waits_elsewhere() || cheap) && self.alone().await {
                    // The only call in progress, on a store that waits on threads of its own or
                    // a call that costs less than the hand-offs to a blocking thread and back.
                    runtime.store.run(op, &mut call)
                } else {
                    tokio::task::spawn_blocking(move || runtime.store.run(op, &mut call))
                        .await
                        .map_err(panicked)?
                }
            }
        };
        drop(guard);
        let durable = match (durable, read_of) {
            (Some(durable), _) => Some(durable),
            (None, Some(sid)) if result.is_ok() => backend.read_settles(&sid),
            _ => None,
        };
        let settled = match durable {
            Some(durable) => match self.alone().await {
                true => durable.wait_here(),
                false => durable.wait().await,
            },
            None => Ok(()),
        };
        if settled.is_err() {
            // A flush failed: what it left is cut back before this call answers.
            let runtime = runtime.clone();
            let clean = move || runtime.store.after_failed_flush();
            tokio::task::spawn_blocking(clean).await.map_err(panicked)?;
        }
        Ok(result.and_then(|outcome| settled.map(|()| outcome).map_err(SessionError::from)))
    }
}

impl Worker {
    /// Whether the calling write is the only call in progress, once the calls already received
    /// have had their turn (two yields: the connection's reader queues the frames waiting on the
    /// socket, then their handlers start). Then nothing could share its flush, and the hand-off
    /// to a blocking thread and back costs more than the flush itself: it flushes on its own
    /// thread (a frame that arrives meanwhile waits for that flush).
    async fn alone(&self) -> bool {
        for _ in 0..2 {
            if self.in_flight.load(Ordering::SeqCst) > 1 {
                return false;
            }
            tokio::task::yield_now().await;
        }
        self.in_flight.load(Ordering::SeqCst) == 1
    }
}

/// The store part of a call: decide, apply, encode.
fn run(
    store: &dyn Store,
    sources: &Sources,
    limits: Limits,
    op: &Operation,
    payload: Value,
) -> CallResult {
    let env = Env { clock: &*sources.clock, ids: &*sources.ids, limits };
    catalog::dispatch(store, &env, op.id, payload)
        .unwrap_or_else(|| Err(SessionError::invalid_request(format!("{} is not served", op.id))))
}

/// A core error as the engine forwards it: its code, and the full `"<code>: <text>"` message.
pub fn remote(e: &SessionError) -> Error {
    Error::Remote { code: e.code.as_str().to_string(), message: e.message(), stacktrace: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AdapterConfig;
    use crate::emitter::Recorder;
    use serde_json::json;
    use session_core::catalog::operation;
    use session_core::events::MESSAGE_ADDED;
    use session_core::MemStore;

    fn worker(adapter: AdapterConfig) -> (Worker, Arc<Recorder>) {
        let rec = Arc::new(Recorder::default());
        let runtime = Runtime::over(adapter, Arc::new(MemStore::new()));
        let w = Worker::new(
            None,
            "ws://x".into(),
            runtime,
            Limits::default(),
            Emitter::new(rec.clone()),
        );
        (w, rec)
    }

    #[tokio::test]
    async fn call_publishes_after_write_and_maps_errors() {
        let (w, rec) = worker(AdapterConfig::default());
        w.emitter
            .subscriptions
            .write()
            .unwrap()
            .bind(MESSAGE_ADDED, "t", "f::x", &Value::Null)
            .unwrap();
        let op = |id| operation(id).unwrap();
        let created = w.call(op("session::create"), json!({"title": "t"})).await.unwrap();
        let sid = created["session_id"].as_str().unwrap().to_string();
        assert!(sid.starts_with("s_") && sid.len() == 34, "{sid}");
        let msg = json!({"role": "user", "content": [], "timestamp": 1});
        w.call(
            op("session::append"),
            json!({"session_id": sid, "message": msg, "_caller_worker_id": "w"}),
        )
        .await
        .unwrap();
        assert_eq!(rec.0.lock().unwrap().len(), 1);
        let err =
            w.call(op("session::append"), json!({"session_id": "nope", "message": msg})).await;
        match err {
            Err(Error::Remote { code, message, .. }) => {
                assert_eq!(code, "session/not_found");
                assert!(message.starts_with("session/not_found: "), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(rec.0.lock().unwrap().len(), 1);
    }

    /// Reads on the fs store run inline when it can serve them from memory, everything else on a
    /// blocking thread; in every sync mode the writes land and replay.
    #[tokio::test]
    async fn fs_calls_inline_and_blocking_land_alike() {
        for sync in [crate::fs::SyncMode::Never, crate::fs::SyncMode::Group] {
            let dir = tempfile::tempdir().expect("tempdir");
            let adapter = AdapterConfig::Fs(crate::config::FsAdapterConfig {
                data_dir: dir.path().to_string_lossy().into_owned(),
                fsync: sync,
            });
            let rec = Arc::new(Recorder::default());
            let emitter = Emitter::new(rec.clone());
            let runtime =
                Runtime::build(&adapter, "ws://x", Default::default(), &emitter).expect("runtime");
            let w = Worker::new(None, "ws://x".into(), runtime, Limits::default(), emitter);
            let op = |id| operation(id).unwrap();
            let created = w.call(op("session::create"), json!({"title": "t"})).await.unwrap();
            let sid = created["session_id"].as_str().unwrap().to_string();
            for i in 0..20 {
                let msg = json!({"role": "user", "content": [], "timestamp": i});
                w.call(op("session::append"), json!({"session_id": sid, "message": msg}))
                    .await
                    .unwrap();
            }
            let put = json!({"session_id": sid, "attachment_id": "a", "mime_type": "text/plain",
                "data_base64": "aGk="});
            let _ = w.call(op("session::put-attachment"), put).await;
            let got = w.call(op("session::get"), json!({"session_id": sid})).await.unwrap();
            assert_eq!(got["meta"]["message_count"], 20, "{sync:?}: {got}");
            let tail = w
                .call(op("session::messages-tail"), json!({"session_id": sid, "limit": 5}))
                .await
                .unwrap();
            assert!(tail.to_string().contains("timestamp"), "{sync:?}: {tail}");
            drop(w);
            let store =
                crate::fs::FsStore::open(crate::fs::FsConfig::new(dir.path())).expect("reopen");
            let meta = session_core::Store::get_meta(&store, &sid).unwrap().unwrap();
            assert_eq!(meta.message_count, 20, "{sync:?}");
        }
    }

    #[tokio::test]
    async fn store_protocol_is_gated_by_mode() {
        let bridge = AdapterConfig::Bridge(crate::config::BridgeAdapterConfig {
            url: "ws://main".into(),
            timeout_ms: 5000,
        });
        let (w, _) = worker(bridge);
        let op = operation("session::store::list-metas").unwrap();
        let err = w.call(op, json!({})).await.unwrap_err().to_string();
        assert!(err.contains("currently in bridge mode"), "{err}");
        let (w, _) = worker(AdapterConfig::default());
        assert_eq!(w.call(op, json!({})).await.unwrap(), json!({"metas": []}));
    }
}
