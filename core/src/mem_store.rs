//! `MemStore`: the in-memory `Store`, the reference model every other backend is checked against.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::StoreError;
use crate::lifecycle::Lifecycle;
use crate::meta_order::{ListQuery, MetaOrder};
use crate::path::{PathSelect, PathSpot};
use crate::record::SessionState;
use crate::store::{plan_session_writes, Applied, ChangeSet, Store, Write};
use crate::wire::FeedPage;
use crate::wire::{AttachmentMeta, SessionEntry, SessionMeta};

#[derive(Debug, Default, Clone)]
struct Inner {
    sessions: BTreeMap<String, SessionState>,
    attachments: BTreeMap<String, Attachments>,
    /// The metas of `sessions` in list order.
    order: MetaOrder,
}

impl Inner {
    /// Stores one session's state (an empty one removes it), keeping the list order current.
    fn put_state(&mut self, session_id: &str, state: SessionState) {
        let old = self.sessions.get(session_id).and_then(|s| s.meta.as_ref());
        self.order.update(session_id, old, state.meta.as_ref());
        if state.is_empty() {
            self.sessions.remove(session_id);
        } else {
            self.sessions.insert(session_id.into(), state);
        }
    }

    /// Applies one change set (the store's lock held).
    fn apply(&mut self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        let sid = &changes.session_id;
        let current = self.sessions.get(sid).cloned().unwrap_or_default();
        let (next, _log, mut applied) = plan_session_writes(&current, &changes.writes)?;
        let mut attachments = self.attachments.get(sid).cloned().unwrap_or_default();
        for write in &changes.writes {
            match write {
                Write::PutAttachment { meta, bytes } => {
                    let attachment = (meta.clone(), bytes.clone());
                    match find(&attachments, &meta.attachment_id) {
                        Ok(at) => attachments[at] = attachment,
                        Err(at) => attachments.insert(at, attachment),
                    }
                }
                Write::DeleteAttachment(id) => {
                    let found = find(&attachments, id).map(|at| attachments.remove(at));
                    applied.attachments_deleted.push(found.is_ok());
                }
                Write::DeleteAttachments => attachments.clear(),
                _ => {}
            }
        }
        self.put_state(sid, next);
        if attachments.is_empty() {
            self.attachments.remove(sid);
        } else {
            self.attachments.insert(sid.clone(), attachments);
        }
        Ok(applied)
    }

    fn state(&self, session_id: &str) -> Option<&SessionState> {
        self.sessions.get(session_id)
    }
}

/// One session's attachments, sorted by id: a list rather than a map of their own (one map type
/// fewer in the wasm bundle).
type Attachments = Vec<(AttachmentMeta, Vec<u8>)>;

/// Where attachment `id` is in `attachments` (`Err`: where it would go).
fn find(attachments: &Attachments, id: &str) -> Result<usize, usize> {
    attachments.binary_search_by(|(meta, _)| meta.attachment_id.as_str().cmp(id))
}

#[cfg(feature = "std")]
type Cell<T> = std::sync::Mutex<T>;
#[cfg(not(feature = "std"))]
type Cell<T> = core::cell::RefCell<T>;

/// An in-memory store. Thread-safe with the `std` feature, single-threaded without.
#[derive(Debug, Default)]
pub struct MemStore {
    inner: Cell<Inner>,
}

impl MemStore {
    pub fn new() -> Self {
        MemStore::default()
    }

    fn read<R>(&self, f: impl FnOnce(&Inner) -> R) -> R {
        #[cfg(feature = "std")]
        let guard = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        #[cfg(not(feature = "std"))]
        let guard = self.inner.borrow();
        f(&guard)
    }

    fn write<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        #[cfg(feature = "std")]
        let mut guard = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        #[cfg(not(feature = "std"))]
        let mut guard = self.inner.borrow_mut();
        f(&mut guard)
    }

    /// The stored state of one session (for model-based tests and exports).
    pub fn session_state(&self, session_id: &str) -> SessionState {
        self.read(|i| i.sessions.get(session_id).cloned().unwrap_or_default())
    }

    /// Replaces one session's state (an imported or replayed log); an empty state removes it.
    /// Attachments are left alone.
    pub fn import_state(&self, session_id: &str, state: SessionState) {
        self.write(|i| i.put_state(session_id, state))
    }

    /// Ids of every stored session (with or without meta), sorted.
    pub fn session_ids(&self) -> Vec<String> {
        self.read(|i| i.sessions.keys().cloned().collect())
    }

    /// Replays one exported `.jsonl` log with the fs store's rules ([`crate::transfer::import`]) and
    /// stores the result, replacing any session of the same id. `None` when neither the log's
    /// meta nor the file name yields a session id.
    pub fn load_jsonl(&self, file_name: &str, bytes: &[u8]) -> Option<crate::transfer::Imported> {
        let (imported, state) = crate::transfer::import(file_name, bytes)?;
        self.import_state(&imported.session_id, state);
        Some(imported)
    }

    /// One session as snapshot lines ([`crate::jsonl::encode_snapshot`]), the format the fs
    /// store writes on rewrite; `None` when the session is unknown.
    pub fn export_jsonl(&self, session_id: &str) -> Option<Vec<u8>> {
        self.read(|i| i.sessions.get(session_id).map(crate::jsonl::encode_snapshot))
    }
}

#[cfg(feature = "std")]
impl crate::Backend for MemStore {
    fn run(
        &self,
        _op: &crate::catalog::Operation,
        call: &mut crate::backend::Call<'_>,
    ) -> crate::backend::Ran {
        (call(self), None)
    }
}

impl Store for MemStore {
    fn get_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, StoreError> {
        Ok(self.read(|i| i.sessions.get(session_id).and_then(|s| s.meta.clone())))
    }

    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
        Ok(self.read(|i| i.sessions.values().filter_map(|s| s.meta.clone()).collect()))
    }

    fn lifecycle(&self, session_id: &str) -> Result<Lifecycle, StoreError> {
        Ok(self.read(|i| i.state(session_id).map(|s| s.lifecycle.clone()).unwrap_or_default()))
    }

    fn list_lifecycles(&self) -> Result<Vec<(String, Lifecycle)>, StoreError> {
        Ok(self.read(|i| {
            let with_one = i.sessions.iter().filter(|(_, s)| !s.lifecycle.is_empty());
            with_one.map(|(sid, s)| (sid.clone(), s.lifecycle.clone())).collect()
        }))
    }

    fn get_entry(
        &self,
        session_id: &str,
        entry_id: &str,
    ) -> Result<Option<SessionEntry>, StoreError> {
        Ok(self.read(|i| i.sessions.get(session_id).and_then(|s| s.entries.get(entry_id).cloned())))
    }

    fn list_entries(&self, session_id: &str) -> Result<Vec<SessionEntry>, StoreError> {
        Ok(self.read(|i| {
            i.sessions
                .get(session_id)
                .map(|s| s.entries.values().cloned().collect())
                .unwrap_or_default()
        }))
    }

    fn get_active_leaf(&self, session_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self.read(|i| i.sessions.get(session_id).and_then(|s| s.leaf.clone())))
    }

    fn get_attachment(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        Ok(self.read(|i| {
            let attachments = i.attachments.get(session_id)?;
            find(attachments, attachment_id).ok().map(|at| attachments[at].clone())
        }))
    }

    fn list_attachments(&self, session_id: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
        Ok(self.read(|i| {
            i.attachments
                .get(session_id)
                .map(|a| a.iter().map(|(m, _)| m.clone()).collect())
                .unwrap_or_default()
        }))
    }

    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        self.write(|inner| inner.apply(changes))
    }

    /// Decides and applies under the store's one lock: no other call reads or writes between.
    /// Where no second thread can exist (without `std`; wasm without threads: the browser build)
    /// the default serves, one call at a time by construction, and the bundle stays smaller.
    #[cfg(all(feature = "std", any(not(target_family = "wasm"), target_feature = "atomics")))]
    fn transact(
        &self,
        session_id: &str,
        decide: crate::store::Decide<'_>,
    ) -> Result<Option<Applied>, crate::error::SessionError> {
        self.write(|inner| {
            let changes = {
                let empty = SessionState::default();
                let attachment = |id: &str, bytes: bool| {
                    let found = inner.attachments.get(session_id).and_then(|all| {
                        find(all, id)
                            .ok()
                            .map(|at| (all[at].0.clone(), bytes.then(|| all[at].1.clone())))
                    });
                    Ok(found)
                };
                let state = inner.state(session_id).unwrap_or(&empty);
                decide(&crate::state_view::StateView {
                    session_id,
                    state,
                    attachments: &attachment,
                })?
            };
            match changes {
                Some(changes) => Ok(Some(inner.apply(&changes)?)),
                None => Ok(None),
            }
        })
    }

    fn changes(
        &self,
        session_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<FeedPage, StoreError> {
        Ok(self.read(|i| {
            i.sessions.get(session_id).map(|s| s.feed_page(after_seq, limit)).unwrap_or_default()
        }))
    }

    fn path_locate(
        &self,
        session_id: &str,
        leaf: &str,
        entry_id: Option<&str>,
    ) -> Result<PathSpot, StoreError> {
        self.read(|i| {
            let empty = SessionState::default();
            i.state(session_id).unwrap_or(&empty).path_locate(session_id, leaf, entry_id)
        })
    }

    fn path_select(
        &self,
        session_id: &str,
        leaf: &str,
        query: &PathSelect,
    ) -> Result<Vec<(usize, SessionEntry)>, StoreError> {
        self.read(|i| {
            let empty = SessionState::default();
            i.state(session_id).unwrap_or(&empty).path_select(session_id, leaf, query)
        })
    }

    fn usage(
        &self,
        session_id: &str,
        leaf: Option<&str>,
    ) -> Result<(crate::usage::Tally, crate::usage::Tally), StoreError> {
        self.read(|i| {
            let empty = SessionState::default();
            i.state(session_id).unwrap_or(&empty).usage(session_id, leaf)
        })
    }

    fn list_page(&self, query: &ListQuery<'_>) -> Result<Vec<SessionMeta>, StoreError> {
        Ok(self.read(|i| {
            i.order.page(query, |sid| i.state(sid)?.meta.as_ref().map(alloc::borrow::Cow::Borrowed))
        }))
    }
}
