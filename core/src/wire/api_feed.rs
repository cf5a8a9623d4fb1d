//! Wire types of live sync (extensions, not in the seed): the per-session change feed
//! (`session::changes`, trigger type `session::changed`), O(delta) streaming
//! (`session::append-delta`) and the store-protocol read a bridge uses to reach its main's feed.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Object;

/// One change of a session's feed: a seed event (or the compact `session::message-delta`) with
/// the session's next sequence number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Change {
    /// Position in the session's feed: from 1, no gaps, never reused.
    pub seq: u64,
    /// The seed trigger type id the change fired (`session::created`, …), or
    /// `session::message-delta` for an `append-delta`.
    #[serde(rename = "type")]
    pub change_type: String,
    /// Exactly what that trigger delivered (for `session::message-delta`: a `MessageDelta`).
    pub payload: Value,
    /// When the mutation ran (ms since the epoch).
    pub timestamp: i64,
    /// The feed's epoch: one per incarnation of the session id (a re-created id starts a new
    /// one at seq 1). A replica holding another epoch reloads. Absent for a feed written before
    /// epochs existed, and for a session that does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChangesRequest {
    pub session_id: String,
    /// Changes with a larger seq are returned. Default 0 (the whole kept feed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_seq: Option<u64>,
    /// Page size. Default 50, clamped to the configured maximum (the list limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChangesResponse {
    pub session_id: String,
    /// The feed's epoch: one per incarnation of the session id (a re-created id starts a new
    /// one at seq 1). A replica holding another epoch reloads. Absent for a feed written before
    /// epochs existed, and for a session that does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,

    /// The session's changes after `after_seq`, in seq order.
    pub changes: Vec<Change>,
    /// The seq of the session's newest change (0 when it has none).
    pub latest_seq: u64,
    /// Pass as `after_seq` for the next page; `null` on the last page.
    pub next_after_seq: Option<u64>,
    /// True when changes after `after_seq` are no longer kept (`feed_retention`): reload the
    /// session (messages / messages-tail) and resume at `latest_seq`. `changes` is then empty.
    pub truncated: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AppendDeltaRequest {
    pub session_id: String,
    pub entry_id: String,
    /// Appended to the message's last `text` block (a new one when the last block is another
    /// kind). Exactly one of `text` or `thinking`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Appended to the message's last `thinking` block (a new one when the last block is another
    /// kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Optimistic concurrency, as `session::update-message`: on a mismatch nothing is written
    /// and `{ updated: false, revision }` returns the current revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<u64>,
    /// Opaque correlation echoed on the `session::message-updated` event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Object>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AppendDeltaResponse {
    pub updated: bool,
    /// The entry's revision after this call (unchanged on a mismatch).
    pub revision: u64,
}

/// The payload of a `session::message-delta` change: what an `append-delta` added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessageDelta {
    pub session_id: String,
    pub entry_id: String,
    /// The entry's revision after the delta.
    pub revision: u64,
    /// The content block the text went to (equal to the old block count for a new block).
    pub block_index: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
}

/// Config accepted by `session::changed` bindings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ChangedBindingConfig {
    /// Only deliver changes of this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Equality match against `SessionMeta.metadata` (subset match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    /// Only deliver changes of these types (seed trigger type ids or `session::message-delta`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<String>>,
    /// Coalesce streaming (1 to 10000 ms): consecutive `session::message-delta` changes of one
    /// block are delivered at most this often as one change whose `first_seq`..`seq` it covers
    /// and whose text is theirs joined. Other changes go out at once, after a pending merge.
    // Signed: an unsigned field would register `"minimum": 0.0` (trigger schemas are derived by
    // iii-sdk, unrewritten); the range is checked when the binding is parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coalesce_ms: Option<i64>,
}

/// What a `session::changed` binding receives: one change of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChangedEvent {
    pub session_id: String,
    /// The feed's epoch: one per incarnation of the session id (a re-created id starts a new
    /// one at seq 1). A replica holding another epoch reloads. Absent for a feed written before
    /// epochs existed, and for a session that does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,

    pub seq: u64,
    /// Only on a coalesced delivery (`coalesce_ms`): the first seq it covers (`seq` is the last).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_seq: Option<u64>,
    #[serde(rename = "type")]
    pub change_type: String,
    pub payload: Value,
    pub timestamp: i64,
}

impl ChangedEvent {
    /// The change this delivery carries (for a coalesced one: its last seq, the text joined).
    pub fn into_change(self) -> Change {
        Change {
            seq: self.seq,
            change_type: self.change_type,
            payload: self.payload,
            timestamp: self.timestamp,
            epoch: self.epoch,
        }
    }
}

/// `session::store::changes` (store-protocol extension): one page of a session's feed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreChangesRequest {
    pub session_id: String,
    pub after_seq: u64,
    pub limit: usize,
}

/// One page of a session's feed as a store holds it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FeedPage {
    /// The feed's epoch: one per incarnation of the session id (a re-created id starts a new
    /// one at seq 1). A replica holding another epoch reloads. Absent for a feed written before
    /// epochs existed, and for a session that does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,

    /// At most `limit` changes after `after_seq`, in seq order (empty when truncated).
    pub changes: Vec<Change>,
    pub latest_seq: u64,
    /// Changes after `after_seq` are no longer kept.
    pub truncated: bool,
}
