//! The storage boundary: a dumb, atomic store whose operations line up with the seed's
//! `session::store::*` protocol (contract §5.1, §5.7); one transaction per call
//! ([`Store::transact`]: load → decide over a [`SessionView`] → apply, under the backend's own
//! lock); the `ChangeSet` a mutation hands to it and the shared logic that turns a change set into
//! log records.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{SessionError, StoreError};
use crate::feed::PendingChange;
use crate::meta_order::ListQuery;
use crate::path::{PathSelect, PathSpot};
use crate::path_index::EntryClasses;
use crate::record::{CommitOutcome, LoggedChange, Record, SessionState};
use crate::wire::{AttachmentMeta, Change, FeedPage, MessageDelta, SessionEntry, SessionMeta};

/// One write of a mutation. Every write of a `ChangeSet` concerns the change set's session.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    PutMeta(SessionMeta),
    PutEntry(SessionEntry),
    SetActiveLeaf(String),
    /// The authoritative append commit of contract §5.5.
    CommitAppend {
        entry: SessionEntry,
        parent_explicit: bool,
    },
    DeleteEntries,
    DeleteActiveLeaf,
    DeleteMeta,
    PutAttachment {
        meta: AttachmentMeta,
        bytes: Vec<u8>,
    },
    DeleteAttachment(String),
    DeleteAttachments,
    /// An `append-delta`: text added to one block of one message, the session's `updated_at`.
    AppendDelta {
        delta: MessageDelta,
        at: i64,
    },
    /// The session goes to the trash (its meta parked there) at `at`.
    Trash {
        at: i64,
    },
    /// The trashed session comes back.
    Restore,
    /// Sets (or clears) the session's `expires_at`.
    SetExpiry(Option<i64>),
    /// Records the mutation's changes in the session's feed, each with the next seq; keeps the
    /// newest `retention`. Last write of its change set. `epoch`: the change set creates the
    /// session, whose feed starts this new epoch at seq 1.
    Feed {
        timestamp: i64,
        retention: crate::feed::Retention,
        epoch: Option<String>,
        changes: Vec<PendingChange>,
    },
}

/// The writes of one mutation, applied all-or-nothing by the store.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct ChangeSet {
    pub session_id: String,
    pub writes: Vec<Write>,
}

impl ChangeSet {
    pub fn new(session_id: impl Into<String>) -> Self {
        ChangeSet { session_id: session_id.into(), writes: Vec::new() }
    }

    pub fn with(mut self, write: Write) -> Self {
        self.writes.push(write);
        self
    }

    pub fn push(&mut self, write: Write) {
        self.writes.push(write);
    }
}

/// What applying a change set reported back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Applied {
    /// Outcome of a `CommitAppend` write, if the change set had one.
    pub commit: Option<CommitOutcome>,
    /// Whether each `DeleteAttachment` write found the attachment, in order.
    pub attachments_deleted: Vec<bool>,
    /// The changes a `Feed` write recorded, with their seqs.
    pub changes: Vec<Change>,
}

/// A storage backend. Unknown sessions read as empty. `list_*` results are unordered.
///
/// The indexed reads (`path_locate`, `path_select`, `list_page`) have defaults over the plain
/// reads — a walk of the parent chain, a sort of every meta — so a store that speaks only the
/// seed's protocol (a bridge to a seed main) serves them; stores that keep indexes answer them in
/// O(page + log n) (issue 12). Both must give the same answers.
pub trait Store {
    fn get_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, StoreError>;
    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError>;
    fn get_entry(
        &self,
        session_id: &str,
        entry_id: &str,
    ) -> Result<Option<SessionEntry>, StoreError>;
    fn list_entries(&self, session_id: &str) -> Result<Vec<SessionEntry>, StoreError>;
    fn get_active_leaf(&self, session_id: &str) -> Result<Option<String>, StoreError>;
    fn get_attachment(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError>;
    /// Metadata only; backends override it to avoid reading the bytes.
    fn get_attachment_meta(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> Result<Option<AttachmentMeta>, StoreError> {
        Ok(self.get_attachment(session_id, attachment_id)?.map(|(meta, _)| meta))
    }
    fn list_attachments(&self, session_id: &str) -> Result<Vec<AttachmentMeta>, StoreError>;
    /// Applies every write of `changes` atomically: after a crash either all of them are visible
    /// or none is.
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError>;
    /// At most `limit` changes of the session's feed after `after_seq`. Stores that keep no feed
    /// (a bridge to a seed main) say so.
    fn changes(
        &self,
        session_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<FeedPage, StoreError> {
        let _ = (session_id, after_seq, limit);
        Err(StoreError::Unsupported("this store keeps no change feed".into()))
    }
    /// After `session::erase` deleted `session_ids` (none when a rerun found nothing left):
    /// removes what the store still holds of them outside their own rows or files — the fs
    /// store's journal and catalog, postgres's outbox metadata. Nothing by default.
    fn erase_traces(&self, session_ids: &[String]) -> Result<(), StoreError> {
        let _ = session_ids;
        Ok(())
    }
    /// The length of the path root → `leaf` and where `entry_id` is on it. A broken chain is an
    /// error, as when walking it.
    fn path_locate(
        &self,
        session_id: &str,
        leaf: &str,
        entry_id: Option<&str>,
    ) -> Result<PathSpot, StoreError> {
        crate::path::walked_locate(session_id, leaf, entry_id, |id| self.get_entry(session_id, id))
    }
    /// A window of the path root → `leaf` ([`PathSelect`]).
    fn path_select(
        &self,
        session_id: &str,
        leaf: &str,
        query: &PathSelect,
    ) -> Result<Vec<(usize, SessionEntry)>, StoreError> {
        crate::path::walked_select(session_id, leaf, query, |id| self.get_entry(session_id, id))
    }
    /// Runs one mutation of `session_id` as one transaction: loads the session under this
    /// backend's own lock, hands `decide` a view of it ([`SessionView`]) and applies the change
    /// set it returns in the same transaction; `None` when it decided to write nothing. The
    /// change set may name another session (a fork writes a new one): it is applied as
    /// [`Store::apply`] would, after this transaction. The default decides over this store's
    /// own reads ([`StoreView`]) and is right only where the caller holds the session's lock (the
    /// worker's per-session lock over the fs store's fast paths, a bridge whose main applies
    /// atomically); backends that other threads or processes write to override it. A backend
    /// may call `decide` more than once (an optimistic one decides over the state it has, and
    /// decides again under its lock when its apply finds that state moved); only the change set
    /// of the last call is applied, so a decision has no effect but its answer.
    fn transact(
        &self,
        session_id: &str,
        decide: Decide<'_>,
    ) -> Result<Option<Applied>, SessionError> {
        let changes = decide(&StoreView { store: self, session_id })?;
        match changes {
            Some(changes) => Ok(Some(self.apply(&changes)?)),
            None => Ok(None),
        }
    }
    /// The session's lifecycle (trash, expiry); empty for an unknown session.
    fn lifecycle(&self, session_id: &str) -> Result<crate::lifecycle::Lifecycle, StoreError> {
        let _ = session_id;
        Err(StoreError::Unsupported("this store keeps no lifecycle (trash, expiry)".into()))
    }
    /// Every session whose lifecycle is not empty (trashed, or with an expiry), unordered.
    fn list_lifecycles(&self) -> Result<Vec<(String, crate::lifecycle::Lifecycle)>, StoreError> {
        Err(StoreError::Unsupported("this store keeps no lifecycle (trash, expiry)".into()))
    }
    /// The usage tallies of the branch root → `leaf` (empty without one) and of the whole
    /// session (issue 38). The default sums the branch and the session from scratch; stores
    /// that hold a [`crate::record::SessionState`] answer from its kept totals.
    fn usage(
        &self,
        session_id: &str,
        leaf: Option<&str>,
    ) -> Result<(crate::usage::Tally, crate::usage::Tally), StoreError> {
        summed_usage(self, session_id, leaf)
    }
    /// The session's meta as `list_metas` gives it (`None`: not listed); backends that keep a
    /// listing answer it from there without reading the session (search's hits).
    fn listed_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.get_meta(session_id)
    }
    /// The backend's full-text index, if it keeps one (`session::search` scans without).
    #[cfg(feature = "durable")]
    fn search_index(&self) -> Option<&dyn crate::search::index::SearchIndex> {
        None
    }
    /// One ordered, filtered page of metas ([`ListQuery`]).
    fn list_page(&self, query: &ListQuery<'_>) -> Result<Vec<SessionMeta>, StoreError> {
        Ok(crate::meta_order::sorted_page(self.list_metas()?, query))
    }
}

/// One session as a mutation sees it while it decides, inside its backend's transaction
/// ([`Store::transact`]): the decision gets this, never a store, so it cannot apply anything,
/// read another session or read outside the transaction — no decision is taken on state another
/// writer can change before the apply.
pub trait SessionView {
    /// The session the transaction holds.
    fn session_id(&self) -> &str;
    fn meta(&self) -> Result<Option<SessionMeta>, StoreError>;
    fn entry(&self, entry_id: &str) -> Result<Option<SessionEntry>, StoreError>;
    fn entries(&self) -> Result<Vec<SessionEntry>, StoreError>;
    fn active_leaf(&self) -> Result<Option<String>, StoreError>;
    fn attachment(
        &self,
        attachment_id: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError>;
    fn attachment_meta(&self, attachment_id: &str) -> Result<Option<AttachmentMeta>, StoreError>;
    /// The session's lifecycle (trash, expiry).
    fn lifecycle(&self) -> Result<crate::lifecycle::Lifecycle, StoreError>;
    /// The path root → `leaf`, oldest first; a broken chain is a storage error. By default
    /// walked one [`SessionView::entry`] at a time.
    fn path_to(&self, leaf: &str) -> Result<Vec<SessionEntry>, StoreError> {
        crate::path::walk(self.session_id(), leaf, |id| self.entry(id))
    }
}

/// What a mutation decided inside a transaction: the change set to apply in it, if any.
pub type Decision = Result<Option<ChangeSet>, SessionError>;

/// The decision a backend runs inside its transaction ([`Store::transact`]); it may run more
/// than once, each time on the view it is given.
pub type Decide<'a> = &'a mut dyn FnMut(&dyn SessionView) -> Decision;

/// The change set a backend's transaction on `session_id` applies: the decision's, when it is
/// that session's own. Otherwise the transaction ends without writing and [`NotHere::finish`]
/// answers after it.
pub fn own_change_set(session_id: &str, decision: Decision) -> Result<ChangeSet, NotHere> {
    match decision {
        Ok(Some(changes)) if changes.session_id == session_id => Ok(changes),
        other => Err(NotHere(other)),
    }
}

/// A decision that writes nothing in its session's transaction ([`own_change_set`]).
#[derive(Debug)]
pub struct NotHere(Decision);

impl NotHere {
    /// What the transaction answers once it has ended: nothing, the decision's refusal, or a
    /// fork's copy (a change set for a session nobody else can name yet) applied by `store` as a
    /// write of its own.
    pub fn finish(
        self,
        store: &dyn Store,
    ) -> Result<Result<Option<Applied>, SessionError>, StoreError> {
        match self.0 {
            Ok(Some(elsewhere)) => Ok(Ok(Some(store.apply(&elsewhere)?))),
            Ok(None) => Ok(Ok(None)),
            Err(refused) => Ok(Err(refused)),
        }
    }
}

/// The whole path root → `leaf` as one [`PathSelect`] window.
pub const WHOLE_PATH: PathSelect =
    PathSelect { classes: EntryClasses::ALL, from: 0, backward: false, limit: usize::MAX };

/// A store's reads of one session as a [`SessionView`] (the default [`Store::transact`]).
#[derive(Debug)]
pub struct StoreView<'a, S: Store + ?Sized> {
    pub store: &'a S,
    pub session_id: &'a str,
}

impl<S: Store + ?Sized> SessionView for StoreView<'_, S> {
    fn session_id(&self) -> &str {
        self.session_id
    }
    fn meta(&self) -> Result<Option<SessionMeta>, StoreError> {
        self.store.get_meta(self.session_id)
    }
    fn entry(&self, entry_id: &str) -> Result<Option<SessionEntry>, StoreError> {
        self.store.get_entry(self.session_id, entry_id)
    }
    fn entries(&self) -> Result<Vec<SessionEntry>, StoreError> {
        self.store.list_entries(self.session_id)
    }
    fn active_leaf(&self) -> Result<Option<String>, StoreError> {
        self.store.get_active_leaf(self.session_id)
    }
    fn attachment(&self, id: &str) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        self.store.get_attachment(self.session_id, id)
    }
    fn attachment_meta(&self, id: &str) -> Result<Option<AttachmentMeta>, StoreError> {
        self.store.get_attachment_meta(self.session_id, id)
    }
    fn lifecycle(&self) -> Result<crate::lifecycle::Lifecycle, StoreError> {
        self.store.lifecycle(self.session_id)
    }
    fn path_to(&self, leaf: &str) -> Result<Vec<SessionEntry>, StoreError> {
        let path = self.store.path_select(self.session_id, leaf, &WHOLE_PATH)?;
        Ok(path.into_iter().map(|(_, entry)| entry).collect())
    }
}

/// How a change set alters a session's log.
#[derive(Debug, Clone, PartialEq)]
pub enum LogChange {
    /// Nothing to write to the log (attachment-only or no-op commit).
    None,
    /// Append these records, in order.
    Append(Vec<Record>),
    /// Rewrite the log from the new state's snapshot (deletions); remove it if the state is empty.
    Rewrite,
}

/// The session-log part of applying a change set: the new state, the log change and what the
/// store reports back (the commit outcome and the recorded feed changes; attachment results are
/// left to the backend, as are attachment writes). Pure: `state` is not modified.
pub fn plan_session_writes(
    state: &SessionState,
    writes: &[Write],
) -> Result<(SessionState, LogChange, Applied), StoreError> {
    let mut next = state.clone();
    let (log, applied) = plan_session_writes_in_place(&mut next, writes)?;
    Ok((next, log, applied))
}

/// [`plan_session_writes`] without the copy: turns `state` into the new state and returns the log
/// change and what the store reports back. On `Err`, `state` may be partly changed and must be discarded
/// (a backend whose cache is only a copy of its disk reloads it). For large sessions this avoids
/// cloning every entry on every write.
pub fn plan_session_writes_in_place(
    next: &mut SessionState,
    writes: &[Write],
) -> Result<(LogChange, Applied), StoreError> {
    let mut records = Vec::new();
    let mut rewrite = false;
    let mut commit: Option<CommitOutcome> = None;
    let mut changes = Vec::new();
    // Whether this change set applied an `AppendDelta` (what `AppliedDelta` records).
    let mut delta_in_set = false;
    for write in writes {
        if let Write::Feed { timestamp, retention, epoch, changes: pending } = write {
            if let Some(epoch) = epoch {
                next.feed.start_epoch(epoch.clone());
            }
            for pending in pending {
                // A payload the record before it holds (the `append` of an append's change, the
                // `delta` of a delta's) is rebuilt from that record on replay.
                let (change_type, payload, derived) = match pending {
                    PendingChange::Known { change_type, payload } => {
                        (change_type.clone(), payload.clone(), false)
                    }
                    PendingChange::AppliedDelta => {
                        let change_type = crate::feed::MESSAGE_DELTA;
                        let payload = delta_in_set.then(|| next.derived_payload(change_type));
                        let Some(Some(payload)) = payload else {
                            return Err(StoreError::rejected(
                                "feed: a delta's change without its append_delta write",
                            ));
                        };
                        (change_type.into(), payload, true)
                    }
                    PendingChange::CommittedAppend => match &commit {
                        Some(c) if c.committed => {
                            let sid = c.meta.session_id.as_str();
                            let event =
                                crate::events::message_added(sid, &c.entry, c.entry.timestamp());
                            (event.trigger_type().into(), event.payload(), true)
                        }
                        _ => continue,
                    },
                };
                let seq = next.feed.latest_seq() + 1;
                let epoch = next.feed.epoch().map(String::from);
                let change = Change { seq, change_type, payload, timestamp: *timestamp, epoch };
                let logged = LoggedChange {
                    seq,
                    change_type: change.change_type.clone(),
                    payload: (!derived).then(|| change.payload.clone()),
                    timestamp: change.timestamp,
                    // The epoch's first change names it; the ones after it are of the same.
                    epoch: if seq == 1 { change.epoch.clone() } else { None },
                    current_of: None,
                };
                // What applying the record does (its payload rebuilt when derived), without
                // building the payload a second time.
                next.feed.record(change.clone());
                records.push(Record::Change { change: logged });
                changes.push(change);
            }
            next.feed.trim(*retention);
            continue;
        }
        let record = match write {
            Write::PutMeta(meta) => Some(Record::Meta { meta: meta.clone() }),
            Write::PutEntry(entry) => Some(Record::Entry { entry: entry.clone() }),
            Write::SetActiveLeaf(id) => Some(Record::Leaf { entry_id: Some(id.clone()) }),
            Write::CommitAppend { entry, parent_explicit } => {
                let (record, outcome) = next.decide_commit(entry.clone(), *parent_explicit)?;
                commit = Some(outcome);
                record
            }
            Write::DeleteEntries => {
                next.clear_entries();
                rewrite = true;
                None
            }
            Write::DeleteActiveLeaf => {
                // As a `leaf` record of no entry: the pending legacy append goes with the leaf
                // (with none it marks nothing, and the rewritten snapshot has no `leaf` line).
                next.apply(&Record::Leaf { entry_id: None });
                rewrite = true;
                None
            }
            Write::DeleteMeta => {
                next.meta = None;
                next.lifecycle = crate::lifecycle::Lifecycle::default();
                rewrite = true;
                None
            }
            Write::Trash { at } => Some(Record::Trash { at: *at }),
            Write::Restore => Some(Record::Restore),
            Write::SetExpiry(expires_at) => Some(Record::Expiry { expires_at: *expires_at }),
            Write::AppendDelta { delta, at } => {
                next.apply_delta(delta, *at)?;
                delta_in_set = true;
                records.push(Record::Delta { delta: delta.clone(), at: *at });
                None
            }
            Write::Feed { .. } => None,
            Write::PutAttachment { .. } | Write::DeleteAttachment(_) | Write::DeleteAttachments => {
                None
            }
        };
        if let Some(record) = record {
            next.apply(&record);
            records.push(record);
        }
    }
    if !next.holds_session() {
        // A deleted session leaves nothing behind, its feed included: its `session::deleted` was
        // the epoch's last change (reported in `changes`), and a re-created id starts a new one.
        next.feed = crate::feed::Feed::default();
    }
    let log = if rewrite {
        LogChange::Rewrite
    } else if records.is_empty() {
        LogChange::None
    } else {
        LogChange::Append(records)
    };
    Ok((log, Applied { commit, attachments_deleted: Vec::new(), changes }))
}

/// The tallies of the branch root → `leaf` and of the whole session, summed from `store`'s
/// reads of them (O(session)): the answer of a store that keeps no totals.
pub fn summed_usage<S: Store + ?Sized>(
    store: &S,
    session_id: &str,
    leaf: Option<&str>,
) -> Result<(crate::usage::Tally, crate::usage::Tally), StoreError> {
    let path = match leaf {
        Some(leaf) => store.path_select(session_id, leaf, &WHOLE_PATH)?,
        None => Vec::new(),
    };
    let entries = store.list_entries(session_id)?;
    Ok(crate::usage::summed(path.iter().map(|(_, e)| e), entries.iter()))
}
