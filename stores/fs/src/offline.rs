//! Whole sessions of a data_dir read and written while no worker has it open (`session-manager
//! migrate`): a session is its replayed log and its attachments; writing one replaces both, the
//! attachments first and the log (written as its snapshot, fsynced, renamed into place) last, so
//! an interrupted write leaves a session that the next run of the same migration rewrites.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_core::jsonl::{self, attachment_dir_session, enc};
use session_core::record::SessionState;
use session_core::wire::AttachmentMeta;
use session_core::StoreError;

use super::attachments::AttachmentFiles;
use super::io::{io_err, remove_file_if_exists, sync_dir, write_atomic};
use super::vfs::RealIo;

/// A session's state and its attachments (metadata and bytes), in id order.
pub type WholeSession = (SessionState, Vec<(AttachmentMeta, Vec<u8>)>);

/// A data_dir, read and written a session at a time.
#[derive(Debug)]
pub struct Offline {
    dir: PathBuf,
    attachments: AttachmentFiles,
}

impl Offline {
    pub fn new(dir: &Path) -> Offline {
        Offline { dir: dir.into(), attachments: AttachmentFiles::new(dir, Arc::new(RealIo)) }
    }

    fn log_path(&self, sid: &str) -> PathBuf {
        self.dir.join(format!("{}.jsonl", enc(sid)))
    }

    /// Every session with a log or an attachment folder, sorted (names that do not decode are
    /// not sessions, as for the store's listing).
    pub fn session_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut ids = Vec::new();
        let listed = |dir: &Path| match std::fs::read_dir(dir) {
            Ok(read) => read.map(|e| e.map(|e| e.file_name())).collect::<Result<Vec<_>, _>>(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        };
        let names = listed(&self.dir).map_err(|e| io_err("list", &self.dir, &e))?;
        for name in names.iter().filter_map(|n| n.to_str()) {
            if let Some(id) = name.strip_suffix(".jsonl").and_then(jsonl::dec) {
                ids.push(id);
            }
        }
        let root = self.dir.join("attachments");
        for name in listed(&root).map_err(|e| io_err("list", &root, &e))? {
            if let Some(id) = name.to_str().and_then(attachment_dir_session) {
                ids.push(id);
            }
        }
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    /// Session `sid` as the store would replay it.
    pub fn read(&self, sid: &str) -> Result<WholeSession, StoreError> {
        let path = self.log_path(sid);
        let state = match std::fs::read(&path) {
            Ok(bytes) => jsonl::replay(&bytes).0,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => SessionState::default(),
            Err(e) => return Err(io_err("read", &path, &e)),
        };
        let mut attachments = Vec::new();
        let mut metas = self.attachments.list(sid)?;
        metas.sort_by(|a, b| a.attachment_id.cmp(&b.attachment_id));
        for meta in metas {
            if let Some(found) = self.attachments.get(sid, &meta.attachment_id)? {
                attachments.push(found);
            }
        }
        Ok((state, attachments))
    }

    /// Replaces session `sid` with `state` (as its snapshot) and `attachments`, durably.
    pub fn write(&self, sid: &str, whole: &WholeSession) -> Result<(), StoreError> {
        let (state, attachments) = whole;
        std::fs::create_dir_all(&self.dir).map_err(|e| io_err("create", &self.dir, &e))?;
        self.attachments.delete_all(sid)?;
        for (meta, bytes) in attachments {
            self.attachments.put(meta, bytes, true)?;
        }
        let path = self.log_path(sid);
        if state.is_empty() {
            remove_file_if_exists(&RealIo, &path)?;
        } else {
            let tmp = path.with_extension("jsonl.tmp");
            write_atomic(&RealIo, &path, &tmp, &jsonl::encode_snapshot(state), true)?;
        }
        sync_dir(&RealIo, &self.dir)
    }
}
