//! The emitter: publishes events to the bindings the trigger handlers collected. Each matching
//! binding gets its own fire-and-forget (`Void`) invocation, its change (seq) goes to the
//! matching `session::changed` bindings; in fs mode every event also goes, as
//! an `EventEnvelope`, to every `session::store::events` subscriber (contract §3.1, §5.7).

use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use iii_sdk::protocol::TriggerRequest;
use iii_sdk::{IIIClient, TriggerAction};
use serde_json::Value;
use session_core::events::STORE_EVENTS;

use crate::coalesce::SharedCoalescer;
use session_core::subscriptions::{Subscription, Subscriptions};
use session_core::wire::ChangedEvent;
use session_core::Emitted;

/// One invocation of a bound function.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    pub function_id: String,
    pub namespace: Option<String>,
    pub metadata: Option<Value>,
    pub payload: Value,
}

/// Where deliveries go.
#[async_trait]
pub trait Sink: Send + Sync {
    async fn deliver(&self, delivery: Delivery);
}

/// Deliveries through the engine, fire-and-forget; failures are logged and swallowed.
#[derive(Clone)]
pub struct EngineSink(pub IIIClient);

impl std::fmt::Debug for EngineSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EngineSink")
    }
}

#[async_trait]
impl Sink for EngineSink {
    async fn deliver(&self, d: Delivery) {
        let request = TriggerRequest {
            function_id: d.function_id.clone(),
            payload: d.payload,
            action: Some(TriggerAction::Void),
            timeout_ms: None,
        };
        let result = match (d.namespace, d.metadata) {
            (Some(ns), Some(meta)) => self.0.trigger(request.namespace(ns).metadata(meta)).await,
            (Some(ns), None) => self.0.trigger(request.namespace(ns)).await,
            (None, Some(meta)) => self.0.trigger(request.metadata(meta)).await,
            (None, None) => self.0.trigger(request).await,
        };
        if let Err(e) = result {
            tracing::warn!("delivery to {} failed: {e}", d.function_id);
        }
    }
}

/// The binding tables plus the sink.
#[derive(Clone)]
pub struct Emitter {
    pub subscriptions: Arc<RwLock<Subscriptions>>,
    sink: Arc<dyn Sink>,
    coalescer: SharedCoalescer,
}

impl std::fmt::Debug for Emitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emitter").finish_non_exhaustive()
    }
}

impl Emitter {
    pub fn new(sink: Arc<dyn Sink>) -> Self {
        Emitter { subscriptions: Arc::default(), sink, coalescer: SharedCoalescer::default() }
    }

    fn snapshot(
        &self,
        emitted: &Emitted,
        feed: bool,
    ) -> (Vec<(Subscription, Value)>, Vec<Subscription>) {
        let subs = self.subscriptions.read().unwrap_or_else(|p| p.into_inner());
        let bridges = if feed { subs.all(STORE_EVENTS) } else { Vec::new() };
        (subs.deliveries(emitted), bridges)
    }

    /// Publishes `events` in order: every matching binding, then (when `feed`, i.e. fs mode) the
    /// envelope to every store-events subscriber. Call only after the write landed.
    pub async fn publish(&self, events: &[Emitted], feed: bool) {
        for emitted in events {
            let (deliveries, bridges) = self.snapshot(emitted, feed);
            for (sub, payload) in deliveries {
                // Only a coalescing `session::changed` binding needs the typed change.
                let coalesced =
                    sub.filter.coalesce_ms.and_then(|ms| Some((ms, emitted.changed_event()?)));
                match coalesced {
                    Some((ms, event)) => self.coalesce(sub, event, ms).await,
                    None => self.sink.deliver(delivery(sub, payload)).await,
                }
            }
            if !bridges.is_empty() {
                let envelope = serde_json::to_value(emitted.to_envelope()).unwrap_or(Value::Null);
                for sub in bridges {
                    self.sink.deliver(delivery(sub, envelope.clone())).await;
                }
            }
        }
    }
}

impl Emitter {
    /// A delivery of a coalescing `session::changed` binding (`coalesce.rs`).
    async fn coalesce(&self, sub: Subscription, event: ChangedEvent, ms: u64) {
        let offered = self.coalescer.offer(sub, event, ms);
        for (sub, event) in offered.now {
            self.sink.deliver(changed_delivery(sub, &event)).await;
        }
        if let Some(timer) = offered.timer {
            let (coalescer, sink) = (self.coalescer.clone(), self.sink.clone());
            tokio::spawn(async move {
                tokio::time::sleep(timer.after).await;
                if let Some((sub, event)) = coalescer.flush(&timer) {
                    sink.deliver(changed_delivery(sub, &event)).await;
                }
            });
        }
    }
}

fn changed_delivery(sub: Subscription, event: &ChangedEvent) -> Delivery {
    delivery(sub, serde_json::to_value(event).unwrap_or(Value::Null))
}

fn delivery(sub: Subscription, payload: Value) -> Delivery {
    Delivery {
        function_id: sub.function_id,
        namespace: sub.namespace,
        metadata: sub.metadata,
        payload,
    }
}

/// Test double shared by the host's unit tests: a sink that records every delivery.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct Recorder(pub(crate) std::sync::Mutex<Vec<Delivery>>);

#[cfg(test)]
#[async_trait]
impl Sink for Recorder {
    async fn deliver(&self, d: Delivery) {
        self.0.lock().unwrap().push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use session_core::events::{SessionEvent, DELETED};
    use session_core::wire::DeletedEvent;

    #[tokio::test]
    async fn fans_out_to_matching_and_feed() {
        let rec = Arc::new(Recorder::default());
        let emitter = Emitter::new(rec.clone());
        {
            let mut subs = emitter.subscriptions.write().unwrap();
            subs.bind(DELETED, "1", "f::match", &json!({"session_id": "s"})).unwrap();
            subs.bind(DELETED, "2", "f::other", &json!({"session_id": "t"})).unwrap();
            subs.bind(STORE_EVENTS, "3", "bridge::recv", &json!({"anything": 1})).unwrap();
        }
        let event = SessionEvent::Deleted(DeletedEvent { session_id: "s".into(), timestamp: 5 });
        let emitted = Emitted { event, session_metadata: None, change: None };
        emitter.publish(std::slice::from_ref(&emitted), true).await;
        emitter.publish(&[emitted], false).await;
        let got = rec.0.lock().unwrap().clone();
        let ids: Vec<&str> = got.iter().map(|d| d.function_id.as_str()).collect();
        assert_eq!(ids, ["f::match", "bridge::recv", "f::match"]);
        assert_eq!(got[1].payload["trigger_type"], DELETED);
        assert_eq!(got[1].payload["payload"], json!({"session_id": "s", "timestamp": 5}));
    }
}
