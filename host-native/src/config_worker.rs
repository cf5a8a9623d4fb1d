//! Talking to the engine's `configuration` worker (contract §6.2 steps 4–5, §6.3): register the
//! schema (initial value on first boot only), read the value, bind the `configuration` trigger.
//! Every RPC: up to 3 attempts, 5 s timeout each, 250 ms × attempt backoff. The calls name the
//! engine's `default` namespace, where the built-in `configuration` worker lives: a worker started
//! in a project namespace (`III_NAMESPACE`, e.g. by `iii compose`) would otherwise look for
//! `configuration::*` in its own namespace and fail to boot.

use std::time::Duration;

use iii_sdk::protocol::{RegisterTriggerInput, TriggerRequest};
use iii_sdk::{Error, IIIClient};
use serde_json::{json, Value};

use crate::config::{WorkerConfig, CONFIG_ID};

const ATTEMPTS: u32 = 3;
const TIMEOUT_MS: u64 = 5000;
/// Namespace of the engine's built-in workers (`configuration::*`).
const ENGINE_NAMESPACE: &str = "default";
/// The function the `configuration` trigger is bound to.
pub const ON_CONFIG_CHANGE: &str = "session::on-config-change";
const DESCRIPTION: &str = "Durable, reactive, branching store of typed conversation entries: \
storage adapter (fs | bridge) and list/attachment limits.";

/// Calls a configuration function with retries. A definitive `NOT_FOUND` is not retried, nor is
/// a rejected worker registration (another worker holds this name: the SDK stops reconnecting, so
/// retries would only end in a timeout that hides the cause).
pub async fn call(iii: &IIIClient, function_id: &str, payload: Value) -> Result<Value, Error> {
    let mut last = Error::Timeout;
    for attempt in 1..=ATTEMPTS {
        let request = TriggerRequest {
            function_id: function_id.to_string(),
            payload: payload.clone(),
            action: None,
            timeout_ms: Some(TIMEOUT_MS),
        };
        match iii.trigger(request.namespace(ENGINE_NAMESPACE)).await {
            Ok(value) => return Ok(value),
            Err(e) if is_not_found(&e) => return Err(e),
            Err(e @ Error::RegistrationRejected { .. }) => return Err(e),
            Err(e) => {
                if let Some(fatal) = iii.fatal_error() {
                    return Err(fatal);
                }
                tracing::warn!("{function_id} attempt {attempt}/{ATTEMPTS} failed: {e}");
                last = e;
            }
        }
        if attempt < ATTEMPTS {
            tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt))).await;
        }
    }
    Err(last)
}

/// Whether the configuration worker said the id is missing.
pub fn is_not_found(e: &Error) -> bool {
    match e {
        Error::Remote { code, message, .. } => {
            code.to_ascii_uppercase().contains("NOT_FOUND")
                || message.to_ascii_uppercase().contains("NOT_FOUND")
        }
        other => other.to_string().to_ascii_uppercase().contains("NOT_FOUND"),
    }
}

/// The stored value: `Ok(None)` when missing (`NOT_FOUND`) or `null`.
pub async fn get(iii: &IIIClient) -> Result<Option<Value>, Error> {
    match call(iii, "configuration::get", json!({ "id": CONFIG_ID })).await {
        Ok(reply) => Ok(reply.get("value").cloned().filter(|v| !v.is_null())),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Boot: register the schema (with `initial_value` = seed or default only when nothing is
/// stored yet), then read and parse the live value.
pub async fn boot(iii: &IIIClient, seed: Option<WorkerConfig>) -> Result<WorkerConfig, String> {
    let stored = get(iii).await.map_err(|e| format!("configuration::get failed: {e}"))?;
    let mut register = json!({
        "id": CONFIG_ID,
        "name": "Session Manager",
        "description": DESCRIPTION,
        "schema": WorkerConfig::json_schema(),
    });
    if stored.is_none() {
        let initial = seed.unwrap_or_default();
        tracing::info!("first boot: registering the initial configuration");
        register["initial_value"] = initial.to_value();
    } else if seed.is_some() {
        tracing::info!("--config ignored: a configuration is already stored (seeding is one-time)");
    }
    call(iii, "configuration::register", register)
        .await
        .map_err(|e| format!("configuration::register failed: {e}"))?;
    let value = get(iii).await.map_err(|e| format!("configuration::get failed: {e}"))?;
    WorkerConfig::from_value(value.unwrap_or(Value::Null))
}

/// Binds the `configuration` trigger to `session::on-config-change`.
pub fn bind_reload(iii: &IIIClient) -> Result<(), Error> {
    iii.register_trigger(RegisterTriggerInput {
        trigger_type: "configuration".into(),
        function_id: ON_CONFIG_CHANGE.into(),
        config: json!({
            "configuration_id": CONFIG_ID,
            "event_types": ["configuration:updated"],
        }),
        metadata: None,
        namespace: None,
        trigger_namespace: None,
    })
    .map(|_| ())
}
