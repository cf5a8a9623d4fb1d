//! The fs adapter's `fsync` key on hot reload: a change of it alone is an adapter change, so
//! `reload::apply` builds a new store (as for a `data_dir` change); a limits-only change keeps it.

use std::sync::Arc;

use session_core::wire::ReloadOutcome;
use session_core::Limits;
use session_manager::config::{AdapterConfig, FsAdapterConfig, WorkerConfig};
use session_manager::emitter::{Delivery, Emitter, Sink};
use session_manager::runtime::Runtime;
use session_manager::{reload, worker::Worker, FsConfig, FsStore, SyncMode};

struct Discard;

#[async_trait::async_trait]
impl Sink for Discard {
    async fn deliver(&self, _: Delivery) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_fsync_change_rebuilds_the_store_and_a_limits_change_does_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fs = |fsync| {
        AdapterConfig::Fs(FsAdapterConfig { data_dir: dir.path().display().to_string(), fsync })
    };
    let store = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Group)).expect("open");
    let runtime = Runtime::over(fs(SyncMode::Group), Arc::new(store));
    let worker = Worker::new(
        None,
        "ws://x".into(),
        runtime,
        Limits::default(),
        Emitter::new(Arc::new(Discard)),
    );
    let first = worker.runtime();

    let mut config = WorkerConfig { adapter: fs(SyncMode::Group), ..WorkerConfig::default() };
    config.max_list_limit = 7;
    reload::apply(&worker, config.clone()).await;
    assert!(Arc::ptr_eq(&first, &worker.runtime()), "a limits change keeps the store");

    config.adapter = fs(SyncMode::Never);
    reload::apply(&worker, config.clone()).await;
    let rebuilt = worker.runtime();
    assert!(!Arc::ptr_eq(&first, &rebuilt), "an fsync change rebuilds the store");
    assert_eq!(rebuilt.adapter, config.adapter);
    assert_eq!(worker.reload_status().last_outcome, ReloadOutcome::Applied);
}
