//! `Bridge`: the live link of a bridged instance to its main. It owns a separate iii-sdk
//! connection to the main's engine (explicit identity, a unique worker name), a small tokio
//! runtime that drives the blocking store calls, and the relay registered on the main's engine.
//! It is the [`Transport`] of the instance's [`BridgeStore`](super::BridgeStore) and sends each
//! mutation's events to the main in one `session::store::publish-events` call.
//!
//! Shutdown: [`Bridge::detach`] unregisters the relay at once (a swapped-out bridge must stop
//! feeding local subscribers); the connection closes when the last holder lets go (in-flight
//! calls finish on the runtime they started with) or on [`Bridge::close`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use iii_sdk::protocol::{RegisterTriggerInput, TriggerRequest};
use iii_sdk::runtime::{FunctionRef, IIIConnectionState, WorkerMetadata};
use iii_sdk::trigger::Trigger;
use iii_sdk::{register_worker, IIIClient, InitOptions, WorkerIdentityMode};
use serde_json::Value;
use session_core::events::STORE_EVENTS;
use session_core::wire::api_store::PublishEventsRequest;
use session_core::wire::store_calls::{PublishEvents, StoreCall};
use session_core::wire::StoreEventsBindingConfig;
use session_core::{Emitted, EventSink};

use super::relay;
use super::{Transport, TransportError};
use crate::BridgeAdapterConfig;

/// The link to one main.
pub struct Bridge {
    pub url: String,
    pub timeout: Duration,
    /// `session::bridge::recv::<uuid>`.
    pub relay_id: String,
    client: IIIClient,
    io: Option<tokio::runtime::Runtime>,
    relay: Mutex<Option<(FunctionRef, Trigger)>>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge").field("url", &self.url).field("relay", &self.relay_id).finish()
    }
}

/// Checks what parsing cannot: a `ws://` / `wss://` url with a host, other than `own_url`, and a
/// non-zero timeout.
pub fn validate(config: &BridgeAdapterConfig, own_url: &str) -> Result<(), String> {
    if config.url == own_url {
        return Err(format!(
            "bridge adapter: url {} is this instance's own engine (it would defer to itself)",
            config.url
        ));
    }
    let rest = config.url.strip_prefix("ws://").or_else(|| config.url.strip_prefix("wss://"));
    let host = rest.map(|r| r.split(['/', '?']).next().unwrap_or_default()).unwrap_or_default();
    if host.is_empty() || host.starts_with(':') || host.contains(char::is_whitespace) {
        return Err(format!("bridge adapter: url {:?} is not a ws:// or wss:// URL", config.url));
    }
    if config.timeout_ms == 0 {
        return Err("bridge adapter: timeout_ms must be at least 1".into());
    }
    Ok(())
}

impl Bridge {
    /// Connects to the main (lazily: an unreachable main is not an error) and attaches the
    /// relay, whose handler hands the main's events to `sink`. `host_options` is what the host
    /// sets on every engine connection it opens (its telemetry setting). Blocking-safe: call
    /// off the reactor.
    pub fn connect(
        config: &BridgeAdapterConfig,
        sink: Arc<dyn EventSink>,
        host_options: impl FnOnce(InitOptions) -> InitOptions,
    ) -> Result<Bridge, String> {
        let io = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("session-bridge-io")
            .enable_all()
            .build()
            .map_err(|e| format!("bridge adapter: cannot start its runtime: {e}"))?;
        let uuid = uuid::Uuid::new_v4();
        let relay_id = relay::relay_id(&uuid);
        let metadata = WorkerMetadata {
            name: format!("session-manager-bridge-{}", uuid.simple()),
            version: env!("CARGO_PKG_VERSION").into(),
            description: Some("session-manager bridge connection (store protocol + relay)".into()),
            ..WorkerMetadata::default()
        };
        let options = InitOptions {
            metadata: Some(metadata),
            identity: WorkerIdentityMode::Explicit,
            ..Default::default()
        };
        let client = register_worker(&config.url, host_options(options));
        let function = client.register_function(relay_id.clone(), relay::registration(sink));
        let binding = client.register_trigger(RegisterTriggerInput {
            trigger_type: STORE_EVENTS.into(),
            function_id: relay_id.clone(),
            config: serde_json::to_value(StoreEventsBindingConfig::default())
                .unwrap_or(Value::Null),
            metadata: None,
            namespace: None,
            trigger_namespace: None,
        });
        let relay = match binding {
            Ok(trigger) => Some((function, trigger)),
            Err(e) => {
                tracing::warn!("bridge: binding {relay_id} to {STORE_EVENTS} failed: {e}");
                function.unregister();
                None
            }
        };
        tracing::info!("bridge: linked to {} (relay {relay_id})", config.url);
        Ok(Bridge {
            url: config.url.clone(),
            timeout: Duration::from_millis(config.timeout_ms),
            relay_id,
            client,
            io: Some(io),
            relay: Mutex::new(relay),
        })
    }

    /// One protocol call, bounded by the timeout: waits for the connection (never queueing a
    /// call on a closed socket, so a failed call cannot land later), then calls.
    pub async fn request(
        &self,
        function_id: &str,
        payload: Value,
    ) -> Result<Value, TransportError> {
        request(&self.client, &self.url, self.timeout, function_id, payload).await
    }

    /// Sends the events of one mutation to the main in one `publish-events` call; a failure is
    /// logged and dropped (the mutation already succeeded).
    pub async fn publish(&self, events: &[Emitted]) {
        if events.is_empty() {
            return;
        }
        let request =
            PublishEventsRequest { events: events.iter().map(Emitted::to_envelope).collect() };
        let payload = serde_json::to_value(request).unwrap_or(Value::Null);
        if let Err(e) = self.request(PublishEvents::ID, payload).await {
            tracing::warn!(
                "bridge session::store::publish-events failed ({} events dropped): {e}",
                events.len()
            );
        }
    }

    /// Unregisters the relay from the main's engine (idempotent).
    pub fn detach(&self) {
        let relay = self.relay.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((function, trigger)) = relay {
            trigger.unregister();
            function.unregister();
            tracing::info!("bridge: relay {} detached from {}", self.relay_id, self.url);
        }
    }

    /// Detaches the relay and closes the connection now.
    pub async fn close(&self) {
        self.detach();
        self.client.shutdown_async().await;
    }
}

impl Transport for Bridge {
    /// Runs [`Bridge::request`] on the bridge's own runtime and waits for it on this thread.
    fn call(&self, function_id: &str, payload: Value) -> Result<Value, TransportError> {
        let Some(io) = &self.io else {
            return Err(TransportError::Unavailable("the bridge is closed".into()));
        };
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let (client, url, timeout) = (self.client.clone(), self.url.clone(), self.timeout);
        let function_id = function_id.to_string();
        io.spawn(async move {
            let _ = tx.send(request(&client, &url, timeout, &function_id, payload).await);
        });
        // The request is bounded by `timeout`; the margin covers scheduling.
        rx.recv_timeout(timeout + Duration::from_secs(1))
            .unwrap_or_else(|_| Err(no_answer(timeout)))
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.detach();
        let (client, io) = (self.client.clone(), self.io.take());
        // Joining the connection thread and dropping a runtime must not happen on a reactor.
        let _ = std::thread::Builder::new().name("session-bridge-close".into()).spawn(move || {
            client.shutdown();
            drop(io);
        });
    }
}

async fn request(
    client: &IIIClient,
    url: &str,
    timeout: Duration,
    function_id: &str,
    payload: Value,
) -> Result<Value, TransportError> {
    let deadline = Instant::now() + timeout;
    while client.get_connection_state() != IIIConnectionState::Connected {
        if Instant::now() >= deadline {
            return Err(TransportError::Unavailable(format!(
                "main engine at {url} unreachable ({:?} for {} ms)",
                client.get_connection_state(),
                timeout.as_millis()
            )));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let request = TriggerRequest {
        function_id: function_id.to_string(),
        payload,
        action: None,
        timeout_ms: Some(left.as_millis() as u64),
    };
    client.trigger(request).await.map_err(|e| match e {
        iii_sdk::Error::Remote { code, message, .. } => TransportError::Remote { code, message },
        iii_sdk::Error::Timeout => no_answer(timeout),
        other => TransportError::Unavailable(other.to_string()),
    })
}

fn no_answer(timeout: Duration) -> TransportError {
    TransportError::Unavailable(format!("no answer within {} ms", timeout.as_millis()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::pin::Pin;

    fn config(url: &str, timeout_ms: u64) -> BridgeAdapterConfig {
        BridgeAdapterConfig { url: url.into(), timeout_ms }
    }

    #[test]
    fn validation() {
        let own = "ws://127.0.0.1:49134";
        assert!(validate(&config(own, 5000), own).unwrap_err().contains("own engine"));
        assert!(validate(&config("ws://127.0.0.1:49135", 5000), own).is_ok());
        assert!(validate(&config("wss://main.example/iii", 5000), own).is_ok());
        for bad in ["", "127.0.0.1:1", "http://h:1", "ws://", "ws://:1", "ws://a b"] {
            assert!(validate(&config(bad, 5000), own).is_err(), "{bad:?}");
        }
        assert!(validate(&config("ws://h:1", 0), own).unwrap_err().contains("timeout_ms"));
    }

    #[derive(Debug)]
    struct Nowhere;

    impl EventSink for Nowhere {
        fn publish(&self, _: Vec<Emitted>) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
            Box::pin(async {})
        }
    }

    /// An unreachable main is not a build error; each call fails within the timeout, naming
    /// the protocol function.
    #[test]
    fn unreachable_main_fails_calls_not_the_build() {
        let config = config("ws://127.0.0.1:1", 150);
        let bridge = Bridge::connect(&config, Arc::new(Nowhere), |options| options).unwrap();
        assert!(bridge.relay_id.starts_with(relay::RELAY_PREFIX));
        assert_eq!(bridge.relay_id.len(), relay::RELAY_PREFIX.len() + 32);
        let store = super::super::BridgeStore::new(std::sync::Arc::new(bridge));
        let started = Instant::now();
        let err = session_core::Store::get_meta(&store, "s").unwrap_err();
        let session_core::StoreError::Unavailable { function, detail } = &err else {
            panic!("not Unavailable: {err:?}");
        };
        assert_eq!(function, "session::store::get-meta");
        assert!(detail.contains("unreachable"), "{detail}");
        assert!(err.to_string().starts_with("bridge session::store::get-meta failed: "), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }
}
