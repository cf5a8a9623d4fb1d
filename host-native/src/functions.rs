//! Registration of the catalog's functions (the seed's 41, then our extensions unless the worker
//! runs seed-only), with the catalog's descriptions, metadata flags and request/response schemas,
//! each routed to the worker.

use std::sync::Arc;

use iii_sdk::{IIIClient, RegisterFunction};
use serde_json::Value;
use session_core::catalog::{all_operations, OpKind, Operation, OPERATIONS};

use crate::reload;
use crate::worker::Worker;

/// Registers every function of the catalog; with `seed_only`, only the seed's.
pub fn register_all(iii: &IIIClient, worker: &Arc<Worker>, seed_only: bool) {
    let operations: Box<dyn Iterator<Item = &'static Operation>> =
        if seed_only { Box::new(OPERATIONS.iter()) } else { Box::new(all_operations()) };
    for op in operations {
        iii.register_function(op.id, registration(op, worker.clone()));
    }
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
