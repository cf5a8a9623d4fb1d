//! Requests, responses and items of the entry functions: append, append-many, update-message,
//! get-message, messages, messages-tail, messages-range.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AgentMessage, ContentBlock, CustomPayload, Object, Role, SessionEntry, Usage};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AppendRequest {
    pub session_id: String,
    /// The message to append (a `kind: "message"` entry). Exactly one of `message` / `custom` must
    /// be supplied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<AgentMessage>,
    /// Append a bookkeeping `kind: "custom"` entry instead of a message (e.g. the harness's
    /// compaction record). Custom entries do not count toward `message_count` and are only
    /// returned by `session::messages` when `include_custom` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<CustomPayload>,
    /// Override the parent (default: active leaf). Appending always moves the active leaf to the
    /// new entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Caller-supplied id for idempotent appends: appending an id that already exists is a no-op —
    /// the existing entry is returned and no event fires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// Opaque correlation (e.g. `{ "turn_id": ... }`), echoed on events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Object>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AppendResponse {
    pub entry_id: String,
    pub parent_id: Option<String>,
    pub timestamp: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AppendManyRequest {
    pub session_id: String,
    /// Messages appended in order, each chained to the previous one. Not idempotent — use
    /// `session::append` with `entry_id` where redelivery is possible.
    pub messages: Vec<AgentMessage>,
    /// Parent of the first appended entry (default: active leaf).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Opaque correlation echoed on every emitted event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Object>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AppendManyResponse {
    pub entry_ids: Vec<String>,
    pub last_entry_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UpdateMessageRequest {
    pub session_id: String,
    pub entry_id: String,
    /// New content for the message (full replacement).
    pub content: Vec<ContentBlock>,
    /// New `details` — only for `function_result` / `custom` messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Final token/cost accounting — only for `assistant` messages. Omit for streaming content
    /// updates that do not yet have terminal usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Optimistic concurrency: when supplied and it does not match the entry's current revision,
    /// nothing is written and `{ updated: false, revision }` returns the current revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<u64>,
    /// Opaque correlation echoed on the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Object>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UpdateMessageResponse {
    pub updated: bool,
    /// The entry's revision after this call (unchanged on a mismatch).
    pub revision: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GetMessageRequest {
    pub session_id: String,
    pub entry_id: String,
    /// Default true. When false, `image` blocks that carry an `attachment_id` come back with
    /// `data: ""` (same rule as `session::messages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_image_data: Option<bool>,
}

/// `null` when the session or entry is unknown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GetMessageResponse {
    pub entry: SessionEntry,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessagesRequest {
    pub session_id: String,
    /// Page size. Default 50, clamped to the configured maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Opaque pagination cursor from a previous response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Only messages with these roles. Setting this also excludes `kind: "custom"` entries (it is
    /// an explicit narrowing to roles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<Role>>,
    /// Treat this entry as the leaf: return its parent chain, root -> entry, oldest first (branch
    /// view).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_entry_id: Option<String>,
    /// Return only entries strictly after this entry id on the requested path (incremental fetch
    /// from a known watermark). Errors `session/invalid_cursor` when the entry is not on the path —
    /// e.g. after a fork moved the active leaf — so callers fall back to a full load. Ignored when
    /// `cursor` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_entry_id: Option<String>,
    /// Interleave `kind: "custom"` entries at their path position. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_custom: Option<bool>,
    /// Default true. When false, `image` blocks that carry an `attachment_id` come back with
    /// `data: ""`; the reader fetches the bytes on demand with `session::get-attachment`. Images
    /// without a stored original are returned inline regardless. Lets a UI open a long,
    /// picture-heavy transcript without pulling every image first; model-bound readers keep the
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_image_data: Option<bool>,
}

/// One item of the active path: exactly one of `message` / `custom`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessageItem {
    pub entry_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<AgentMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<CustomPayload>,
    /// The entry's writer-supplied origin (turn correlation plus hook annotations, e.g. which
    /// memory bank and facts fed the generate). Absent on custom entries and on entries written
    /// without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Object>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessagesResponse {
    pub messages: Vec<MessageItem>,
    /// Present when more pages remain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// One item of the page: exactly one of `message` / `custom`. Same fields as `session::messages`
/// items plus `elided`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TailItem {
    pub entry_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<AgentMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<CustomPayload>,
    /// The entry's writer-supplied origin, as on `session::messages`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Object>,
    /// Present and true when this entry sits inside a collapsed activity run and the heavy parts
    /// of its message were left out: `function_call` blocks keep `id` + `function_id` but carry
    /// `arguments: {}` (an `agent_trigger` call keeps its string `function` + `description` label
    /// and drops `payload`), `function_result` messages keep `function_call_id` + `is_error` with
    /// `content: []` and `details: null`, thinking is dropped, text is kept.
    /// `session::messages-range` returns the whole entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elided: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessagesTailRequest {
    pub session_id: String,
    /// Page size in *blocks* (an entry, or one whole activity run), not entries: a page is "N
    /// conversational steps", and a tool run of 300 calls counts once. Default 50, clamped to the
    /// configured maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Exclusive upper bound: return the page ending just before the block that contains this
    /// entry (the oldest entry the caller already has). Omitted = the newest page.
    /// `session/invalid_cursor` when the entry is not on the active path (e.g. after a fork moved
    /// the leaf), so callers reload from the top.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_entry_id: Option<String>,
    /// Extend the page backwards until the block containing this entry is included, ignoring
    /// `limit` (deep links: "go to message"). No-op when the entry is already within the page or
    /// newer than it. `session/invalid_cursor` when not on the active path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_entry_id: Option<String>,
    /// Interleave `kind: "custom"` entries at their path position. Default TRUE here (unlike
    /// `session::messages`): a transcript reader wants compaction markers and wake records in
    /// place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_custom: Option<bool>,
    /// Default true. When false, `image` blocks that carry an `attachment_id` come back with
    /// `data: ""` (as `session::messages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_image_data: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessagesTailResponse {
    /// Oldest first, like `session::messages`.
    pub messages: Vec<TailItem>,
    /// True when older blocks exist before this page.
    pub has_more: bool,
    /// The first entry of this page: pass it as `before_entry_id` to fetch the page before.
    /// Absent on an empty page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest_entry_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessagesRangeRequest {
    pub session_id: String,
    /// With `to_entry_id`: every entry of the active path from this one to `to_entry_id`, both
    /// inclusive, oldest first. Exactly one selector (`from_entry_id`+`to_entry_id`, or
    /// `entry_ids`) is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_entry_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_entry_id: Option<String>,
    /// Specific entries, returned in path order (duplicates folded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_ids: Option<Vec<String>>,
    /// Page size in entries. Default 50, clamped to the configured maximum; a long run comes back
    /// in several pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Opaque pagination cursor from a previous response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Default true. When false, `image` blocks that carry an `attachment_id` come back with
    /// `data: ""` (as `session::messages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_image_data: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessagesRangeResponse {
    /// Oldest first; never `elided`.
    pub messages: Vec<TailItem>,
    /// Present when more entries of the selection remain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}
