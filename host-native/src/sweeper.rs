//! The lifecycle sweep in the background: `session::sweep` run at start (what a `kill -9` left
//! due) and then every [`SWEEP_EVERY`], through the worker like any call, so its
//! `session::deleted` events are published. Only an authoritative instance (fs, postgres)
//! sweeps; a bridge's main sweeps for it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use session_core::catalog::operation;

use crate::worker::Worker;

/// How often the sweep runs: an `expires_at` in the past is gone within this (and the sweep's
/// own time).
pub const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Runs the sweep until the worker is dropped.
pub fn spawn(worker: &Arc<Worker>) {
    let worker = Arc::downgrade(worker);
    tokio::spawn(async move {
        let Some(op) = operation("session::sweep") else { return };
        let mut failing = false;
        let mut tick = tokio::time::interval(SWEEP_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(worker) = worker.upgrade() else { return };
            if !worker.runtime().is_authoritative() {
                continue;
            }
            match worker.call(op, json!({})).await {
                Ok(swept) => {
                    failing = false;
                    let any = |k: &str| swept.get(k).and_then(|v| v.as_u64()).unwrap_or(0) > 0;
                    if any("expired") || any("purged") {
                        tracing::info!("session-manager: sweep removed {swept}");
                    }
                }
                // Said once per failing spell, not every second.
                Err(e) if !failing => {
                    failing = true;
                    tracing::warn!("session-manager: the lifecycle sweep failed: {e}");
                }
                Err(_) => {}
            }
        }
    });
}
