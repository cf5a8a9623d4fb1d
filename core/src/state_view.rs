//! A replayed session held under its backend's lock as a [`SessionView`]: what the in-memory and
//! postgres stores hand a mutation's decision inside their transaction ([`Store::transact`]).
//!
//! [`Store::transact`]: crate::store::Store::transact

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::StoreError;
use crate::record::SessionState;
use crate::store::{SessionView, WHOLE_PATH};
use crate::wire::{AttachmentMeta, SessionEntry, SessionMeta};

/// A replayed session held under its backend's lock, as a [`SessionView`]; its attachments come
/// from `attachments` (a backend keeps them apart from the log).
pub struct StateView<'a> {
    pub session_id: &'a str,
    pub state: &'a SessionState,
    /// The attachment `id` of the session, with its bytes when asked for (`true`).
    pub attachments: &'a dyn Fn(&str, bool) -> Result<FoundAttachment, StoreError>,
}

/// An attachment a [`StateView`]'s backend found: its meta, and its bytes when they were asked for.
pub type FoundAttachment = Option<(AttachmentMeta, Option<Vec<u8>>)>;

impl core::fmt::Debug for StateView<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StateView").field("session_id", &self.session_id).finish_non_exhaustive()
    }
}

impl SessionView for StateView<'_> {
    fn session_id(&self) -> &str {
        self.session_id
    }
    fn meta(&self) -> Result<Option<SessionMeta>, StoreError> {
        Ok(self.state.meta.clone())
    }
    fn entry(&self, entry_id: &str) -> Result<Option<SessionEntry>, StoreError> {
        Ok(self.state.entries.get(entry_id).cloned())
    }
    fn entries(&self) -> Result<Vec<SessionEntry>, StoreError> {
        Ok(self.state.entries.values().cloned().collect())
    }
    fn active_leaf(&self) -> Result<Option<String>, StoreError> {
        Ok(self.state.leaf.clone())
    }
    fn attachment(&self, id: &str) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        Ok((self.attachments)(id, true)?.map(|(meta, bytes)| (meta, bytes.unwrap_or_default())))
    }
    fn attachment_meta(&self, id: &str) -> Result<Option<AttachmentMeta>, StoreError> {
        Ok((self.attachments)(id, false)?.map(|(meta, _)| meta))
    }
    fn lifecycle(&self) -> Result<crate::lifecycle::Lifecycle, StoreError> {
        Ok(self.state.lifecycle.clone())
    }
    fn path_to(&self, leaf: &str) -> Result<Vec<SessionEntry>, StoreError> {
        let path = self.state.path_select(self.session_id, leaf, &WHOLE_PATH)?;
        Ok(path.into_iter().map(|(_, entry)| entry).collect())
    }
}
