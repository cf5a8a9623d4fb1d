//! One call, one database transaction: load → decide → apply under the session row's lock. The
//! first round trip begins, locks the row and catches the instance's cached state up
//! (`apply::begin_locked`); the core decides over that state on the calling thread (a read of an
//! attachment is a statement in the same transaction); the second round trip writes the change
//! set and commits (`apply::apply_and_commit`). Another instance's write to the session waits on
//! the row lock from the first round trip to the commit, so no decision is taken on state it
//! could change before the apply.

use session_core::state_view::{FoundAttachment, StateView};
use session_core::store::{own_change_set, Decide};
use session_core::store::{Applied, ChangeSet};
use session_core::{SessionError, StoreError};

use super::apply::{apply_and_commit, begin_locked, rollback};
use super::cache::lock;
use super::db::{query, Held};
use super::{attachment_meta_of, PgStore};

impl PgStore {
    /// [`session_core::Store::transact`] of the postgres store: a storage failure (outer) or
    /// what the decision answered (inner: its own refusal, or what was applied).
    #[allow(clippy::type_complexity)]
    pub(super) fn transact_in_db(
        &self,
        sid: &str,
        decide: Decide<'_>,
    ) -> Result<Result<Option<Applied>, SessionError>, StoreError> {
        let slot = self.cache.slot(sid);
        let mut guard = lock(&slot);
        let (sql, id) = (self.sql.clone(), sid.to_string());
        let cached = guard.take();
        let (client, begun) = self.db.hold(move |client| async move {
            let mut cached = cached;
            begin_locked(&*client, &sql, &id, &mut cached).await.map(|current| (cached, current))
        })?;
        let (replayed, current) = match begun {
            Ok((Some(replayed), current)) => (replayed, current),
            Ok((None, _)) => {
                self.rollback(client);
                return Err(StoreError::Internal("no cached state".into()));
            }
            Err(e) => {
                self.rollback(client);
                return Err(e);
            }
        };
        let read_attachment = |aid: &str, bytes: bool| self.attachment_in(&client, sid, aid, bytes);
        let view =
            StateView { session_id: sid, state: &replayed.state, attachments: &read_attachment };
        let changes = match own_change_set(sid, decide(&view)) {
            Ok(changes) => changes,
            Err(not_here) => {
                // Nothing to write here: roll back (a refusal leaves no row behind, not even the
                // one `begin_locked` made for an unknown session); the state stays cached. A
                // change set for another session (a fork's copy) is that session's own
                // transaction, after this one.
                let ended =
                    self.db.run_on(&client, |client| async move { rollback(&*client).await });
                *guard = Some(replayed);
                drop(guard);
                if let Err(e) = ended {
                    self.discard(client);
                    return Err(e);
                }
                drop(client);
                return not_here.finish(self);
            }
        };
        let (sql, instance) = (self.sql.clone(), self.instance.clone());
        let applied = self.db.run_on(&client, move |client| async move {
            let mut cached = Some(replayed);
            let applied =
                apply_and_commit(&*client, &sql, &instance, &changes, &mut cached, current).await;
            applied.map(|applied| (applied, cached))
        });
        match applied {
            Ok((applied, cached)) => {
                *guard = cached;
                Ok(Ok(Some(applied)))
            }
            // The cached state may be half planned: it stays dropped (replayed again).
            Err(e) => {
                self.rollback(client);
                Err(e)
            }
        }
    }

    /// Applies a change set decided without reading (the store protocol, a fork's copy).
    pub(super) fn apply_alone(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        let mut once = Some(changes.clone());
        match self.transact_in_db(&changes.session_id, &mut |_| Ok(once.take()))? {
            Ok(Some(applied)) => Ok(applied),
            _ => Err(StoreError::Internal("the change set was not applied".into())),
        }
    }

    /// One attachment of `sid` read inside the transaction `client` holds.
    fn attachment_in(
        &self,
        client: &Held,
        sid: &str,
        aid: &str,
        bytes: bool,
    ) -> Result<FoundAttachment, StoreError> {
        let (sql, key, aid) = (self.sql.clone(), sid.as_bytes().to_vec(), aid.as_bytes().to_vec());
        self.db.run_on(client, move |client| async move {
            let statement = if bytes { &sql.attachment } else { &sql.attachment_meta };
            let rows = query(&*client, "read an attachment", statement, &[&key, &aid]).await?;
            let Some(row) = rows.first() else { return Ok(None) };
            Ok(Some((attachment_meta_of(row)?, bytes.then(|| row.get::<_, Vec<u8>>(1)))))
        })
    }

    /// Ends a failed transaction; a connection that cannot even roll back is not reused.
    fn rollback(&self, client: Held) {
        let rolled_back = self.db.run_on(&client, |client| async move { rollback(&*client).await });
        if rolled_back.is_err() {
            self.discard(client);
        }
    }

    /// Keeps `client` out of the pool (its transaction's state is unknown).
    fn discard(&self, client: Held) {
        if let Ok(object) = std::sync::Arc::try_unwrap(client) {
            let _ = deadpool_postgres::Object::take(object);
        }
    }
}
