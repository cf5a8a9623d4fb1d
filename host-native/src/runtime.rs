//! The live runtime: the adapter it was built from, its store (fs, bridge or postgres) and, in
//! bridge mode, the link to the main. Handlers take a snapshot per call, so a hot reload swaps it without re-registering
//! anything.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use session_core::{Backend, Emitted};

use crate::bridge::{link, Bridge, BridgeStore};
use crate::config::{resolve_data_dir, AdapterConfig};
use crate::emitter::Emitter;
use crate::fs::{FsConfig, FsStore, SyncMode};
use crate::pg::{Follower, PgStore, Publisher};

/// A built storage runtime.
pub struct Runtime {
    pub adapter: AdapterConfig,
    /// The store, known only through the core's traits (`Backend`: where a call runs and when
    /// its writes are durable).
    pub store: Arc<dyn Backend>,
    bridge: Option<Arc<Bridge>>,
    /// In postgres mode, what delivers the other instances' events here (stopped on retire).
    follower: std::sync::Mutex<Option<Follower>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("adapter", &self.adapter).finish_non_exhaustive()
    }
}

/// What the command line says about an fs adapter, over its configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsFlags {
    /// `--fs-sync`: replaces the adapter's `fsync` key.
    pub sync: Option<SyncMode>,
    /// `--search-index`: keep the search index beside the logs (on by default).
    pub search_index: bool,
}

impl Default for FsFlags {
    fn default() -> Self {
        FsFlags { sync: None, search_index: true }
    }
}

impl FsFlags {
    /// The defaults with `--fs-sync <sync>`.
    pub fn sync(sync: SyncMode) -> Self {
        FsFlags { sync: Some(sync), ..FsFlags::default() }
    }
}

impl Runtime {
    /// Builds the runtime of `adapter`. `own_url` is this instance's engine URL (a bridge to it
    /// would defer to itself); `fs_flags` are the command line's say over an fs adapter (`--fs-sync`
    /// replaces its `fsync` key when set, `--search-index off` opens it without a search index); `emitter` is the local emitter a bridge's relay re-emits through.
    /// Blocking: opens the data directory or starts the bridge connection (an unreachable main is
    /// not an error).
    pub fn build(
        adapter: &AdapterConfig,
        own_url: &str,
        fs_flags: FsFlags,
        emitter: &Emitter,
    ) -> Result<Runtime, String> {
        match adapter {
            AdapterConfig::Fs(fs) => {
                let dir = resolve_data_dir(&fs.data_dir);
                let mut config = FsConfig::new(&dir).sync(fs_flags.sync.unwrap_or(fs.fsync));
                config.search_index = fs_flags.search_index;
                let store = FsStore::open(config)
                    .map_err(|e| format!("fs adapter: cannot open {}: {e}", dir.display()))?;
                let store = Arc::new(store);
                store.start_search_indexer();
                Ok(Runtime::new(adapter.clone(), store, None))
            }
            AdapterConfig::Bridge(config) => {
                link::validate(config, own_url)?;
                // The main's events, re-emitted to local subscribers only (never fanned out).
                let relay = EmitterPublisher::new(emitter, None, false);
                let bridge =
                    Arc::new(Bridge::connect(config, relay, crate::telemetry::with_telemetry)?);
                let store = Arc::new(BridgeStore::new(bridge.clone()));
                Ok(Runtime::new(adapter.clone(), store, Some(bridge)))
            }
            AdapterConfig::Postgres(config) => {
                let store = Arc::new(PgStore::open(config)?.with_instance(instance_name(own_url)));
                let handle = tokio::runtime::Handle::try_current().ok();
                let publisher: Publisher = EmitterPublisher::new(emitter, handle, true);
                let follower = Follower::start(&store, publisher)?;
                let runtime = Runtime::new(adapter.clone(), store, None);
                *runtime.follower.lock().unwrap_or_else(|p| p.into_inner()) = Some(follower);
                Ok(runtime)
            }
        }
    }

    fn new(
        adapter: AdapterConfig,
        store: Arc<dyn Backend>,
        bridge: Option<Arc<Bridge>>,
    ) -> Runtime {
        let follower = std::sync::Mutex::new(None);
        Runtime { adapter, store, bridge, follower }
    }

    /// A runtime over any store, with no bridge link (tests with an IO double, tools).
    pub fn over(adapter: AdapterConfig, store: Arc<dyn Backend>) -> Runtime {
        Runtime::new(adapter, store, None)
    }

    /// The link to the main, in bridge mode.
    pub fn bridge(&self) -> Option<&Arc<Bridge>> {
        self.bridge.as_ref()
    }

    /// Publishes the events of one landed mutation: bridged, one `publish-events` call to the
    /// main (never locally: local subscribers hear it through the relay); otherwise through the
    /// local emitter, fanning envelopes out to attached bridges in fs mode.
    pub async fn publish(&self, emitter: &Emitter, events: &[Emitted]) {
        if events.is_empty() {
            return;
        }
        match &self.bridge {
            Some(bridge) => bridge.publish(events).await,
            None => emitter.publish(events, self.is_authoritative()).await,
        }
    }

    /// Retires a swapped-out runtime: a bridge's relay is detached at once (its connection closes
    /// when the last in-flight call lets go of the runtime); a postgres follower stops.
    pub fn retire(&self) {
        drop(self.follower.lock().unwrap_or_else(|p| p.into_inner()).take());
        if let Some(bridge) = &self.bridge {
            bridge.detach();
        }
    }

    /// Closes a bridge connection now (process shutdown).
    pub async fn close(&self) {
        if let Some(bridge) = &self.bridge {
            bridge.close().await;
        }
    }

    /// The feed retention the store's replays keep (a bridge keeps no feed).
    pub fn set_feed_retention(&self, retention: session_core::feed::Retention) {
        self.store.set_feed_retention(retention);
    }

    /// Whether this runtime owns its store (fs or postgres, not a bridge): it serves
    /// `session::store::*` and feeds the bridges attached to it.
    pub fn is_authoritative(&self) -> bool {
        !matches!(self.adapter, AdapterConfig::Bridge(_))
    }

    /// `fs`, `bridge` or `postgres`.
    pub fn mode(&self) -> &'static str {
        self.adapter.name()
    }

    /// Before a shutdown: what makes the next start fast is saved (the fs store's listing
    /// catalog and large sessions' checkpoints; its journal emptied into the session files).
    /// Everything acknowledged is durable already.
    pub fn flush(&self) {
        self.store.flush_for_shutdown();
    }
}

/// A postgres instance's lasting name: this host and the engine it serves (one session-manager
/// per engine), so that a restart is recognised as the same instance.
fn instance_name(own_url: &str) -> String {
    let host = rustix::system::uname();
    format!("{} {own_url}", host.nodename().to_string_lossy())
}

/// Where a backend hands on the events it did not publish: the worker's emitter, on the
/// worker's runtime when there is one. The postgres follower's events are authoritative (fanned
/// out to attached bridges as well); a bridge relay's go to local subscribers only.
#[derive(Debug)]
struct EmitterPublisher {
    emitter: Emitter,
    handle: Option<tokio::runtime::Handle>,
    authoritative: bool,
}

impl EmitterPublisher {
    fn new(
        emitter: &Emitter,
        handle: Option<tokio::runtime::Handle>,
        authoritative: bool,
    ) -> Arc<EmitterPublisher> {
        Arc::new(EmitterPublisher { emitter: emitter.clone(), handle, authoritative })
    }
}

impl session_core::EventSink for EmitterPublisher {
    fn publish(&self, events: Vec<Emitted>) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        let (emitter, authoritative) = (self.emitter.clone(), self.authoritative);
        let publish = async move { emitter.publish(&events, authoritative).await };
        Box::pin(async move {
            match &self.handle {
                Some(handle) => {
                    let _ = handle.spawn(publish).await;
                }
                None => publish.await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::relay::deliver;
    use crate::emitter::Recorder;
    use serde::Serialize;
    use serde_json::Value;
    use session_core::events::{DELETED, STORE_EVENTS};
    use session_core::feed::CHANGED;
    use session_core::wire::{
        Change, DeletedEvent, EventEnvelope, Object, SessionBindingConfig, StoreEventsBindingConfig,
    };

    fn value(of: impl Serialize) -> Value {
        serde_json::to_value(of).expect("serializable")
    }

    fn owner(name: &str) -> Object {
        Object::from_iter([("owner".to_string(), Value::from(name))])
    }

    fn owned_by(name: &str) -> Value {
        value(SessionBindingConfig { session_id: None, metadata: Some(owner(name)) })
    }

    /// What a bridge relay hands on reaches local bindings with local filters against the
    /// envelope's metadata, and the feed's; never the attached bridges' `session::store::events`.
    #[tokio::test]
    async fn relayed_events_are_re_emitted_locally_only() {
        let rec = Arc::new(Recorder::default());
        let emitter = Emitter::new(rec.clone());
        {
            let mut subs = emitter.subscriptions.write().unwrap();
            subs.bind(DELETED, "1", "f::mine", &owned_by("u")).unwrap();
            subs.bind(DELETED, "2", "f::theirs", &owned_by("v")).unwrap();
            subs.bind(STORE_EVENTS, "3", "other::relay", &value(StoreEventsBindingConfig {}))
                .unwrap();
            subs.bind(CHANGED, "4", "f::feed", &serde_json::json!({"session_id": "s"})).unwrap();
        }
        let deleted = value(DeletedEvent { session_id: "s".into(), timestamp: 1 });
        let change = Change {
            seq: 7,
            change_type: DELETED.into(),
            payload: deleted.clone(),
            timestamp: 1,
            epoch: None,
        };
        let envelope = EventEnvelope {
            trigger_type: DELETED.into(),
            payload: deleted.clone(),
            session_metadata: Some(owner("u")),
            change: Some(change),
        };
        let relay = EmitterPublisher::new(&emitter, None, false);
        deliver(&*relay, value(&envelope)).await;
        let got = rec.0.lock().unwrap();
        let ids: Vec<&str> = got.iter().map(|d| d.function_id.as_str()).collect();
        assert_eq!(ids, ["f::mine", "f::feed"], "the seed binding, then the feed's");
        assert_eq!(got[0].payload, deleted);
        assert_eq!(got[1].payload["seq"], 7, "the envelope's change reaches session::changed");
    }
}
