//! `session::store::path-locate` / `session::store::path-select` (store-protocol extensions,
//! issue 12): a bridged instance's window of a session's path, answered by the main's indexes in
//! one call instead of one `session::store::get-entry` per step. Their wire types and their
//! conversion to and from the core's [`PathSpot`] / [`PathSelect`].

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::SessionEntry;
use crate::path::{PathSelect, PathSpot};
use crate::path_index::{EntryClass, EntryClasses};

/// `session::store::path-locate`: the path root → `leaf` of a session, and where `entry_id` is
/// on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StorePathLocateRequest {
    pub session_id: String,
    pub leaf: String,
    /// The entry to find on the path; `null` asks only for the path's length.
    pub entry_id: Option<String>,
}

/// Where an entry is on a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StorePathSpot {
    /// Entries on the path.
    pub len: usize,
    /// The entry asked about; `null` when it is not on the path (or none was asked about).
    pub at: Option<StorePathPosition>,
}

/// An entry's position on a path (0 = the root) and its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StorePathPosition {
    pub position: usize,
    pub class: EntryClass,
}

/// `session::store::path-select`: the first `limit` entries of `classes` at positions `from`
/// and later of the path root → `leaf` (with `backward`, the last `limit` before `from`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StorePathSelectRequest {
    pub session_id: String,
    pub leaf: String,
    pub classes: Vec<EntryClass>,
    pub from: usize,
    pub backward: bool,
    pub limit: usize,
}

/// A window of a path, in path order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StorePathWindow {
    pub entries: Vec<StorePathEntry>,
}

/// One entry of a window, with its position on the path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StorePathEntry {
    pub position: usize,
    pub entry: SessionEntry,
}

impl From<PathSpot> for StorePathSpot {
    fn from(spot: PathSpot) -> Self {
        let at = spot.at.map(|(position, class)| StorePathPosition { position, class });
        StorePathSpot { len: spot.len, at }
    }
}

impl From<StorePathSpot> for PathSpot {
    fn from(spot: StorePathSpot) -> Self {
        PathSpot { len: spot.len, at: spot.at.map(|at| (at.position, at.class)) }
    }
}

impl StorePathSelectRequest {
    /// The request for window `query` of the path root → `leaf`.
    pub fn new(session_id: &str, leaf: &str, query: &PathSelect) -> Self {
        StorePathSelectRequest {
            session_id: session_id.into(),
            leaf: leaf.into(),
            classes: query.classes.classes().collect(),
            from: query.from,
            backward: query.backward,
            limit: query.limit,
        }
    }

    /// The window the request asks for.
    pub fn query(&self) -> PathSelect {
        PathSelect {
            classes: EntryClasses::of(&self.classes),
            from: self.from,
            backward: self.backward,
            limit: self.limit,
        }
    }
}

impl From<Vec<(usize, SessionEntry)>> for StorePathWindow {
    fn from(window: Vec<(usize, SessionEntry)>) -> Self {
        let entries = window
            .into_iter()
            .map(|(position, entry)| StorePathEntry { position, entry })
            .collect();
        StorePathWindow { entries }
    }
}

impl From<StorePathWindow> for Vec<(usize, SessionEntry)> {
    fn from(window: StorePathWindow) -> Self {
        window.entries.into_iter().map(|e| (e.position, e.entry)).collect()
    }
}
