//! One change set written under its session's slot lock ([`FsStore::apply_locked`], which every
//! write passes through), step by step: the bodies the writes need read back, the plan, the
//! attachment files before the commit point (`attachment_writes.rs`), the commit itself — an
//! append to the log or its rewrite — and after it the listing catalog and the attachment
//! deletes; or, when the commit failed, the disk decides.

use session_core::store::{plan_session_writes_in_place, LogChange};
use session_core::{Applied, ChangeSet, StoreError, Write};

use crate::attachment_writes::AttachmentWrites;
use crate::flush::Flusher;
use crate::session::{self, Ctx, Loaded};
use crate::{attachments, not_loaded, FsStore, SyncMode};

impl FsStore {
    /// Plans and writes one change set under the slot lock; the count the write's group flush
    /// ticket waits for, when it appended with `fsync: group`. A failure empties the slot (the
    /// next touch replays the disk).
    pub(crate) fn apply_locked(
        &self,
        slot: &mut Option<Box<Loaded>>,
        flusher: &Flusher,
        changes: &ChangeSet,
    ) -> Result<(Applied, Option<u64>), StoreError> {
        let sid = changes.session_id.as_str();
        let ctx = self.ctx();
        let loaded = slot.as_mut().ok_or_else(not_loaded)?;
        if let Some(search) = &self.search {
            search.touch(changes); // before the log changes: see `search/pending.rs`
        }
        let sets_lifecycle = changes
            .writes
            .iter()
            .any(|w| matches!(w, Write::Trash { .. } | Write::Restore | Write::SetExpiry(_)));
        if sets_lifecycle {
            let durable = ctx.sync != SyncMode::Never;
            crate::lifecycle_ids::note(&*self.cfg.io, &self.cfg.data_dir, sid, durable)?;
        }
        let planned = read_bodies(loaded, &ctx, sid, &changes.writes)
            .and_then(|()| plan_session_writes_in_place(&mut loaded.state, &changes.writes));
        let (log, mut applied) = match planned {
            Ok(planned) => planned,
            Err(e) => {
                *slot = None; // partly planned: replay the disk on next touch
                return Err(e);
            }
        };
        loaded.spilled.forget_replaced(&changes.writes);
        let next_is_empty = !loaded.state.holds_session();
        let durable = ctx.sync != SyncMode::Never;
        let files = AttachmentWrites::of(&changes.writes, &log, next_is_empty, durable);
        let before = match files.before_commit(&self.attachments, sid) {
            Ok(before) => before,
            Err(e) => {
                *slot = None;
                return Err(e);
            }
        };
        let ticket = match commit(loaded, &ctx, sid, &log, flusher) {
            Ok(ticket) => ticket,
            Err(e) => {
                self.after_failed_commit(sid, flusher, before.trashed);
                *slot = None;
                return Err(e);
            }
        };
        if log != LogChange::None {
            self.catalog.on_write(sid, &loaded.state);
        }
        files.after_commit(&self.attachments, &*self.cfg.io, sid, before, &mut applied)?;
        Ok((applied, ticket))
    }

    /// The commit failed, but the write may have landed before a later step failed (e.g. the
    /// directory fsync after a rename): the disk decides. Its meta is read again and a trash is
    /// treated as `recover` does on open: back home while the log exists. (A failed flush of
    /// pending appends cuts the log back first.)
    fn after_failed_commit(
        &self,
        sid: &str,
        flusher: &Flusher,
        trashed: Option<std::path::PathBuf>,
    ) {
        flusher.clean_after_failure(&*self.cfg.io);
        self.catalog.refresh(&self.cfg.data_dir, sid);
        let Some(trash) = trashed else { return };
        if session::session_on_disk(&self.cfg.data_dir, sid) {
            let _ = self.cfg.io.rename(&trash, &self.attachments.home(sid));
        } else if let Err(e) = attachments::remove_dir_if_exists(&*self.cfg.io, &trash) {
            eprintln!("session-manager: fs store: trash of {sid:?} left for open: {e}");
        }
    }
}

/// A large session's entries are stubs in memory (`spill.rs`): the writes that use an existing
/// entry's content (an idempotent append's comparison, a delta's text) read its body back first.
fn read_bodies(
    loaded: &mut Loaded,
    ctx: &Ctx<'_>,
    sid: &str,
    writes: &[Write],
) -> Result<(), StoreError> {
    if !loaded.spilled.any() {
        return Ok(());
    }
    let path = ctx.log_path(sid);
    for write in writes {
        let id = match write {
            Write::CommitAppend { entry, .. } => entry.id(),
            Write::AppendDelta { delta, .. } => delta.entry_id.as_str(),
            _ => continue,
        };
        loaded.spilled.hydrate(&path, &mut loaded.state, id)?;
    }
    Ok(())
}

/// The commit point: the planned records appended to the log (the count a group flush waits
/// for), or the log rewritten from the state — after its pending appends are flushed, since a
/// rewrite replaces the file.
fn commit(
    loaded: &mut Loaded,
    ctx: &Ctx<'_>,
    sid: &str,
    log: &LogChange,
    flusher: &Flusher,
) -> Result<Option<u64>, StoreError> {
    match log {
        LogChange::None => Ok(None),
        LogChange::Append(records) => loaded.append(ctx, records, flusher),
        LogChange::Rewrite => {
            flusher.flush_pending(ctx.io, ctx.journal, &ctx.log_path(sid))?;
            loaded.rewrite(ctx, sid)?;
            flusher.moved(loaded.len);
            Ok(None)
        }
    }
}
