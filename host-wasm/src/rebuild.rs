//! The live-sync side of the `Workspace` (the feed change each event of `call` carries is
//! `call_event.rs`): `rebuildFromFeed` — a session rebuilt from its `session::changes` pages by
//! the core's [`replica::rebuild`], checked against the store with [`Replica::differs_from`].

use serde::Serialize;
use session_core::replica::{self, Replica, ReplicaMeta};
use session_core::wire::{ChangesRequest, ChangesResponse, Object, SessionEntry, SessionStatus};
use session_core::{ops, SessionError};
use wasm_bindgen::prelude::*;

use crate::convert::{error, to_js};
use crate::workspace::Workspace;

/// The session fields a feed rebuilt (the core's `ReplicaMeta`, as JSON).
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct RebuiltMeta {
    title: String,
    description: String,
    status: SessionStatus,
    status_reason: Option<String>,
    forked_from: Option<String>,
    created_at: i64,
    message_count: u64,
    /// Absent until a snapshot or a `session::meta-updated` told it (creation does not); `null`
    /// when the session has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<Option<Object>>,
}

impl From<ReplicaMeta> for RebuiltMeta {
    fn from(m: ReplicaMeta) -> Self {
        RebuiltMeta {
            title: m.title,
            description: m.description,
            status: m.status,
            status_reason: m.status_reason,
            forked_from: m.forked_from,
            created_at: m.created_at,
            message_count: m.message_count,
            metadata: m.metadata,
        }
    }
}

/// A snapshot read the rebuild took where the feed does not carry everything.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct SnapshotRead {
    /// The seq the snapshot stands at (the feed's `latest_seq` when it was read).
    at_seq: u64,
    /// `fork`: a fork's `session::created` (its copied history is event-silent); `truncated`:
    /// the feed no longer keeps its start (`feed_retention`); `new_epoch`: the session id was
    /// deleted and created again between two pages.
    reason: SnapshotReason,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum SnapshotReason {
    Fork,
    Truncated,
    NewEpoch,
}

/// What `rebuildFromFeed` returns.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct Rebuilt {
    session_id: String,
    /// The seq of the last change the replica holds.
    applied_seq: u64,
    /// The feed's newest seq.
    latest_seq: u64,
    /// `session::changes` pages read.
    pages: u64,
    /// Changes applied one by one (the rest came with a snapshot).
    applied: u64,
    /// Snapshot reads taken (none for a session whose whole feed is kept and that is no fork).
    snapshots: Vec<SnapshotRead>,
    /// The rebuilt session; `null` when the feed ends deleted or never started.
    meta: Option<RebuiltMeta>,
    /// Every rebuilt entry (every branch), by id.
    entries: Vec<SessionEntry>,
    /// True when the replica agrees with the store (`Replica::differs_from`).
    matches: bool,
    /// How it differs, or the change it could not apply; `null` when it matches.
    difference: Option<String>,
}

#[wasm_bindgen]
impl Workspace {
    /// Rebuilds a session from its change feed (`session::changes`, page by page, applied by the
    /// core's `Replica`, with a snapshot read after a fork or a truncated feed) and compares it
    /// with the store: `{ session_id, applied_seq, latest_seq, pages, applied, snapshots, meta,
    /// entries, matches, difference }`.
    #[wasm_bindgen(js_name = rebuildFromFeed, unchecked_return_type = "Rebuilt")]
    pub fn rebuild_from_feed(&self, session_id: &str) -> Result<JsValue, JsValue> {
        let snapshot = |seq| {
            let state = self.store().session_state(session_id);
            Replica::from_snapshot(
                session_id,
                state.meta.as_ref(),
                state.entries.into_values(),
                seq,
            )
        };
        let rebuild = replica::rebuild(
            session_id,
            |after_seq| self.changes_page(session_id, after_seq),
            snapshot,
        )?;
        let replica::Rebuild { replica, latest_seq, pages, applied, snapshots, stopped } = rebuild;
        let snapshots = snapshots
            .into_iter()
            .map(|s| SnapshotRead {
                at_seq: s.at_seq,
                reason: match s.reason {
                    replica::SnapshotReason::Fork => SnapshotReason::Fork,
                    replica::SnapshotReason::Truncated => SnapshotReason::Truncated,
                    replica::SnapshotReason::NewEpoch => SnapshotReason::NewEpoch,
                },
            })
            .collect();
        let stopped = stopped.map(|stop| stop.to_string());
        let difference =
            stopped.or_else(|| replica.differs_from(&self.store().session_state(session_id)));
        // Through a JSON value: the bundle already holds that encoding of every entry (responses
        // are encoded so), not a second one straight to JavaScript.
        let rebuilt = serde_json::to_value(Rebuilt {
            session_id: session_id.into(),
            applied_seq: replica.applied_seq,
            latest_seq,
            pages,
            applied,
            snapshots,
            meta: replica.meta.map(RebuiltMeta::from),
            entries: replica.entries.into_values().collect(),
            matches: difference.is_none(),
            difference,
        })
        .map_err(|e| error(&SessionError::storage(format!("rebuild encoding failed: {e}"))))?;
        to_js(&rebuilt)
    }
}

impl Workspace {
    /// One `session::changes` page after `after_seq`: the function's own read, typed (no JSON
    /// round trip, which would cost the bundle a decoder of every payload).
    fn changes_page(&self, session_id: &str, after_seq: u64) -> Result<ChangesResponse, JsValue> {
        let request = ChangesRequest {
            session_id: session_id.into(),
            after_seq: Some(after_seq),
            limit: None,
        };
        self.with_env(|store, env| ops::changes::page(store, env, request)).map_err(|e| error(&e))
    }
}
