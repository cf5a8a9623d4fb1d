//! The statements of one session's transaction (`transact.rs` runs them): lock the session's row
//! (every instance's writes to one session queue there) and catch the cached state up under the
//! lock; then, once the core decided, plan the writes (`plan_session_writes_in_place`:
//! `commit_append`'s rules, feed seqs, deltas), write the log chunk — or, for deletions and
//! compaction, the snapshot that replaces the log — its entry rows (`entry_rows.rs`), the row and
//! the attachments, record the change set's feed seqs in the outbox, and commit.

use deadpool_postgres::GenericClient;
use session_core::jsonl;
use session_core::lifecycle::Lifecycle;
use session_core::record::SessionState;
use session_core::store::{plan_session_writes_in_place, Applied, ChangeSet, LogChange, Write};
use session_core::wire::AttachmentMeta;
use session_core::StoreError;

use super::cache::{absorb, position, Replayed};
use super::db::{db_error, execute, query};
use super::entry_rows::{Before, EntryRows, Upserts};
use super::schema::Sql;
use super::search::terms::session_terms;

/// A log whose chunks outnumber both this and the records of its snapshot is rewritten as that
/// snapshot (amortized O(1) per write, like the fs store's compaction).
const COMPACT_CHUNKS: i64 = 64;

/// The first round trip of a session's transaction: `BEGIN`, the session's row made and locked
/// (every instance's writes to one session queue there) and `cached` caught up under the lock —
/// four statements sent back to back, prepared first (no round trip once the connection has
/// them). The catch-up is a statement of its own after the lock, so its snapshot holds every
/// chunk committed before the lock was granted, and whether the entry rows reflect them
/// (`cached.current`).
pub async fn begin_locked(
    client: &impl GenericClient,
    sql: &Sql,
    sid: &str,
    cached: &mut Option<Replayed>,
) -> Result<(), StoreError> {
    let key = sid.as_bytes();
    let fail = |e: tokio_postgres::Error| db_error("lock the session row", &e);
    let prepares = async {
        tokio::try_join!(
            client.prepare_cached(&sql.ensure_row),
            client.prepare_cached(&sql.lock_row),
            client.prepare_cached(&sql.catch_up),
        )
        .map_err(fail)
    };
    let ((ensure, lock, catch), ()) = tokio::try_join!(prepares, prepare_writes(client, sql))?;
    let (base, version) = position(cached);
    let by_key: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&key];
    let since: [&(dyn tokio_postgres::types::ToSql + Sync); 3] = [&key, &base, &version];
    let (_, _, _, rows) = tokio::try_join!(
        client.batch_execute("BEGIN"),
        client.execute(&ensure, &by_key),
        client.query(&lock, &by_key),
        client.query(&catch, &since)
    )
    .map_err(fail)?;
    absorb(&rows, cached);
    Ok(())
}

/// Prepares the write statements with a transaction's first statements, though they run later:
/// [`write_and_commit`] sends `COMMIT` in the same round trip as its writes, which is safe only
/// if each write is sent at once, not after a prepare of its own had an answer (its request
/// would then follow the `COMMIT`). No round trip once the connection has them.
async fn prepare_writes(client: &impl GenericClient, sql: &Sql) -> Result<(), StoreError> {
    tokio::try_join!(
        client.prepare_cached(&sql.append_chunk),
        client.prepare_cached(&sql.insert_outbox),
        client.prepare_cached(&sql.project)
    )
    .map_err(|e| db_error("prepare the writes", &e))?;
    Ok(())
}

/// A change set planned on a session's cached state: what its transaction writes.
#[derive(Debug)]
pub struct Plan {
    log: LogChange,
    applied: Applied,
    rows: EntryRows,
    /// The feed seqs the change set recorded, first and last (its outbox row).
    seqs: Option<(i64, i64)>,
    /// The feed epoch of those seqs.
    epoch: Option<String>,
    /// The change set deleted its session, whose feed goes with it: its changes for the outbox
    /// row (JSON of [`Ended`]), so other instances deliver them without reading the feed.
    ended: Option<String>,
    /// The log is rewritten as its snapshot instead of growing by a chunk.
    compact: bool,
    /// The change set touched the session's lifecycle: its row's new JSON (`None`: no row).
    lifecycle: Option<Option<String>>,
}

impl Plan {
    /// Plans `changes` on `replayed`, which becomes the state they leave (on `Err` it may be
    /// half planned: the caller drops it). `replayed.current` says whether the session's entry
    /// rows reflected its log before.
    pub fn of(replayed: &mut Replayed, changes: &ChangeSet) -> Result<Plan, StoreError> {
        let before = Before::of(&replayed.state, &changes.writes, replayed.current);
        let metadata = replayed.state.meta.as_ref().and_then(|m| m.metadata.clone());
        let (log, applied) = plan_session_writes_in_place(&mut replayed.state, &changes.writes)?;
        let rows = EntryRows::after(&before, &replayed.state, &changes.writes);
        let seqs = applied.changes.first().zip(applied.changes.last());
        let seqs = seqs.map(|(first, last)| (first.seq as i64, last.seq as i64));
        let epoch = applied.changes.first().and_then(|c| c.epoch.clone());
        let ended = match seqs.is_some() && !replayed.state.holds_session() {
            true => Some(Ended::text(metadata, &applied.changes)?),
            false => None,
        };
        let compact = matches!(log, LogChange::Append(_))
            && replayed.chunks + 1 > COMPACT_CHUNKS
            && replayed.chunks + 1 > snapshot_size(&replayed.state);
        let touches_lifecycle = changes.writes.iter().any(|w| {
            matches!(
                w,
                Write::Trash { .. } | Write::Restore | Write::SetExpiry(_) | Write::DeleteMeta
            )
        });
        let lifecycle = match touches_lifecycle {
            true => Some(lifecycle_text(&replayed.state.lifecycle)?),
            false => None,
        };
        Ok(Plan { log, applied, rows, seqs, epoch, ended, compact, lifecycle })
    }

    /// Whether its commit wrote an outbox row (the followers are woken after it).
    pub fn wakes(&self) -> bool {
        self.seqs.is_some()
    }

    /// Whether [`append_alone`] writes it: a chunk, entry rows that only insert or replace the
    /// entries it touched, no attachments.
    pub fn plain(&self, changes: &ChangeSet) -> bool {
        matches!(self.log, LogChange::Append(_))
            && !self.compact
            && self.lifecycle.is_none()
            && self.rows.plain()
            && !changes.writes.iter().any(|write| {
                matches!(
                    write,
                    Write::PutAttachment { .. }
                        | Write::DeleteAttachment(_)
                        | Write::DeleteAttachments
                )
            })
    }
}

/// Writes `plan` (made on `cached`, caught up under the row lock by [`begin_locked`] or checked
/// by [`lock_at`]) and commits: the common append — its log chunk, its entry rows, the row, the
/// outbox and `COMMIT` — in one round trip. Leaves `cached` at the state it wrote. On any error
/// nothing is committed and the caller drops the cache.
pub async fn write_and_commit(
    client: &impl GenericClient,
    sql: &Sql,
    instance: &str,
    changes: &ChangeSet,
    mut plan: Plan,
    cached: &mut Option<Replayed>,
) -> Result<Applied, StoreError> {
    let sid = changes.session_id.as_str();
    let key = sid.as_bytes();
    let replayed = cached.as_mut().ok_or_else(|| StoreError::Internal("no cached state".into()))?;
    write_attachments(client, sql, sid, &changes.writes, &mut plan.applied).await?;
    if let Some(lifecycle) = &plan.lifecycle {
        write_lifecycle(client, sql, key, lifecycle.as_deref()).await?;
    }
    let row = OutboxRow { seqs: plan.seqs, instance, epoch: &plan.epoch, ended: &plan.ended };
    let entry_rows = &plan.rows;
    match plan.log {
        LogChange::None if replayed.version <= 0 => {
            // Attachments only, on a session with no log: no row needed.
            execute(client, "drop the session row", &sql.delete_row, &[&key]).await?;
            *replayed = Replayed::none();
        }
        LogChange::None => {}
        LogChange::Append(records) if !plan.compact => {
            // The chunk, the row, the entry rows, the outbox and the commit in one round trip.
            let state = &replayed.state;
            let (n, base) = tokio::try_join!(
                append_chunk(client, sql, key, &records, state, entry_rows),
                entry_rows.write(client, sql, key, false),
                outbox(client, sql, key, &row),
                commit(client)
            )?
            .0;
            replayed.base = base;
            replayed.version = n;
            replayed.chunks += 1;
            replayed.current = entry_rows.row().2 == &true;
            return Ok(plan.applied);
        }
        LogChange::Append(_) | LogChange::Rewrite => {
            rewrite_log(client, sql, key, replayed).await?
        }
    }
    tokio::try_join!(
        entry_rows.write(client, sql, key, true),
        outbox(client, sql, key, &row),
        commit(client)
    )?;
    replayed.current = entry_rows.row().2 == &true;
    Ok(plan.applied)
}

/// What a plain append ([`Plan::plain`]) planned on `replayed` before any lock writes: the
/// parameters of [`Sql::append_alone`], owned (`batch.rs` runs it). It writes only if the
/// session's row is still at the version (and entry-row currency) `decided_at` the plan was made
/// on, locking it first, so no other writer's change can come between the state decided on and
/// the apply.
#[derive(Debug)]
pub struct AloneWrite {
    pub key: Vec<u8>,
    lines: String,
    meta: MetaColumns,
    leaf: Option<Vec<u8>>,
    len: i64,
    pub current: bool,
    version: i64,
    was_current: bool,
    upserts: Upserts,
    first: Option<i64>,
    last: Option<i64>,
    instance: String,
    epoch: Option<String>,
}

impl AloneWrite {
    /// The write of `plan` (its entry rows taken out of it), made on `replayed` at `decided_at`.
    pub fn of(
        sid: &str,
        instance: &str,
        plan: &mut Plan,
        replayed: &Replayed,
        (version, was_current): (i64, bool),
    ) -> Result<AloneWrite, StoreError> {
        let LogChange::Append(records) = &plan.log else {
            return Err(StoreError::Internal("not a plain append".into()));
        };
        let lines = chunk_text(&jsonl::encode_records(records))?.to_string();
        let meta = MetaColumns::of(&replayed.state);
        let (leaf, len, current) = plan.rows.row();
        let (leaf, len, current) = (leaf.clone(), *len, *current);
        let upserts = plan.rows.take_upserts();
        Ok(AloneWrite {
            key: sid.as_bytes().to_vec(),
            lines,
            meta,
            leaf,
            len,
            current,
            version,
            was_current,
            upserts,
            first: plan.seqs.map(|s| s.0),
            last: plan.seqs.map(|s| s.1),
            instance: instance.to_string(),
            epoch: plan.epoch.clone(),
        })
    }

    /// [`Sql::append_alone`]'s parameters.
    pub fn params(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 23] {
        [
            &self.key,
            &self.lines,
            &self.meta.text,
            &self.meta.created,
            &self.meta.updated,
            &self.leaf,
            &self.len,
            &self.current,
            &self.version,
            &self.was_current,
            &self.upserts.ids,
            &self.upserts.at,
            &self.upserts.classes,
            &self.upserts.bodies,
            &self.first,
            &self.last,
            &self.instance,
            &self.epoch,
            &self.meta.terms,
            &self.upserts.terms,
            &self.upserts.timestamps,
            &self.meta.lex,
            &self.upserts.lex,
        ]
    }
}

/// What `replayed` (the state a plan left) becomes once its [`AloneWrite`] landed as chunk `n`
/// of a log based at `base`; what the plan answers.
pub fn landed_alone(
    plan: Plan,
    replayed: &mut Replayed,
    (n, base): (i64, i64),
    current: bool,
) -> Applied {
    (replayed.version, replayed.base) = (n, base);
    replayed.chunks += 1;
    replayed.current = current;
    plan.applied
}

/// `BEGIN` and the session's row locked, in one round trip, with the write statements prepared
/// first ([`begin_locked`] says why): whether the row is still at `version` with entry rows
/// that are `current` or not (else the caller rolls back: the session moved).
pub async fn lock_at(
    client: &impl GenericClient,
    sql: &Sql,
    sid: &str,
    (version, current): (i64, bool),
) -> Result<bool, StoreError> {
    let fail = |e: tokio_postgres::Error| db_error("lock the session row", &e);
    let prepare = async { client.prepare_cached(&sql.lock_row).await.map_err(fail) };
    let (lock, ()) = tokio::try_join!(prepare, prepare_writes(client, sql))?;
    let key = sid.as_bytes();
    let by_key: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&key];
    let (_, locked) = tokio::try_join!(client.batch_execute("BEGIN"), client.query(&lock, &by_key))
        .map_err(fail)?;
    Ok(locked.first().is_some_and(|row| {
        row.get::<_, i64>(1) == version && row.get::<_, Option<bool>>(3) == Some(current)
    }))
}

/// Ends the transaction [`begin_locked`] opened, dropping everything it did.
pub async fn rollback(client: &impl GenericClient) -> Result<(), StoreError> {
    client.batch_execute("ROLLBACK").await.map_err(|e| db_error("roll back", &e))
}

/// Ends the transaction [`begin_locked`] opened, keeping its writes.
pub async fn commit(client: &impl GenericClient) -> Result<(), StoreError> {
    client.batch_execute("COMMIT").await.map_err(|e| db_error("commit", &e))
}

/// Makes sure the session's row exists and locks it until the transaction ends; the log position
/// it names. Both statements are prepared first, then sent back to back in one round trip
/// (tokio-postgres pipelines them, in the order they are polled): so the lock always runs after
/// the insert, also on a connection that has not prepared them yet.
pub(super) async fn lock_row(
    client: &impl GenericClient,
    sql: &Sql,
    key: &[u8],
) -> Result<(i64, i64), StoreError> {
    let fail = |e: tokio_postgres::Error| db_error("lock the session row", &e);
    let (ensure, lock) = tokio::try_join!(
        client.prepare_cached(&sql.ensure_row),
        client.prepare_cached(&sql.lock_row)
    )
    .map_err(fail)?;
    let by_key: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&key];
    let (_, locked) =
        tokio::try_join!(client.execute(&ensure, &by_key), client.query(&lock, &by_key))
            .map_err(fail)?;
    let row = locked.first().ok_or_else(|| StoreError::Internal("no session row".into()))?;
    Ok((row.get(0), row.get(1)))
}

/// Replaces the session's log with the snapshot of `replayed`'s state as its one chunk (deletions,
/// compaction, `migrate`), or removes the row when the state is empty; `replayed` follows.
pub(super) async fn rewrite_log(
    client: &impl GenericClient,
    sql: &Sql,
    key: &[u8],
    replayed: &mut Replayed,
) -> Result<(), StoreError> {
    execute(client, "rewrite the session log", &sql.delete_log, &[&key]).await?;
    if replayed.state.is_empty() {
        execute(client, "drop the session row", &sql.delete_row, &[&key]).await?;
        *replayed = Replayed { state: std::mem::take(&mut replayed.state), ..Replayed::none() };
        return Ok(());
    }
    let snapshot = jsonl::encode_snapshot(&replayed.state);
    let rows =
        query(client, "write the snapshot", &sql.insert_chunk, &[&key, &chunk_text(&snapshot)?])
            .await?;
    let n =
        rows.first().map(|row| row.get(0)).ok_or_else(|| StoreError::Internal("no n".into()))?;
    (replayed.base, replayed.version, replayed.chunks) = (n, n, 1);
    let meta = MetaColumns::of(&replayed.state);
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] =
        [&key, &n, &n, &1i64, &meta.text, &meta.created, &meta.updated, &meta.terms, &meta.lex];
    execute(client, "update the session row", &sql.update_row, &params).await?;
    Ok(())
}

/// A chunk's lines as text (the codec writes JSON, always UTF-8).
fn chunk_text(bytes: &[u8]) -> Result<&str, StoreError> {
    std::str::from_utf8(bytes)
        .map_err(|e| StoreError::Internal(format!("a log chunk is not UTF-8: {e}")))
}

/// The row's meta columns: the meta as JSON text, the two list keys and the search terms (and
/// tsvector) of its title and description.
#[derive(Debug)]
struct MetaColumns {
    text: Option<String>,
    created: Option<i64>,
    updated: Option<i64>,
    terms: Option<String>,
    lex: Option<String>,
}

impl MetaColumns {
    fn of(state: &SessionState) -> MetaColumns {
        let meta = state.meta.as_ref();
        let (terms, lex) = meta.and_then(session_terms).map(|t| (t.json, t.lex)).unzip();
        MetaColumns {
            text: meta.map(|m| serde_json::to_string(m).unwrap_or_default()),
            created: meta.map(|m| m.created_at),
            updated: meta.map(|m| m.updated_at),
            terms,
            lex,
        }
    }
}

/// What the outbox row of a deleting change set holds inline: the session's metadata as it was
/// (for binding filters) and the changes, which the feed no longer keeps once it committed.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Ended {
    pub metadata: Option<session_core::wire::Object>,
    pub changes: Vec<session_core::wire::Change>,
}

impl Ended {
    fn text(
        metadata: Option<session_core::wire::Object>,
        changes: &[session_core::wire::Change],
    ) -> Result<String, StoreError> {
        let ended = Ended { metadata, changes: changes.to_vec() };
        serde_json::to_string(&ended).map_err(|e| StoreError::Internal(format!("ended: {e}")))
    }
}

/// The outbox row of a plan: other instances deliver the change set's events from it (feed seqs
/// `first..=last` of `epoch`, or `ended` inline; the writer wakes them once it committed,
/// `wake.rs`); none without feed changes.
struct OutboxRow<'a> {
    seqs: Option<(i64, i64)>,
    instance: &'a str,
    epoch: &'a Option<String>,
    ended: &'a Option<String>,
}

async fn outbox(
    client: &impl GenericClient,
    sql: &Sql,
    key: &[u8],
    row: &OutboxRow<'_>,
) -> Result<(), StoreError> {
    let Some((first, last)) = row.seqs else { return Ok(()) };
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 6] =
        [&key, &first, &last, &row.instance, row.epoch, row.ended];
    execute(client, "record the change in the outbox", &sql.insert_outbox, &params).await?;
    Ok(())
}

/// Appends one chunk and moves the row onto it (with its entry rows' columns) in one statement;
/// the chunk's number and the log's base.
async fn append_chunk(
    client: &impl GenericClient,
    sql: &Sql,
    key: &[u8],
    records: &[session_core::record::Record],
    state: &SessionState,
    entry_rows: &EntryRows,
) -> Result<(i64, i64), StoreError> {
    let bytes = jsonl::encode_records(records);
    let lines = chunk_text(&bytes)?;
    let meta = MetaColumns::of(state);
    let (leaf, len, current) = entry_rows.row();
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 10] = [
        &key,
        &lines,
        &meta.text,
        &meta.created,
        &meta.updated,
        leaf,
        len,
        current,
        &meta.terms,
        &meta.lex,
    ];
    let rows = query(client, "append to the session log", &sql.append_chunk, &params).await?;
    let row = rows.first().ok_or_else(|| StoreError::Internal("no session row".into()))?;
    Ok((row.get(0), row.get(1)))
}

/// A lifecycle as its row holds it (`None`: an empty one has no row).
pub(super) fn lifecycle_text(lifecycle: &Lifecycle) -> Result<Option<String>, StoreError> {
    if lifecycle.is_empty() {
        return Ok(None);
    }
    serde_json::to_string(lifecycle).map(Some).map_err(|e| StoreError::Internal(e.to_string()))
}

/// Writes (or with `None` removes) the session's lifecycle row.
pub(super) async fn write_lifecycle(
    client: &impl GenericClient,
    sql: &Sql,
    key: &[u8],
    lifecycle: Option<&str>,
) -> Result<(), StoreError> {
    let action = "write the session's lifecycle";
    match lifecycle {
        Some(text) => execute(client, action, &sql.put_lifecycle, &[&key, &text]).await?,
        None => execute(client, action, &sql.delete_lifecycle, &[&key]).await?,
    };
    Ok(())
}

/// The records a snapshot of `state` holds, about.
fn snapshot_size(state: &SessionState) -> i64 {
    (state.entries.len() + state.feed.len() + 2) as i64
}

async fn write_attachments(
    client: &impl GenericClient,
    sql: &Sql,
    sid: &str,
    writes: &[Write],
    applied: &mut Applied,
) -> Result<(), StoreError> {
    let key = sid.as_bytes();
    let action = "write an attachment";
    for write in writes {
        match write {
            Write::PutAttachment { meta, bytes } => {
                put_attachment(client, sql, key, meta, bytes).await?;
            }
            Write::DeleteAttachment(id) => {
                let rows =
                    query(client, action, &sql.delete_attachment, &[&key, &id.as_bytes()]).await?;
                applied.attachments_deleted.push(!rows.is_empty());
            }
            Write::DeleteAttachments => {
                execute(client, action, &sql.delete_attachments, &[&key]).await?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Writes (or replaces) one attachment of the session `key`.
pub(super) async fn put_attachment(
    client: &impl GenericClient,
    sql: &Sql,
    key: &[u8],
    meta: &AttachmentMeta,
    bytes: &[u8],
) -> Result<(), StoreError> {
    let text = serde_json::to_string(meta).unwrap_or_default();
    let aid = meta.attachment_id.as_bytes();
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] = [&key, &aid, &text, &bytes];
    execute(client, "write an attachment", &sql.put_attachment, &params).await?;
    Ok(())
}
