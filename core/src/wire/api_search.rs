//! Wire types of `session::search` (extension, issue 39): full-text search across a tenant's
//! sessions, with the matching rules of `crate::search`.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::{Object, Role};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchRequest {
    /// Words (all must match), `"exact phrases"`, `prefix*`; case and accents do not matter.
    pub query: String,
    /// Only sessions whose metadata holds these pairs (subset match, as `session::list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    /// What may be a hit: `message` entries, `custom` entries, `session` titles and descriptions
    /// (default: all three).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<SearchKind>>,
    /// Only messages of these roles (then no custom entry and no session is a hit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<Role>>,
    /// Only these sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_ids: Option<Vec<String>>,
    /// `all` (default): entries on any branch; `active`: only entries on each session's active
    /// path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<SearchBranch>,
    /// Only hits at or after this time (ms since epoch: an entry's timestamp, a session's
    /// `updated_at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<i64>,
    /// Only hits before this time (ms since epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<i64>,
    /// Hits per page (default and maximum as `session::list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// `next_cursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// What a hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SearchKind {
    Message,
    Custom,
    Session,
}

/// Which entries are searched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SearchBranch {
    #[default]
    All,
    Active,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchResponse {
    /// Best first: by score, then newest, then session and entry id.
    pub hits: Vec<SearchHit>,
    /// Pass as `cursor` for the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchHit {
    pub session_id: String,
    /// The entry that matched (`null` for a session's title or description).
    pub entry_id: Option<String>,
    pub kind: SearchKind,
    /// The message's role (`null` for a custom entry or a session).
    pub role: Option<Role>,
    /// The session's title.
    pub title: String,
    /// Up to 60 characters before the first occurrence and 100 from it, control characters as
    /// spaces.
    pub snippet: String,
    /// `[start, end)` of each occurrence in `snippet`, in characters (Unicode scalar values).
    pub highlights: Vec<[u64; 2]>,
    /// How many times the query's words and phrases occur.
    pub score: u64,
    /// The entry's timestamp, or the session's `updated_at`.
    pub timestamp: i64,
}
