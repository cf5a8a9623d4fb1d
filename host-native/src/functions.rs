//! Registration of the catalog's functions (the seed's 41, then our extensions unless the worker
//! runs seed-only), with the catalog's descriptions, metadata flags and request/response schemas,
//! each routed to the worker.

use std::sync::Arc;

use iii_sdk::{IIIClient, RegisterFunction};
use serde_json::Value;
use session_core::catalog::{all_operations, OpKind, Operation, OPERATIONS};

use crate::reload;
use crate::worker::Worker;

/// The function whose answer says the worker is up: registered last.
pub const READY_PROBE: &str = "session::config-status";

/// Registers every function of the catalog; with `seed_only`, only the seed's.
pub fn register_all(iii: &IIIClient, worker: &Arc<Worker>, seed_only: bool) {
    for op in registration_order(seed_only) {
        iii.register_function(op.id, registration(op, worker.clone()));
    }
}

/// The catalog (or the seed's part) with [`READY_PROBE`] last: the engine handles a worker's
/// registrations in order, so a caller that gets the probe's answer (a supervisor, a harness, a
/// load tool) finds every other function registered too. That holds for the first connection;
/// after a reconnect iii-sdk re-registers its functions in its own (hash) order.
pub fn registration_order(seed_only: bool) -> Vec<&'static Operation> {
    let operations: Box<dyn Iterator<Item = &'static Operation>> =
        if seed_only { Box::new(OPERATIONS.iter()) } else { Box::new(all_operations()) };
    let (mut order, probe): (Vec<_>, Vec<_>) = operations.partition(|op| op.id != READY_PROBE);
    order.extend(probe);
    order
}

/// The registration of one function.
pub fn registration(op: &'static Operation, worker: Arc<Worker>) -> RegisterFunction {
    RegisterFunction::new_async(move |payload: Value| {
        let worker = worker.clone();
        async move { handle(&worker, op, payload).await }
    })
    .description(op.description)
    .metadata(op.kind.flags().to_json())
    .request_format((op.request_schema)())
    .response_format((op.response_schema)())
}

/// Routes a call: operator functions are served here, the rest by the core.
pub async fn handle(
    worker: &Worker,
    op: &'static Operation,
    payload: Value,
) -> Result<Value, iii_sdk::Error> {
    match (op.kind, op.id) {
        (OpKind::Operator, "session::config-status") => {
            Ok(serde_json::to_value(reload::config_status(worker))?)
        }
        (OpKind::Operator, "session::on-config-change") => reload::on_config_change(worker).await,
        _ => worker.call(op, payload).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_probe_is_registered_last_and_nothing_is_left_out() {
        for (seed_only, count) in [(true, OPERATIONS.len()), (false, all_operations().count())] {
            let order = registration_order(seed_only);
            assert_eq!(order.last().map(|op| op.id), Some(READY_PROBE));
            let mut ids: Vec<&str> = order.iter().map(|op| op.id).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), count, "seed_only {seed_only}: each function once");
        }
    }
}
