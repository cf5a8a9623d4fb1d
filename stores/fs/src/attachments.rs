//! Attachment files of the fs store (contract §5.5): `attachments/<dir(sid)>/<enc(aid)>.bin` and
//! `.json`, each written via `<path>.tmp` + rename, plus the trash that makes a session delete
//! all-or-nothing across the log and the attachment folder.
//!
//! Deleting a session renames its folder into `attachments/%trash/` *before* the log file is
//! removed (the commit point) and removes the trash after. On open, a trashed folder whose session
//! log still exists is an interrupted delete and is moved back; otherwise it is removed.
//! `%trash` is not a name `enc` can produce (`%t` is no hex escape), so it never shadows a session.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_core::jsonl::{attachment_dir_name, attachment_dir_session, enc};
use session_core::wire::AttachmentMeta;
use session_core::{StoreError, Write};

use super::io::{io_err, remove_file_if_exists, sync_dir, write_atomic};
use super::vfs::FsIo;

const TRASH: &str = "%trash";

#[derive(Debug)]
pub(crate) struct AttachmentFiles {
    root: PathBuf,
    io: Arc<dyn FsIo>,
}

impl AttachmentFiles {
    pub(crate) fn new(data_dir: &Path, io: Arc<dyn FsIo>) -> Self {
        AttachmentFiles { root: data_dir.join("attachments"), io }
    }

    fn dir(&self, sid: &str) -> PathBuf {
        self.root.join(attachment_dir_name(sid))
    }

    /// The session's attachment folder (where a trashed folder goes back to).
    pub(crate) fn home(&self, sid: &str) -> PathBuf {
        self.dir(sid)
    }

    fn paths(&self, sid: &str, aid: &str) -> (PathBuf, PathBuf) {
        let dir = self.dir(sid);
        let stem = enc(aid);
        (dir.join(format!("{stem}.bin")), dir.join(format!("{stem}.json")))
    }

    pub(crate) fn put(
        &self,
        meta: &AttachmentMeta,
        bytes: &[u8],
        sync: bool,
    ) -> Result<(), StoreError> {
        let dir = self.dir(&meta.session_id);
        self.io.create_dir_all(&dir).map_err(|e| io_err("create", &dir, &e))?;
        let (bin, json) = self.paths(&meta.session_id, &meta.attachment_id);
        let meta_bytes = serde_json::to_vec(meta)
            .map_err(|e| StoreError::Corrupt(format!("fs store: encode attachment meta: {e}")))?;
        let io = &*self.io;
        let fresh = !json.exists();
        let written = (|| {
            write_atomic(io, &bin, &tmp_of(&bin), bytes, sync)?;
            write_atomic(io, &json, &tmp_of(&json), &meta_bytes, sync)?;
            if sync {
                sync_dir(io, &dir)?;
                sync_dir(io, &self.root)?;
            }
            Ok(())
        })();
        if written.is_err() && fresh {
            // Nobody was told about this id: a failed put must not leave it listed.
            let _ = io.remove_file(&json);
            let _ = io.remove_file(&bin);
        }
        written
    }

    pub(crate) fn get_meta(
        &self,
        sid: &str,
        aid: &str,
    ) -> Result<Option<AttachmentMeta>, StoreError> {
        let (_, json) = self.paths(sid, aid);
        match fs::read(&json) {
            Ok(bytes) => parse_meta(&json, &bytes).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err("read", &json, &e)),
        }
    }

    pub(crate) fn get(
        &self,
        sid: &str,
        aid: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        let Some(meta) = self.get_meta(sid, aid)? else { return Ok(None) };
        let (bin, _) = self.paths(sid, aid);
        let bytes = fs::read(&bin).map_err(|e| io_err("read", &bin, &e))?;
        Ok(Some((meta, bytes)))
    }

    pub(crate) fn list(&self, sid: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
        let dir = self.dir(sid);
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err("list", &dir, &e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let path = entry.map_err(|e| io_err("list", &dir, &e))?.path();
            // Not `extension()`: the attachment id "" is stored as `.json`, which has none.
            if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".json")) {
                let bytes = fs::read(&path).map_err(|e| io_err("read", &path, &e))?;
                out.push(parse_meta(&path, &bytes)?);
            }
        }
        Ok(out)
    }

    /// What each `DeleteAttachment` of `writes` answers (whether its attachment existed), in the
    /// change set's order, from the folder as it is before any of them runs: for a session
    /// delete, whose trash empties the folder before the deletes run.
    pub(crate) fn delete_answers(
        &self,
        sid: &str,
        writes: &[Write],
    ) -> Result<Vec<bool>, StoreError> {
        // Known by an earlier write of the change set: `Some(present)`; else the folder decides
        // (nothing after a `DeleteAttachments`).
        let mut known: HashMap<&str, bool> = HashMap::new();
        let mut cleared = false;
        let mut answers = Vec::new();
        for write in writes {
            match write {
                Write::PutAttachment { meta, .. } => {
                    known.insert(&meta.attachment_id, true);
                }
                Write::DeleteAttachment(aid) => {
                    let present = match known.insert(aid, false) {
                        Some(present) => present,
                        None => !cleared && self.exists(sid, aid)?,
                    };
                    answers.push(present);
                }
                Write::DeleteAttachments => {
                    known.clear();
                    cleared = true;
                }
                _ => {}
            }
        }
        Ok(answers)
    }

    /// Whether the attachment exists (its `.json`, as [`Self::delete`] decides).
    fn exists(&self, sid: &str, aid: &str) -> Result<bool, StoreError> {
        let (_, json) = self.paths(sid, aid);
        match fs::symlink_metadata(&json) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io_err("read", &json, &e)),
        }
    }

    /// Removes one attachment (`.json` first, then `.bin`); whether the `.json` existed.
    pub(crate) fn delete(&self, sid: &str, aid: &str) -> Result<bool, StoreError> {
        let (bin, json) = self.paths(sid, aid);
        let existed = remove_file_if_exists(&*self.io, &json)?;
        // Without its `.json` the attachment is gone; a `.bin` left behind is only garbage.
        if let Err(e) = remove_file_if_exists(&*self.io, &bin) {
            eprintln!("session-manager: fs store: attachment bytes left behind: {e}");
        }
        Ok(existed)
    }

    pub(crate) fn delete_all(&self, sid: &str) -> Result<(), StoreError> {
        remove_dir_if_exists(&*self.io, &self.dir(sid))
    }

    /// Moves the session's folder into the trash; `None` when it has none.
    pub(crate) fn trash(&self, sid: &str, sync: bool) -> Result<Option<PathBuf>, StoreError> {
        let dir = self.dir(sid);
        if !dir.exists() {
            return Ok(None);
        }
        let trash_root = self.root.join(TRASH);
        let io = &*self.io;
        io.create_dir_all(&trash_root).map_err(|e| io_err("create", &trash_root, &e))?;
        let target = trash_root.join(attachment_dir_name(sid));
        remove_dir_if_exists(io, &target)?;
        io.rename(&dir, &target).map_err(|e| io_err("rename", &dir, &e))?;
        if sync {
            let synced = sync_dir(io, &self.root).and_then(|()| sync_dir(io, &trash_root));
            if let Err(e) = synced {
                // The delete fails: its attachments must not stay hidden in the trash.
                let _ = io.rename(&target, &dir);
                return Err(e);
            }
        }
        Ok(Some(target))
    }

    /// Finishes or rolls back deletes a crash interrupted (see the module doc).
    pub(crate) fn recover(&self, data_dir: &Path) -> Result<(), StoreError> {
        let trash_root = self.root.join(TRASH);
        let entries = match fs::read_dir(&trash_root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_err("list", &trash_root, &e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| io_err("list", &trash_root, &e))?;
            let name = entry.file_name();
            let trashed = entry.path();
            let session_exists = name
                .to_str()
                .and_then(attachment_dir_session)
                .is_some_and(|sid| super::session::session_on_disk(data_dir, &sid));
            let home = self.root.join(&name);
            if session_exists && !home.exists() {
                self.io.rename(&trashed, &home).map_err(|e| io_err("restore", &trashed, &e))?;
            } else {
                remove_dir_if_exists(&*self.io, &trashed)?;
            }
        }
        Ok(())
    }
}

pub(crate) fn remove_dir_if_exists(io: &dyn FsIo, dir: &Path) -> Result<(), StoreError> {
    match io.remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err("remove", dir, &e)),
    }
}

fn tmp_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

fn parse_meta(path: &Path, bytes: &[u8]) -> Result<AttachmentMeta, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| {
        StoreError::Corrupt(format!("fs store: malformed attachment meta {}: {e}", path.display()))
    })
}
