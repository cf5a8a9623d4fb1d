//! Hot reload (contract §6.3–§6.5): `session::on-config-change` re-fetches the configuration
//! inside the reload mutex, swaps the limits, or builds a new runtime, swaps it in and resyncs
//! subscribers; a build failure keeps the last good runtime and is counted.

use serde_json::{json, Value};
use session_core::resync::resync_events;
use session_core::wire::{ReloadOutcome, ReloadStatus};

use crate::clock::now_ms;
use crate::config::WorkerConfig;
use crate::config_worker;
use crate::runtime::Runtime;
use crate::worker::Worker;

/// Handler of `session::on-config-change` (the payload is advisory and ignored).
pub async fn on_config_change(worker: &Worker) -> Result<Value, iii_sdk::Error> {
    let iii = worker.iii.as_ref().ok_or(iii_sdk::Error::NotConnected)?;
    let _serialized = worker.reload.lock().await;
    let value = config_worker::get(iii).await?;
    let config =
        WorkerConfig::from_value(value.unwrap_or(Value::Null)).map_err(iii_sdk::Error::Handler)?;
    apply(worker, config).await;
    Ok(json!({ "ok": true }))
}

/// Applies a fetched config; call with the reload mutex held.
pub async fn apply(worker: &Worker, config: WorkerConfig) {
    let current = worker.runtime();
    let adapter = config.adapter.with_postgres_url(worker.postgres_url.as_deref());
    if current.adapter == adapter {
        worker.set_limits(config.limits());
        record(worker, None);
        tracing::info!("configuration reloaded: limits swapped");
        return;
    }
    let old = current.clone();
    let before = tokio::task::spawn_blocking(move || old.store.list_metas().unwrap_or_default())
        .await
        .unwrap_or_default();
    let (url, sync) = (worker.url.clone(), worker.fs_flags);
    let local = worker.emitter.clone();
    let built = tokio::task::spawn_blocking(move || Runtime::build(&adapter, &url, sync, &local))
        .await
        .unwrap_or_else(|e| Err(format!("runtime build panicked: {e}")));
    let runtime = match built {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!("configuration rejected, keeping the previous runtime: {e}");
            record(worker, Some(e));
            return;
        }
    };
    worker.set_limits(config.limits());
    let previous = worker.swap_runtime(runtime);
    // The previous bridge's relay must stop feeding local subscribers before the resync.
    previous.retire();
    let live = worker.runtime();
    tracing::info!("configuration reloaded: {} adapter swapped in", live.mode());
    let store = live.clone();
    let events =
        tokio::task::spawn_blocking(move || resync_events(&before, &*store.store, now_ms())).await;
    match events {
        Ok(Ok(events)) => worker.emitter.publish(&events, live.is_authoritative()).await,
        Ok(Err(e)) => tracing::warn!("resync after the adapter swap failed: {e}"),
        Err(e) => tracing::warn!("resync after the adapter swap panicked: {e}"),
    }
    // Flushes the previous fs store; a previous bridge connection closes once the last in-flight
    // call on it finishes (the last `Arc` is dropped).
    let _ = tokio::task::spawn_blocking(move || previous.flush()).await;
    record(worker, None);
}

fn record(worker: &Worker, rejected: Option<String>) {
    let mut status = worker.status.lock().unwrap_or_else(|p| p.into_inner());
    match rejected {
        None => {
            status.last_outcome = ReloadOutcome::Applied;
            status.last_error = None;
        }
        Some(error) => {
            status.last_outcome = ReloadOutcome::Rejected;
            status.last_error = Some(error);
            status.rejected_reloads += 1;
        }
    }
}

/// Handler of `session::config-status`.
pub fn config_status(worker: &Worker) -> ReloadStatus {
    worker.reload_status()
}
