//! Registration of the catalog's 41 functions, with the catalog's descriptions, metadata flags
//! and request/response schemas, each routed to the worker.

use std::sync::Arc;

use iii_sdk::{IIIClient, RegisterFunction};
use serde_json::Value;
use session_core::catalog::{OpKind, Operation, OPERATIONS};

use crate::reload;
use crate::worker::Worker;

/// Registers every function of the catalog.
pub fn register_all(iii: &IIIClient, worker: &Arc<Worker>) {
    for op in OPERATIONS {
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
