//! Session log records (contract §5.3) and the one state machine that applies them: the fs store's
//! replay, its write-through cache and the in-memory store all go through `SessionState::apply`, so
//! a restart rebuilds exactly the state that was acknowledged.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::feed::{Feed, KeptChange};
use crate::lifecycle::{Lifecycle, Trashed};
use crate::path_index::PathIndex;
use crate::wire::{Change, ContentBlock, MessageDelta, SessionEntry, SessionMeta};

crate::internally_tagged! {
tag = "type", rename_all = "snake_case", remote = "Record";
/// One line of a session's JSONL log.
// Records are short-lived (parsed, applied, dropped); boxing the metas would only add allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// One change of the session's feed (live sync; an extension v1.0.32 skips as an unknown
    /// line, losing only the feed).
    Change { change: LoggedChange },
    /// Text an `append-delta` added to one content block, with the entry's new revision and the
    /// session's new `updated_at`. An extension: v1.0.32 skips it and would lose the text, so a
    /// data_dir goes back to v1.0.32 through `session-manager export --snapshot` (snapshots hold
    /// whole entries).
    Delta { delta: MessageDelta, at: i64 },
    /// The session goes to the trash at `at`: its meta is parked there ([`Lifecycle::trashed`]),
    /// so no read or list sees it. An extension: v1.0.32 skips it and lists the session again.
    Trash { at: i64 },
    /// The trashed session comes back with the meta it had.
    Restore,
    /// The session's `expires_at` (`null` clears it). An extension v1.0.32 skips (its sessions
    /// never expire).
    Expiry { expires_at: Option<i64> },
}
}

/// A feed change as the log holds it. `payload` is left out when the record just before it in the
/// same change set holds it — the `session::message-added` of an `append`, the
/// `session::message-delta` of a `delta` — and rebuilt from that record on replay (so an append
/// does not write its message twice, nor a delta its text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedChange {
    pub seq: u64,
    #[serde(rename = "type")]
    pub change_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<serde_json::Value>,
    pub timestamp: i64,
    /// Only on the first change of an epoch in the log (its seq 1, or the oldest kept in a
    /// snapshot): the epoch it and every change after it belong to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
    /// Only in a snapshot: the change is this entry's newest keyed one after compaction, served
    /// as a `session::message-updated` of its current message (no payload is written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_of: Option<String>,
}

impl LoggedChange {
    /// The log form of `change`, with its payload; `epoch` when it opens its epoch in the log.
    pub fn full(change: &Change, opens_epoch: bool) -> Self {
        LoggedChange {
            seq: change.seq,
            change_type: change.change_type.clone(),
            payload: Some(change.payload.clone()),
            timestamp: change.timestamp,
            epoch: if opens_epoch { change.epoch.clone() } else { None },
            current_of: None,
        }
    }

    /// The snapshot line of a kept feed element (`epoch` of the feed when it opens it).
    pub fn of_kept(kept: KeptChange<'_>, epoch: Option<&str>) -> Self {
        let epoch = epoch.map(String::from);
        match kept {
            KeptChange::Change(change) => {
                LoggedChange { epoch, ..LoggedChange::full(change, false) }
            }
            KeptChange::Current { seq, entry_id, timestamp } => LoggedChange {
                seq,
                change_type: crate::events::MESSAGE_UPDATED.into(),
                payload: None,
                timestamp,
                epoch,
                current_of: Some(entry_id.into()),
            },
            KeptChange::Compacted { first_seq, seq, timestamp } => {
                let change = crate::feed::compacted_change(first_seq, seq, timestamp, None);
                LoggedChange { epoch, ..LoggedChange::full(&change, false) }
            }
        }
    }
}

/// Everything stored for one session except attachments.
#[derive(Debug, Clone, Default)]
pub struct SessionState {
    pub meta: Option<SessionMeta>,
    pub entries: BTreeMap<String, SessionEntry>,
    pub leaf: Option<String>,
    pub committed: BTreeSet<String>,
    /// The change feed of the session's current epoch (a delete drops it with the session).
    pub feed: Feed,
    /// The entry of the last `append` record applied: the payload source of a `change` record
    /// that left its payload out.
    last_append: Option<String>,
    /// The last `delta` record applied: the payload source of its `session::message-delta`.
    last_delta: Option<MessageDelta>,
    /// Legacy three-line appends: a `leaf` record waits for the `meta` that completes it.
    pending_legacy_append: bool,
    /// The trash the session may be in and its expiry.
    pub lifecycle: Lifecycle,
    /// The active path as positions, derived from `entries` and `leaf` (issue 12).
    path: PathIndex,
    /// Usage totals, derived from `entries` and the path (issue 38).
    usage: crate::usage::UsageIndex,
}

/// The block an `append-delta` writes to: the last block when it is of the delta's kind
/// (`thinking` or text), else a new one (the block count).
pub fn delta_block_index(content: &[ContentBlock], thinking: bool) -> usize {
    match content.last() {
        Some(ContentBlock::Text { .. }) if !thinking => content.len() - 1,
        Some(ContentBlock::Thinking { .. }) if thinking => content.len() - 1,
        _ => content.len(),
    }
}

/// Adds a delta's text to `content`: appended to block `block_index`, or pushed as a new block
/// when that is one past the last.
pub fn add_delta(
    content: &mut Vec<ContentBlock>,
    delta: &MessageDelta,
) -> Result<(), &'static str> {
    let (thinking, text) = match (&delta.text, &delta.thinking) {
        (Some(text), None) => (false, text),
        (None, Some(text)) => (true, text),
        _ => return Err("exactly one of text or thinking"),
    };
    if delta.block_index == content.len() {
        content.push(match thinking {
            false => ContentBlock::Text { text: text.clone() },
            true => ContentBlock::Thinking { text: text.clone(), signature: None },
        });
        return Ok(());
    }
    match content.get_mut(delta.block_index) {
        Some(ContentBlock::Text { text: block }) if !thinking => block.push_str(text),
        Some(ContentBlock::Thinking { text: block, .. }) if thinking => block.push_str(text),
        Some(_) => return Err("the block is of another kind"),
        None => return Err("block index out of range"),
    }
    Ok(())
}

/// What an `append-delta` does to its entry (`None`: the session has no entry of that id): the
/// text added to its block ([`add_delta`]) and the delta's revision set; rejected (the entry
/// unchanged) when it is not a message or the block does not fit.
pub fn delta_entry(
    entry: Option<&mut SessionEntry>,
    delta: &MessageDelta,
) -> Result<(), &'static str> {
    let Some(SessionEntry::Message { message, revision, .. }) = entry else {
        return Err("not a message entry of this session");
    };
    add_delta(message.content_mut(), delta)?;
    *revision = delta.revision;
    Ok(())
}

/// Equal when they serve the same: `last_append` and `last_delta` are replay bookkeeping, not
/// state, and the path index is derived from `entries` and `leaf`.
impl PartialEq for SessionState {
    fn eq(&self, other: &Self) -> bool {
        self.meta == other.meta
            && self.entries == other.entries
            && self.leaf == other.leaf
            && self.committed == other.committed
            && self.feed == other.feed
            && self.pending_legacy_append == other.pending_legacy_append
            && self.lifecycle == other.lifecycle
    }
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
    /// the same id reads, so dropping them would make stores disagree about that append. A feed
    /// left alone (a deleted session of a log written before epochs) keeps the file.
    pub fn is_empty(&self) -> bool {
        !self.holds_session() && self.feed.is_empty()
    }

    /// True when anything but the feed is stored.
    pub fn holds_session(&self) -> bool {
        self.meta.is_some()
            || !self.lifecycle.is_empty()
            || !self.entries.is_empty()
            || self.leaf.is_some()
            || !self.committed.is_empty()
    }

    /// True while a legacy `leaf` record waits for the `meta` that completes it (contract §5.4).
    pub fn pending_legacy_append(&self) -> bool {
        self.pending_legacy_append
    }

    /// Applies one record with the replay rules of contract §5.4.
    pub fn apply(&mut self, record: &Record) {
        match record {
            Record::Meta { meta } => {
                // A live meta written over a trashed session (only the store protocol can) takes
                // it out of the trash.
                self.lifecycle.trashed = None;
                self.meta = Some(meta.clone());
                if self.pending_legacy_append {
                    self.mark_active_path_committed();
                    self.pending_legacy_append = false;
                }
            }
            Record::Entry { entry } => self.put_entry(entry),
            Record::Leaf { entry_id } => {
                self.set_leaf(entry_id.clone());
                // Only a leaf has a path to mark committed: with none, the flag would change
                // nothing but would be lost by the snapshot (which writes no `leaf` line).
                self.pending_legacy_append = entry_id.is_some();
            }
            Record::Append { entry, meta } => {
                let id: String = entry.id().into();
                self.put_entry(entry);
                self.set_leaf(Some(id.clone()));
                self.lifecycle.trashed = None;
                self.meta = Some(meta.clone());
                self.committed.insert(id.clone());
                self.pending_legacy_append = false;
                self.last_append = Some(id);
            }
            Record::Commit { entry_id } => {
                self.committed.insert(entry_id.clone());
            }
            Record::Settle => self.pending_legacy_append = false,
            Record::Change { change } if change.current_of.is_some() => {
                if let Some(epoch) = &change.epoch {
                    self.feed.start_epoch(epoch.clone());
                }
                let entry_id = change.current_of.clone().unwrap_or_default();
                self.feed.record_current(change.seq, entry_id, change.timestamp);
            }
            Record::Change { change } => {
                let payload = match &change.payload {
                    Some(payload) => Some(payload.clone()),
                    None => self.derived_payload(&change.change_type),
                };
                // A payload-less change with no record to rebuild it from (a hand-edited log) is
                // dropped.
                if let Some(payload) = payload {
                    let epoch =
                        change.epoch.clone().or_else(|| self.feed.epoch().map(String::from));
                    self.feed.record(Change {
                        seq: change.seq,
                        change_type: change.change_type.clone(),
                        payload,
                        timestamp: change.timestamp,
                        epoch,
                    });
                }
            }
            Record::Delta { delta, at } => {
                // Planned against this state, so it fits; a replayed record that does not (a
                // hand-edited log) changes nothing.
                let _ = self.apply_delta(delta, *at);
            }
            Record::Trash { at } => {
                if let Some(meta) = self.meta.take() {
                    self.lifecycle.trashed =
                        Some(alloc::boxed::Box::new(Trashed { at: *at, meta }));
                }
            }
            Record::Restore => {
                if let Some(trashed) = self.lifecycle.trashed.take() {
                    self.meta = Some(trashed.meta);
                }
            }
            Record::Expiry { expires_at } => self.lifecycle.expires_at = *expires_at,
        }
        self.sync_usage();
    }

    fn sync_usage(&mut self) {
        let unchanged = self.path.take_unchanged();
        self.usage.sync(&self.path, unchanged, &self.entries);
    }

    /// The usage tallies of the branch root → `leaf` (empty without one) and of the whole
    /// session, from the kept totals (`session_id` names it in errors).
    pub fn usage(
        &self,
        session_id: &str,
        leaf: Option<&str>,
    ) -> Result<(crate::usage::Tally, crate::usage::Tally), StoreError> {
        self.usage.tallies(session_id, leaf, &self.path, &self.entries)
    }

    /// Adds an `append-delta`'s text to its block: appended to block `block_index`, or a new
    /// block when that is one past the last. Rejected when the entry is not a message or the
    /// block is of another kind or out of range.
    pub fn apply_delta(&mut self, delta: &MessageDelta, at: i64) -> Result<(), StoreError> {
        let reject = |why: &str| {
            Err(StoreError::rejected(alloc::format!("append_delta on {}: {why}", delta.entry_id)))
        };
        if let Err(why) = delta_entry(self.entries.get_mut(&delta.entry_id), delta) {
            return reject(why);
        }
        if let Some(meta) = &mut self.meta {
            meta.updated_at = at;
        }
        self.last_delta = Some(delta.clone());
        Ok(())
    }

    /// The payload a `change` record left out, rebuilt from the record before it in its change
    /// set: a `session::message-delta` from the last `delta` record, a `session::message-added`
    /// from the last appended entry.
    pub fn derived_payload(&self, change_type: &str) -> Option<serde_json::Value> {
        if change_type == crate::feed::MESSAGE_DELTA {
            return serde_json::to_value(self.last_delta.as_ref()?).ok();
        }
        let entry = self.entries.get(self.last_append.as_deref()?)?;
        let sid = &self.meta.as_ref()?.session_id;
        Some(crate::events::message_added(sid, entry, entry.timestamp()).payload())
    }

    /// Stores `entry` (replacing one of its id), keeping the path index current.
    fn put_entry(&mut self, entry: &SessionEntry) {
        let old = self.entries.insert(entry.id().into(), entry.clone());
        self.usage.replaced(old.as_ref(), entry, self.path.position(entry.id()));
        let rebuild = match old {
            Some(old) => self.path.affected_by(&old, entry),
            None => self.path.healed_by(entry.id()),
        };
        if rebuild {
            self.path = PathIndex::build(self.leaf.as_deref(), &self.entries);
        }
    }

    /// Moves the active leaf, re-pointing the path index (cost: the part of the path that moved).
    fn set_leaf(&mut self, leaf: Option<String>) {
        self.leaf = leaf;
        self.path.follow(self.leaf.as_deref(), &self.entries);
    }

    /// Removes every entry and commit marker (a `delete_entries`).
    pub fn clear_entries(&mut self) {
        self.entries.clear();
        self.committed.clear();
        self.path = PathIndex::build(self.leaf.as_deref(), &self.entries);
        {
            self.usage.cleared();
            self.sync_usage();
        }
    }

    /// The active path's index.
    pub fn path_index(&self) -> &PathIndex {
        &self.path
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
        self.each_snapshot_record(|record| records.push(record));
        records
    }

    /// [`Self::snapshot_records`] handed to `emit` one at a time: a caller that only measures or
    /// encodes the snapshot holds one record, not a copy of the whole state (the fs compaction
    /// check runs over a large session under its lock).
    pub fn each_snapshot_record(&self, mut emit: impl FnMut(Record)) {
        if let Some(meta) = &self.meta {
            emit(Record::Meta { meta: meta.clone() });
        }
        if let Some(trashed) = &self.lifecycle.trashed {
            emit(Record::Meta { meta: trashed.meta.clone() });
            emit(Record::Trash { at: trashed.at });
        }
        if let Some(expires_at) = self.lifecycle.expires_at {
            emit(Record::Expiry { expires_at: Some(expires_at) });
        }
        self.entries.values().for_each(|e| emit(Record::Entry { entry: e.clone() }));
        self.committed.iter().for_each(|id| emit(Record::Commit { entry_id: id.clone() }));
        if let Some(leaf) = &self.leaf {
            emit(Record::Leaf { entry_id: Some(leaf.clone()) });
            if !self.pending_legacy_append {
                emit(Record::Settle);
            }
        }
        let mut epoch = self.feed.epoch();
        self.feed.each_kept(0, usize::MAX, |kept| {
            emit(Record::Change { change: LoggedChange::of_kept(kept, epoch.take()) });
        });
    }

    /// A page of the feed ([`Feed::page`]), a compacted entry's newest change served with the
    /// entry's current message.
    pub fn feed_page(&self, after_seq: u64, limit: usize) -> crate::wire::FeedPage {
        let read = |id: &str| Ok::<_, core::convert::Infallible>(self.entries.get(id).cloned());
        match self.feed_page_with(after_seq, limit, read) {
            Ok(page) => page,
            Err(never) => match never {},
        }
    }

    /// [`Self::feed_page`] with the entries read through `entry` (a store that keeps bodies
    /// elsewhere, like the fs store's spilled sessions); its first error ends the page.
    pub fn feed_page_with<E>(
        &self,
        after_seq: u64,
        limit: usize,
        mut entry: impl FnMut(&str) -> Result<Option<SessionEntry>, E>,
    ) -> Result<crate::wire::FeedPage, E> {
        let mut failed = None;
        let page = self.feed.page(after_seq, limit, |entry_id, timestamp| {
            let session_id = self.meta.as_ref()?.session_id.clone();
            let read = entry(entry_id).map_err(|e| failed.get_or_insert(e)).ok()?;
            let Some(SessionEntry::Message { message, revision, .. }) = read else {
                return None;
            };
            let event = crate::wire::MessageUpdatedEvent {
                session_id,
                entry_id: entry_id.into(),
                message,
                revision,
                origin: None,
                timestamp,
            };
            serde_json::to_value(event).ok()
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(page),
        }
    }
}
