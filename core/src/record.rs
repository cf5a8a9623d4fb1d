//! Session log records (contract §5.3) and the one state machine that applies them: the fs store's
//! replay, its write-through cache and the in-memory store all go through `SessionState::apply`, so
//! a restart rebuilds exactly the state that was acknowledged.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::wire::{SessionEntry, SessionMeta};

/// One line of a session's JSONL log.
// Records are short-lived (parsed, applied, dropped); boxing the metas would only add allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The session's metadata (last wins).
    Meta { meta: SessionMeta },
    /// One entry snapshot (last wins per id).
    Entry { entry: SessionEntry },
    /// The active leaf pointer (`null` clears it).
    Leaf { entry_id: Option<String> },
    /// A committed append: entry, implicit leaf move and post-commit meta in one line.
    Append { entry: SessionEntry, meta: SessionMeta },
    /// Marks an entry committed (written by snapshot rewrites).
    Commit { entry_id: String },
    /// Clears a pending legacy append without marking anything: ends a snapshot whose state has a
    /// leaf but no pending legacy append, which the `leaf` line alone would leave pending. An
    /// extension of this store (not in v1.0.32, which skips it as an unknown line, see
    /// [`SessionState::snapshot_records`] for what that changes).
    Settle,
}

/// Everything stored for one session except attachments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionState {
    pub meta: Option<SessionMeta>,
    pub entries: BTreeMap<String, SessionEntry>,
    pub leaf: Option<String>,
    pub committed: BTreeSet<String>,
    /// Legacy three-line appends: a `leaf` record waits for the `meta` that completes it.
    pending_legacy_append: bool,
}

/// Result of committing one append (contract §5.5 `commit_append`).
#[derive(Debug, Clone, PartialEq)]
pub struct CommitOutcome {
    pub committed: bool,
    pub entry: SessionEntry,
    pub meta: SessionMeta,
}

impl SessionState {
    /// True when nothing is stored (the fs store then removes the file). Commit markers count:
    /// a log of nothing but `commit` lines replays to markers that a later `commit_append` of
    /// the same id reads, so dropping them would make stores disagree about that append.
    pub fn is_empty(&self) -> bool {
        self.meta.is_none()
            && self.entries.is_empty()
            && self.leaf.is_none()
            && self.committed.is_empty()
    }

    /// True while a legacy `leaf` record waits for the `meta` that completes it (contract §5.4).
    pub fn pending_legacy_append(&self) -> bool {
        self.pending_legacy_append
    }

    /// Applies one record with the replay rules of contract §5.4.
    pub fn apply(&mut self, record: &Record) {
        match record {
            Record::Meta { meta } => {
                self.meta = Some(meta.clone());
                if self.pending_legacy_append {
                    self.mark_active_path_committed();
                    self.pending_legacy_append = false;
                }
            }
            Record::Entry { entry } => {
                self.entries.insert(entry.id().into(), entry.clone());
            }
            Record::Leaf { entry_id } => {
                self.leaf = entry_id.clone();
                // Only a leaf has a path to mark committed: with none, the flag would change
                // nothing but would be lost by the snapshot (which writes no `leaf` line).
                self.pending_legacy_append = entry_id.is_some();
            }
            Record::Append { entry, meta } => {
                let id: String = entry.id().into();
                self.entries.insert(id.clone(), entry.clone());
                self.leaf = Some(id.clone());
                self.meta = Some(meta.clone());
                self.committed.insert(id);
                self.pending_legacy_append = false;
            }
            Record::Commit { entry_id } => {
                self.committed.insert(entry_id.clone());
            }
            Record::Settle => self.pending_legacy_append = false,
        }
    }

    fn mark_active_path_committed(&mut self) {
        let mut cursor = self.leaf.clone();
        while let Some(id) = cursor {
            if !self.committed.insert(id.clone()) {
                break;
            }
            cursor = self.entries.get(&id).and_then(|e| e.parent_id().map(String::from));
        }
    }

    /// Decides one `commit_append` against this state (contract §5.5) and returns the record to
    /// write (if any) with the outcome. The caller writes the record, then applies it.
    pub fn decide_commit(
        &self,
        mut entry: SessionEntry,
        parent_explicit: bool,
    ) -> Result<(Option<Record>, CommitOutcome), StoreError> {
        let Some(meta) = self.meta.clone() else {
            return Err(StoreError::rejected("commit_append: session meta does not exist"));
        };
        if let Some(stored) = self.entries.get(entry.id()) {
            if self.committed.contains(entry.id()) {
                let outcome = CommitOutcome { committed: false, entry: stored.clone(), meta };
                return Ok((None, outcome));
            }
            entry = stored.clone();
        } else if parent_explicit {
            if let Some(parent) = entry.parent_id() {
                if !self.entries.contains_key(parent) {
                    return Err(StoreError::rejected(alloc::format!(
                        "commit_append: parent {parent} does not exist"
                    )));
                }
            }
        } else {
            entry.set_parent_id(self.leaf.clone());
        }
        let mut meta = meta;
        if entry.is_message() {
            meta.message_count += 1;
        }
        meta.updated_at = entry.timestamp();
        let record = Record::Append { entry: entry.clone(), meta: meta.clone() };
        Ok((Some(record), CommitOutcome { committed: true, entry, meta }))
    }

    /// The records that rebuild this state from nothing (snapshot rewrite order of §5.5: meta,
    /// entries by id, commit markers by id, leaf), followed by `settle` when the state has a leaf
    /// but no pending legacy append (the `leaf` line would otherwise leave one pending, and the
    /// next `meta` after a restart would mark the active path committed when the acknowledged
    /// state would not).
    ///
    /// v1.0.32 skips `settle`, so it ends such a snapshot with the flag set. That changes nothing
    /// it computes while the leaf is committed (the usual case: a leaf set by `append`, or
    /// completed by a `meta`): the next `meta` walks from the leaf, finds it committed and stops.
    /// It does when the leaf is not committed, which only `delete_entries` without
    /// `delete_active_leaf` leaves (the store protocol's `session::store::delete-entries`, e.g. a
    /// bridged delete interrupted between its calls): v1.0.32 replays the snapshot itself to the
    /// same state, but a `meta` line after it marks the leaf's path committed for v1.0.32 and not
    /// here. No v1.0.32 record can express that state (only `meta` and `append` clear the flag, and
    /// both commit the leaf); finishing the delete (`delete-active-leaf`) removes the difference.
    pub fn snapshot_records(&self) -> Vec<Record> {
        let mut records = Vec::with_capacity(self.entries.len() + self.committed.len() + 3);
        if let Some(meta) = &self.meta {
            records.push(Record::Meta { meta: meta.clone() });
        }
        records.extend(self.entries.values().map(|e| Record::Entry { entry: e.clone() }));
        records.extend(self.committed.iter().map(|id| Record::Commit { entry_id: id.clone() }));
        if let Some(leaf) = &self.leaf {
            records.push(Record::Leaf { entry_id: Some(leaf.clone()) });
            if !self.pending_legacy_append {
                records.push(Record::Settle);
            }
        }
        records
    }
}
