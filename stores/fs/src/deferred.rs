//! [`Deferred`]: the fs store as a call's writes see it under the session lock with
//! `fsync: group` — every read as the store's, every write applied without waiting for its
//! flush; the flush tickets are kept for the caller to wait on after the lock is released
//! (`flush.rs`, [`Flushes`]).

use std::sync::Mutex;

use session_core::lifecycle::Lifecycle;
use session_core::meta_order::ListQuery;
use session_core::path::{PathSelect, PathSpot};
use session_core::usage::Tally;
use session_core::wire::{AttachmentMeta, FeedPage, SessionEntry, SessionMeta};
use session_core::{Applied, ChangeSet, Store, StoreError};

use super::flush::{Flushes, Ticket};
use super::FsStore;

/// A view of an [`FsStore`] whose writes leave their group flush to [`Deferred::into_flushes`].
#[derive(Debug)]
pub struct Deferred<'a> {
    fs: &'a FsStore,
    tickets: Mutex<Vec<Ticket>>,
}

impl FsStore {
    /// The deferred-flush view of this store ([`Deferred`]).
    pub fn deferred(&self) -> Deferred<'_> {
        Deferred { fs: self, tickets: Mutex::new(Vec::new()) }
    }
}

impl Deferred<'_> {
    /// The flushes of the writes made through this view: wait for them after the session lock
    /// is released.
    pub fn into_flushes(self) -> Flushes {
        let tickets = self.tickets.into_inner().unwrap_or_else(|p| p.into_inner());
        Flushes::new(tickets, std::sync::Arc::clone(&self.fs.config().io))
    }
}

impl Store for Deferred<'_> {
    fn get_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.fs.get_meta(session_id)
    }
    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.fs.list_metas()
    }
    fn lifecycle(&self, session_id: &str) -> Result<Lifecycle, StoreError> {
        self.fs.lifecycle(session_id)
    }
    fn list_lifecycles(&self) -> Result<Vec<(String, Lifecycle)>, StoreError> {
        self.fs.list_lifecycles()
    }
    fn get_entry(
        &self,
        session_id: &str,
        entry_id: &str,
    ) -> Result<Option<SessionEntry>, StoreError> {
        self.fs.get_entry(session_id, entry_id)
    }
    fn list_entries(&self, session_id: &str) -> Result<Vec<SessionEntry>, StoreError> {
        self.fs.list_entries(session_id)
    }
    fn get_active_leaf(&self, session_id: &str) -> Result<Option<String>, StoreError> {
        self.fs.get_active_leaf(session_id)
    }
    fn get_attachment(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        self.fs.get_attachment(session_id, attachment_id)
    }
    fn get_attachment_meta(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> Result<Option<AttachmentMeta>, StoreError> {
        self.fs.get_attachment_meta(session_id, attachment_id)
    }
    fn list_attachments(&self, session_id: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
        self.fs.list_attachments(session_id)
    }
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        let mut tickets = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
        self.fs.apply_deferred(changes, &mut tickets)
    }
    fn erase_traces(&self, session_ids: &[String]) -> Result<(), StoreError> {
        self.fs.erase_traces(session_ids)
    }
    fn changes(
        &self,
        session_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<FeedPage, StoreError> {
        self.fs.changes(session_id, after_seq, limit)
    }
    fn path_locate(
        &self,
        session_id: &str,
        leaf: &str,
        entry_id: Option<&str>,
    ) -> Result<PathSpot, StoreError> {
        self.fs.path_locate(session_id, leaf, entry_id)
    }
    fn path_select(
        &self,
        session_id: &str,
        leaf: &str,
        query: &PathSelect,
    ) -> Result<Vec<(usize, SessionEntry)>, StoreError> {
        self.fs.path_select(session_id, leaf, query)
    }
    fn usage(&self, session_id: &str, leaf: Option<&str>) -> Result<(Tally, Tally), StoreError> {
        self.fs.usage(session_id, leaf)
    }
    fn list_page(&self, query: &ListQuery<'_>) -> Result<Vec<SessionMeta>, StoreError> {
        self.fs.list_page(query)
    }
    fn listed_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.fs.listed_meta(session_id)
    }
    fn search_index(&self) -> Option<&dyn session_core::search::index::SearchIndex> {
        self.fs.search_index()
    }
}
