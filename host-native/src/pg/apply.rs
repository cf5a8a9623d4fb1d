//! One change set as one transaction: lock the session's row (every instance's writes to one
//! session queue there), catch the cached state up under the lock, let the core plan the writes
//! (`plan_session_writes_in_place`: `commit_append`'s rules, feed seqs, deltas), then write the
//! log chunk — or, for deletions and compaction, the snapshot that replaces the log — the row
//! and the attachments, record the change set's feed seqs in the outbox, and commit.

use deadpool_postgres::{GenericClient, Transaction};
use session_core::jsonl;
use session_core::record::SessionState;
use session_core::store::{plan_session_writes_in_place, Applied, ChangeSet, LogChange, Write};
use session_core::wire::AttachmentMeta;
use session_core::StoreError;

use super::cache::{catch_up, Replayed};
use super::db::{db_error, execute, query};
use super::schema::Sql;

/// A log whose chunks outnumber both this and the records of its snapshot is rewritten as that
/// snapshot (amortized O(1) per write, like the fs store's compaction).
const COMPACT_CHUNKS: i64 = 64;

/// Applies `changes` in `tx` on top of `cached` (caught up first) and leaves `cached` at the
/// state it wrote. On any error the caller drops the transaction (nothing lands) and the cache.
pub async fn apply(
    tx: &Transaction<'_>,
    sql: &Sql,
    instance: &str,
    changes: &ChangeSet,
    cached: &mut Option<Replayed>,
) -> Result<Applied, StoreError> {
    let sid = changes.session_id.as_str();
    let key = sid.as_bytes();
    let head = lock_row(tx, sql, key).await?;
    let fresh = matches!(&*cached, Some(c) if (c.base, c.version) == head);
    if !fresh {
        catch_up(tx, sql, sid, cached).await?;
    }
    let replayed = cached.as_mut().ok_or_else(|| StoreError::Internal("no cached state".into()))?;
    let (log, mut applied) = plan_session_writes_in_place(&mut replayed.state, &changes.writes)?;
    write_attachments(tx, sql, sid, &changes.writes, &mut applied).await?;
    let seqs = applied.changes.first().zip(applied.changes.last());
    let seqs = seqs.map(|(first, last)| (first.seq as i64, last.seq as i64));
    let state = &replayed.state;
    let compact = matches!(log, LogChange::Append(_))
        && replayed.chunks + 1 > COMPACT_CHUNKS
        && replayed.chunks + 1 > snapshot_size(state);
    match log {
        LogChange::None if replayed.version <= 0 => {
            // Attachments only, on a session with no log: no row needed.
            execute(tx, "drop the session row", &sql.delete_row, &[&key]).await?;
            *replayed = Replayed::none();
        }
        LogChange::None => {}
        LogChange::Append(records) if !compact => {
            // The chunk, the row and the outbox in one round trip.
            let (n, base) = tokio::try_join!(
                append_chunk(tx, sql, key, &records, state),
                outbox(tx, sql, key, seqs, instance)
            )?
            .0;
            replayed.base = base;
            replayed.version = n;
            replayed.chunks += 1;
            return Ok(applied);
        }
        LogChange::Append(_) | LogChange::Rewrite => rewrite_log(tx, sql, key, replayed).await?,
    }
    outbox(tx, sql, key, seqs, instance).await?;
    Ok(applied)
}

/// Makes sure the session's row exists and locks it until the transaction ends; the log position
/// it names. Both statements are prepared first, then sent back to back in one round trip
/// (tokio-postgres pipelines them, in the order they are polled): so the lock always runs after
/// the insert, also on a connection that has not prepared them yet.
pub(super) async fn lock_row(
    tx: &Transaction<'_>,
    sql: &Sql,
    key: &[u8],
) -> Result<(i64, i64), StoreError> {
    let fail = |e: tokio_postgres::Error| db_error("lock the session row", &e);
    let (ensure, lock) =
        tokio::try_join!(tx.prepare_cached(&sql.ensure_row), tx.prepare_cached(&sql.lock_row))
            .map_err(fail)?;
    let by_key: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&key];
    let (_, locked) =
        tokio::try_join!(tx.execute(&ensure, &by_key), tx.query(&lock, &by_key)).map_err(fail)?;
    let row = locked.first().ok_or_else(|| StoreError::Internal("no session row".into()))?;
    Ok((row.get(0), row.get(1)))
}

/// Replaces the session's log with the snapshot of `replayed`'s state as its one chunk (deletions,
/// compaction, `migrate`), or removes the row when the state is empty; `replayed` follows.
pub(super) async fn rewrite_log(
    tx: &Transaction<'_>,
    sql: &Sql,
    key: &[u8],
    replayed: &mut Replayed,
) -> Result<(), StoreError> {
    execute(tx, "rewrite the session log", &sql.delete_log, &[&key]).await?;
    if replayed.state.is_empty() {
        execute(tx, "drop the session row", &sql.delete_row, &[&key]).await?;
        *replayed = Replayed { state: std::mem::take(&mut replayed.state), ..Replayed::none() };
        return Ok(());
    }
    let snapshot = jsonl::encode_snapshot(&replayed.state);
    let rows = query(tx, "write the snapshot", &sql.insert_chunk, &[&key, &chunk_text(&snapshot)?])
        .await?;
    let n =
        rows.first().map(|row| row.get(0)).ok_or_else(|| StoreError::Internal("no n".into()))?;
    (replayed.base, replayed.version, replayed.chunks) = (n, n, 1);
    let (meta, created, updated) = meta_columns(&replayed.state);
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] =
        [&key, &n, &n, &1i64, &meta, &created, &updated];
    execute(tx, "update the session row", &sql.update_row, &params).await?;
    Ok(())
}

/// A chunk's lines as text (the codec writes JSON, always UTF-8).
fn chunk_text(bytes: &[u8]) -> Result<&str, StoreError> {
    std::str::from_utf8(bytes)
        .map_err(|e| StoreError::Internal(format!("a log chunk is not UTF-8: {e}")))
}

/// The row's meta columns: the meta as JSON text and the two list keys.
fn meta_columns(state: &SessionState) -> (Option<String>, Option<i64>, Option<i64>) {
    let meta = state.meta.as_ref();
    let text = meta.map(|m| serde_json::to_string(m).unwrap_or_default());
    (text, meta.map(|m| m.created_at), meta.map(|m| m.updated_at))
}

/// The outbox row other instances deliver the change set's events from (feed seqs `first..=last`),
/// and their wake-up (a NOTIFY is sent at commit, and only then); nothing without feed changes.
async fn outbox(
    tx: &Transaction<'_>,
    sql: &Sql,
    key: &[u8],
    seqs: Option<(i64, i64)>,
    instance: &str,
) -> Result<(), StoreError> {
    let Some((first, last)) = seqs else { return Ok(()) };
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] = [&key, &first, &last, &instance];
    let schema: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&sql.schema];
    tokio::try_join!(
        execute(tx, "record the change in the outbox", &sql.insert_outbox, &params),
        query(tx, "notify the other instances", super::follow::NOTIFY, &schema),
    )?;
    Ok(())
}

/// Appends one chunk and moves the row onto it in one statement; the chunk's number and the
/// log's base.
async fn append_chunk(
    tx: &Transaction<'_>,
    sql: &Sql,
    key: &[u8],
    records: &[session_core::record::Record],
    state: &SessionState,
) -> Result<(i64, i64), StoreError> {
    let bytes = jsonl::encode_records(records);
    let lines = chunk_text(&bytes)?;
    let (text, created, updated) = meta_columns(state);
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
        [&key, &lines, &text, &created, &updated];
    let rows = query(tx, "append to the session log", &sql.append_chunk, &params).await?;
    let row = rows.first().ok_or_else(|| StoreError::Internal("no session row".into()))?;
    Ok((row.get(0), row.get(1)))
}

/// The records a snapshot of `state` holds, about.
fn snapshot_size(state: &SessionState) -> i64 {
    (state.entries.len() + state.feed.kept().count() + 2) as i64
}

async fn write_attachments(
    tx: &Transaction<'_>,
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
                put_attachment(tx, sql, key, meta, bytes).await?;
            }
            Write::DeleteAttachment(id) => {
                let rows =
                    query(tx, action, &sql.delete_attachment, &[&key, &id.as_bytes()]).await?;
                applied.attachments_deleted.push(!rows.is_empty());
            }
            Write::DeleteAttachments => {
                execute(tx, action, &sql.delete_attachments, &[&key]).await?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Writes (or replaces) one attachment of the session `key`.
pub(super) async fn put_attachment(
    tx: &Transaction<'_>,
    sql: &Sql,
    key: &[u8],
    meta: &AttachmentMeta,
    bytes: &[u8],
) -> Result<(), StoreError> {
    let text = serde_json::to_string(meta).unwrap_or_default();
    let aid = meta.attachment_id.as_bytes();
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] = [&key, &aid, &text, &bytes];
    execute(tx, "write an attachment", &sql.put_attachment, &params).await?;
    Ok(())
}
