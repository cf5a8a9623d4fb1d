//! Wire types of `session::import` and `session::export` (extensions, issue 40): one session in
//! and out of another agent's file format (`crate::formats`).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::Object;
pub use crate::formats::{Format, Skipped};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
// Unknown fields are let through like every request's: the engine adds `_caller_worker_id`.
pub struct ImportRequest {
    /// The format of `data`: `pi`, `claude-code`, `openai` or `ui-message`.
    pub format: Format,
    /// The file's text (JSONL, or a JSON array for `openai` and `ui-message`).
    pub data: String,
    /// The file's name: the session id of a format that names none is its stem (default
    /// `import`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
    /// Milliseconds since epoch given to what the format gives no time (default: now). Pass the
    /// file's modification time so importing the same file again finds it unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<i64>,
    /// Pairs added to the imported session's metadata (the tenancy hook, e.g. `{ "owner": "u_1" }`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    /// Replace a stored session of the same id whose content differs (default: leave it, answer
    /// `exists`).
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub replace: bool,
}

/// What an import did with the session of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ImportOutcome {
    /// Stored as a new session.
    Created,
    /// A stored session of the same id was replaced (`replace: true`).
    Replaced,
    /// The store already holds this session exactly: nothing written (a rerun).
    Unchanged,
    /// The store holds another session of this id: nothing written (pass `replace: true`).
    Exists,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ImportResponse {
    pub session_id: String,
    pub outcome: ImportOutcome,
    /// Entries the file gave (all branches).
    pub entries: u64,
    /// Lines of the file left out, and why.
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExportRequest {
    pub session_id: String,
    /// `pi` and `claude-code` hold every branch; `openai` and `ui-message` the active one.
    pub format: Format,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExportResponse {
    pub session_id: String,
    pub format: Format,
    /// The file's text.
    pub data: String,
    /// A file name for it (`<session_id>.jsonl`, `.json` for a JSON array).
    pub file_name: String,
    /// Entries written (the active branch's for a one-branch format).
    pub entries: u64,
}
