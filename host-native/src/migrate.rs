//! `session-manager migrate --from <data_dir | postgres url> --to <postgres url | data_dir>`:
//! every session (its replayed state, as a snapshot, and its attachments) copied from one store
//! to the other with a progress bar. Idempotent and resumable: a session the destination already
//! holds identically is skipped, any other is replaced whole. Ends by reading every copied
//! session back from the destination and comparing counts and a SHA-256 digest of them all.

use std::fmt;
use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};
use session_core::jsonl;
use session_core::{Store, StoreError};
use sha2::{Digest, Sha256};

use crate::config::{resolve_data_dir, PostgresAdapterConfig};
use crate::fs::{Offline, WholeSession};
use crate::pg::PgStore;

/// One end of a migration.
#[derive(Debug)]
pub enum End {
    /// A data_dir no worker has open.
    Dir(PathBuf, Offline),
    /// A PostgreSQL schema.
    Postgres(Box<PgStore>),
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            End::Dir(dir, _) => write!(f, "data_dir {}", dir.display()),
            End::Postgres(store) => write!(f, "postgres schema {}", store.schema()),
        }
    }
}

/// Whether `place` names a database (`postgres://` or `postgresql://`) rather than a data_dir.
pub fn is_postgres_url(place: &str) -> bool {
    place.starts_with("postgres://") || place.starts_with("postgresql://")
}

impl End {
    /// A data_dir (resolved as the worker resolves `data_dir`) or a database URL with `schema`.
    pub fn open(place: &str, schema: &str) -> Result<End, String> {
        if is_postgres_url(place) {
            let config = PostgresAdapterConfig {
                url: place.into(),
                max_connections: 2,
                schema: schema.into(),
            };
            Ok(End::Postgres(Box::new(PgStore::open(&config)?)))
        } else {
            let dir = resolve_data_dir(place);
            // What a crash left only in the journal goes back into the session files first.
            crate::fs::recover_journal(&dir).map_err(|e| e.to_string())?;
            Ok(End::Dir(dir.clone(), Offline::new(&dir)))
        }
    }

    fn ids(&self) -> Result<Vec<String>, StoreError> {
        match self {
            End::Dir(_, dir) => dir.session_ids(),
            End::Postgres(store) => store.stored_ids(),
        }
    }

    fn read(&self, sid: &str) -> Result<WholeSession, StoreError> {
        match self {
            End::Dir(_, dir) => dir.read(sid),
            End::Postgres(store) => {
                let state = store.session_state(sid)?;
                let mut metas = store.list_attachments(sid)?;
                metas.sort_by(|a, b| a.attachment_id.cmp(&b.attachment_id));
                let mut attachments = Vec::new();
                for meta in metas {
                    if let Some(found) = store.get_attachment(sid, &meta.attachment_id)? {
                        attachments.push(found);
                    }
                }
                Ok((state, attachments))
            }
        }
    }

    fn write(&self, sid: &str, whole: WholeSession) -> Result<(), StoreError> {
        match self {
            End::Dir(_, dir) => dir.write(sid, &whole),
            End::Postgres(store) => store.put_session(sid, whole.0, whole.1),
        }
    }
}

/// The digest of one session: its snapshot, then each attachment's metadata and bytes.
fn session_digest(sid: &str, (state, attachments): &WholeSession) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(sid.as_bytes());
    hash.update([0]);
    hash.update(jsonl::encode_snapshot(state));
    for (meta, bytes) in attachments {
        hash.update(serde_json::to_vec(meta).unwrap_or_default());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    }
    hash.finalize().into()
}

/// What a migration did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// Sessions of the source.
    pub sessions: usize,
    /// Of which written to the destination (the others it already held identically).
    pub copied: usize,
    /// Attachments of the source.
    pub attachments: usize,
    /// SHA-256 over every session's digest, in id order: equal at both ends.
    pub digest: String,
}

impl fmt::Display for Migrated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} sessions ({} copied, {} already there), {} attachments, verified: sha256 {}",
            self.sessions,
            self.copied,
            self.sessions - self.copied,
            self.attachments,
            self.digest
        )
    }
}

/// Copies every session of `from` into `to`, then verifies `to` holds them all identically.
pub fn migrate(from: &End, to: &End) -> Result<Migrated, String> {
    let fail = |what: &str, sid: &str, e: StoreError| format!("{what} session {sid:?}: {e}");
    let ids = from.ids().map_err(|e| format!("listing {from}: {e}"))?;
    let bar = ProgressBar::new(ids.len() as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} sessions, {elapsed} ({eta} left) {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let (mut copied, mut attachments) = (0, 0);
    let mut source = Sha256::new();
    for sid in &ids {
        let whole = from.read(sid).map_err(|e| fail("reading", sid, e))?;
        let digest = session_digest(sid, &whole);
        source.update(digest);
        attachments += whole.1.len();
        let there = to.read(sid).map_err(|e| fail("reading back", sid, e))?;
        if session_digest(sid, &there) != digest {
            to.write(sid, whole).map_err(|e| fail("writing", sid, e))?;
            copied += 1;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut verified = Sha256::new();
    for sid in &ids {
        let there = to.read(sid).map_err(|e| fail("verifying", sid, e))?;
        verified.update(session_digest(sid, &there));
    }
    let (source, verified) = (hex(&source.finalize()), hex(&verified.finalize()));
    if source != verified {
        return Err(format!("verification failed: {from} digests to {source}, {to} to {verified}"));
    }
    Ok(Migrated { sessions: ids.len(), copied, attachments, digest: source })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
