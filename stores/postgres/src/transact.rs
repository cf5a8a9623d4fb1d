//! One call, one database transaction: load → decide → apply, with no decision applied over
//! state another writer changed first. A write takes one of two ways:
//!
//! - **Decided alone** (a session this instance holds replayed and no other instance wrote to
//!   lately, [`Replayed::decides_alone`]): the core decides over the cached state with no
//!   database call, and the apply checks the row under its lock. A plain append
//!   ([`Plan::plain`]) is one statement that writes only while the row is still at the version
//!   decided on (`Sql::append_alone`, committed with the plain appends of other sessions that
//!   arrive meanwhile, `batch.rs`: one round trip); another change set locks the row and checks
//!   it (`lock_at`), then writes and commits (two); a decision that writes nothing here (a
//!   refusal, an idempotent repeat, a fork's copy) stands once the row is found still at that
//!   version (one). A session found moved is decided again the locked way, and marked as
//!   written elsewhere.
//! - **Locked** (a session not held, one another instance wrote to lately, a decision that read
//!   an attachment, a session found moved): the first round trip begins, locks the row and
//!   catches the cached state up (`begin_locked`); the core decides over it on the calling
//!   thread (a read of an attachment is a statement in the same transaction); the second writes
//!   the change set and commits (`write_and_commit`). Another instance's write to the session
//!   waits on the row lock from the first round trip to the commit.

use std::cell::Cell;
use std::sync::MutexGuard;
use std::time::Instant;

use session_core::state_view::{FoundAttachment, StateView};
use session_core::store::{own_change_set, Decide, NotHere};
use session_core::store::{Applied, ChangeSet};
use session_core::{SessionError, StoreError};

use super::apply::{
    begin_locked, landed_alone, lock_at, rollback, write_and_commit, AloneWrite, Plan,
};
use super::cache::{lock, Replayed};
use super::db::{query, Held};
use super::{attachment_meta_of, PgStore};

/// What a write decided alone came to (returned once per write: its size costs one move).
#[allow(clippy::large_enum_variant)]
enum Alone {
    /// Applied, or nothing to write in this session (answered once its slot is released).
    Done(Result<Option<Applied>, NotHere>),
    /// To decide again the locked way, from this cached state (`None`: the state was planned on
    /// before the session was found moved, so it is replayed); `moved`: marks the session as
    /// written elsewhere.
    Locked { cached: Option<Replayed>, moved: bool },
}

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
        let mut moved = false;
        if let Some(replayed) = guard.take_if(|replayed| replayed.decides_alone()) {
            match self.decide_alone(sid, replayed, &mut guard, decide)? {
                Alone::Done(done) => {
                    drop(guard);
                    return match done {
                        Ok(applied) => Ok(Ok(applied)),
                        Err(not_here) => not_here.finish(self),
                    };
                }
                Alone::Locked { cached, moved: found_moved } => {
                    *guard = cached;
                    moved = found_moved;
                }
            }
        }
        self.transact_locked(sid, guard, decide, moved)
    }

    /// The write decided over `replayed` before any lock; `cache` gets the state it leaves.
    fn decide_alone(
        &self,
        sid: &str,
        mut replayed: Replayed,
        cache: &mut Option<Replayed>,
        decide: Decide<'_>,
    ) -> Result<Alone, StoreError> {
        let read = Cell::new(false);
        let read_attachment = |aid: &str, bytes: bool| {
            read.set(true);
            let (sql, key, aid) =
                (self.sql.clone(), sid.as_bytes().to_vec(), aid.as_bytes().to_vec());
            self.db
                .run(move |client| async move { attachment(&client, &sql, key, aid, bytes).await })
        };
        let view =
            StateView { session_id: sid, state: &replayed.state, attachments: &read_attachment };
        let decision = decide(&view);
        let at = (replayed.version, replayed.current);
        if read.get() {
            // Attachments are not versioned with the row: decided again where their reads are
            // statements of the transaction that holds the row lock.
            return Ok(Alone::Locked { cached: Some(replayed), moved: false });
        }
        let changes = match own_change_set(sid, decision) {
            Ok(changes) => changes,
            Err(not_here) => {
                if self.still_at(sid, at)? {
                    *cache = Some(replayed);
                    return Ok(Alone::Done(Err(not_here)));
                }
                return Ok(Alone::Locked { cached: Some(replayed), moved: true });
            }
        };
        let mut plan = Plan::of(&mut replayed, &changes)?;
        if plan.plain(&changes) {
            let write = AloneWrite::of(sid, &self.instance, &mut plan, &replayed, at)?;
            let current = write.current;
            let Some(landed) = self.batches.write(&self.db, &self.sql, write)? else {
                return Ok(Alone::Locked { cached: None, moved: true });
            };
            if plan.wakes() {
                self.wake.after_commit(&self.db);
            }
            let applied = landed_alone(plan, &mut replayed, landed, current);
            *cache = Some(replayed);
            return Ok(Alone::Done(Ok(Some(applied))));
        }
        let (sql, id) = (self.sql.clone(), sid.to_string());
        let (client, still) =
            self.db.hold(move |client| async move { lock_at(&*client, &sql, &id, at).await })?;
        match still {
            Ok(true) => {}
            Ok(false) => {
                self.rollback(client);
                return Ok(Alone::Locked { cached: None, moved: true });
            }
            Err(e) => {
                self.rollback(client);
                return Err(e);
            }
        }
        let (applied, replayed) = self.write(client, changes, plan, replayed)?;
        *cache = Some(replayed);
        Ok(Alone::Done(Ok(Some(applied))))
    }

    /// The write decided under the row lock, over the cached state caught up there; `moved`:
    /// the session was found written elsewhere.
    #[allow(clippy::type_complexity)]
    fn transact_locked(
        &self,
        sid: &str,
        mut guard: MutexGuard<'_, Option<Replayed>>,
        decide: Decide<'_>,
        moved: bool,
    ) -> Result<Result<Option<Applied>, SessionError>, StoreError> {
        let (sql, id) = (self.sql.clone(), sid.to_string());
        let cached = guard.take();
        let (client, begun) = self.db.hold(move |client| async move {
            let mut cached = cached;
            begin_locked(&*client, &sql, &id, &mut cached).await.map(|()| cached)
        })?;
        let mut replayed = match begun {
            Ok(Some(replayed)) => replayed,
            Ok(None) => {
                self.rollback(client);
                return Err(StoreError::Internal("no cached state".into()));
            }
            Err(e) => {
                self.rollback(client);
                return Err(e);
            }
        };
        if moved {
            replayed.foreign_at = Some(Instant::now());
        }
        let read_attachment = |aid: &str, bytes: bool| {
            let (sql, key, aid) =
                (self.sql.clone(), sid.as_bytes().to_vec(), aid.as_bytes().to_vec());
            self.db.run_on(&client, move |client| async move {
                attachment(&*client, &sql, key, aid, bytes).await
            })
        };
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
        let plan = match Plan::of(&mut replayed, &changes) {
            Ok(plan) => plan,
            Err(e) => {
                // The state may be half planned: it stays dropped (replayed again).
                self.rollback(client);
                return Err(e);
            }
        };
        let (applied, replayed) = self.write(client, changes, plan, replayed)?;
        *guard = Some(replayed);
        Ok(Ok(Some(applied)))
    }

    /// Writes `plan` in the transaction `client` holds (the row locked and found at the state
    /// planned on) and commits; the state it leaves. On failure nothing is committed and the
    /// state is dropped (replayed again).
    fn write(
        &self,
        client: Held,
        changes: ChangeSet,
        plan: Plan,
        replayed: Replayed,
    ) -> Result<(Applied, Replayed), StoreError> {
        let wakes = plan.wakes();
        let (sql, instance) = (self.sql.clone(), self.instance.clone());
        let written = self.db.run_on(&client, move |client| async move {
            let mut cached = Some(replayed);
            let applied =
                write_and_commit(&*client, &sql, &instance, &changes, plan, &mut cached).await;
            applied.map(|applied| (applied, cached))
        });
        match written {
            Ok((applied, Some(replayed))) => {
                if wakes {
                    self.wake.after_commit(&self.db);
                }
                Ok((applied, replayed))
            }
            Ok((_, None)) => Err(StoreError::Internal("no cached state".into())),
            Err(e) => {
                self.rollback(client);
                Err(e)
            }
        }
    }

    /// Applies a change set decided without reading (the store protocol, a fork's copy).
    pub(super) fn apply_alone(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        match self.transact_in_db(&changes.session_id, &mut |_| Ok(Some(changes.clone())))? {
            Ok(Some(applied)) => Ok(applied),
            _ => Err(StoreError::Internal("the change set was not applied".into())),
        }
    }

    /// Whether the session's row is still at `version` with entry rows `current` or not (one
    /// statement of its own).
    fn still_at(&self, sid: &str, (version, current): (i64, bool)) -> Result<bool, StoreError> {
        let (sql, key) = (self.sql.clone(), sid.as_bytes().to_vec());
        let rows = self.db.run(move |client| async move {
            query(&client, "read the session's position", &sql.position, &[&key]).await
        })?;
        Ok(rows.first().is_some_and(|row| {
            row.get::<_, i64>(0) == version && row.get::<_, Option<bool>>(1) == Some(current)
        }))
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

/// One attachment of session `key`, its bytes too when `bytes`.
async fn attachment(
    client: &impl deadpool_postgres::GenericClient,
    sql: &super::schema::Sql,
    key: Vec<u8>,
    aid: Vec<u8>,
    bytes: bool,
) -> Result<FoundAttachment, StoreError> {
    let statement = if bytes { &sql.attachment } else { &sql.attachment_meta };
    let rows = query(client, "read an attachment", statement, &[&key, &aid]).await?;
    let Some(row) = rows.first() else { return Ok(None) };
    Ok(Some((attachment_meta_of(row)?, bytes.then(|| row.get::<_, Vec<u8>>(1)))))
}
