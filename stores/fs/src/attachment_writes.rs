//! The attachment files of one change set, ordered around its commit point (the log's append or
//! rewrite, `apply.rs`): puts and a session delete's trash before it (a crash leaves only
//! unreachable files, or a trash that `AttachmentFiles::recover` moves back while the log exists),
//! single deletes after it.

use std::path::PathBuf;

use session_core::store::LogChange;
use session_core::{Applied, StoreError, Write};

use crate::attachments::{remove_dir_if_exists, AttachmentFiles};
use crate::vfs::FsIo;

/// What one change set does to its session's attachment files.
#[derive(Debug)]
pub(crate) struct AttachmentWrites<'a> {
    writes: &'a [Write],
    /// It deletes one or all: every put then waits for the commit point too, in order.
    deletes: bool,
    /// A session delete: the folder goes to the trash before the commit point.
    trashing: bool,
    puts: bool,
    /// Files and directories are synced (`fsync` is not `never`).
    durable: bool,
}

/// What [`AttachmentWrites::before_commit`] leaves for after it.
#[derive(Debug, Default)]
pub(crate) struct BeforeCommit {
    /// The trashed folder of a session delete.
    pub trashed: Option<PathBuf>,
    /// The deletes' answers, taken before a trash empties the folder.
    answers: Vec<bool>,
}

impl<'a> AttachmentWrites<'a> {
    /// `next_is_empty`: the session holds nothing once the change set applied (a delete).
    pub(crate) fn of(
        writes: &'a [Write],
        log: &LogChange,
        next_is_empty: bool,
        durable: bool,
    ) -> Self {
        let deletes = writes
            .iter()
            .any(|w| matches!(w, Write::DeleteAttachment(_) | Write::DeleteAttachments));
        let delete_all = writes.iter().any(|w| matches!(w, Write::DeleteAttachments));
        let trashing = delete_all && next_is_empty && *log == LogChange::Rewrite;
        let puts = writes.iter().any(|w| matches!(w, Write::PutAttachment { .. }));
        AttachmentWrites { writes, deletes, trashing, puts, durable }
    }

    /// Before the commit point: the trash of a session delete (its deletes' answers first), and
    /// the puts when nothing is deleted.
    pub(crate) fn before_commit(
        &self,
        files: &AttachmentFiles,
        sid: &str,
    ) -> Result<BeforeCommit, StoreError> {
        if self.trashing {
            let answers = files.delete_answers(sid, self.writes)?;
            let trashed = files.trash(sid, self.durable)?;
            return Ok(BeforeCommit { trashed, answers });
        }
        if !self.deletes {
            for write in self.writes {
                if let Write::PutAttachment { meta, bytes } = write {
                    files.put(meta, bytes, self.durable)?;
                }
            }
        }
        Ok(BeforeCommit::default())
    }

    /// After the commit point: the trash removed (the session is gone; a trash left behind is
    /// removed on the next open), then the deletes and the puts of a change set that has some,
    /// in order, each delete's answer into `applied`.
    pub(crate) fn after_commit(
        &self,
        files: &AttachmentFiles,
        io: &dyn FsIo,
        sid: &str,
        before: BeforeCommit,
        applied: &mut Applied,
    ) -> Result<(), StoreError> {
        if let Some(trash) = before.trashed {
            if let Err(e) = remove_dir_if_exists(io, &trash) {
                eprintln!("session-manager: fs store: trash of {sid:?} left for open: {e}");
            }
        }
        if !self.deletes {
            return Ok(());
        }
        let mut answers = before.answers.into_iter();
        for write in self.writes {
            match write {
                Write::PutAttachment { meta, bytes } => files.put(meta, bytes, self.durable)?,
                Write::DeleteAttachment(aid) => {
                    let existed = files.delete(sid, aid)?;
                    applied.attachments_deleted.push(answers.next().unwrap_or(existed));
                }
                // After a trash the folder is gone, unless a put of this change set made it again.
                Write::DeleteAttachments if !self.trashing || self.puts => files.delete_all(sid)?,
                _ => {}
            }
        }
        Ok(())
    }
}
