//! Whole sessions written at once (`session-manager migrate`): a session's replayed state as the
//! snapshot that starts its log, its entry rows, its lifecycle row and its attachments, replacing whatever the
//! schema held for it, in one transaction under the session row's lock.

use deadpool_postgres::Transaction;
use session_core::record::SessionState;
use session_core::wire::AttachmentMeta;
use session_core::StoreError;

use super::apply::{lifecycle_text, lock_row, put_attachment, rewrite_log, write_lifecycle};
use super::cache::{lock, Replayed};
use super::db::{db_error, execute};
use super::entry_rows::EntryRows;
use super::schema::Sql;
use super::PgStore;

impl PgStore {
    /// Replaces session `sid` with `state` and `attachments` (an empty state removes its log).
    pub fn put_session(
        &self,
        sid: &str,
        state: SessionState,
        attachments: Vec<(AttachmentMeta, Vec<u8>)>,
    ) -> Result<(), StoreError> {
        let slot = self.cache.slot(sid);
        let mut guard = lock(&slot);
        guard.take();
        let (sql, key) = (self.sql.clone(), sid.as_bytes().to_vec());
        self.db.run(move |mut client| async move {
            let tx = client.transaction().await.map_err(|e| db_error("begin", &e))?;
            replace(&tx, &sql, &key, state, &attachments).await?;
            tx.commit().await.map_err(|e| db_error("commit", &e))
        })
    }
}

async fn replace(
    tx: &Transaction<'_>,
    sql: &Sql,
    key: &[u8],
    state: SessionState,
    attachments: &[(AttachmentMeta, Vec<u8>)],
) -> Result<(), StoreError> {
    lock_row(tx, sql, key).await?;
    execute(tx, "replace the attachments", &sql.delete_attachments, &[&key]).await?;
    write_lifecycle(tx, sql, key, lifecycle_text(&state.lifecycle)?.as_deref()).await?;
    let mut replayed = Replayed { state, ..Replayed::none() };
    rewrite_log(tx, sql, key, &mut replayed).await?;
    EntryRows::whole(&replayed.state).write(tx, sql, key, true).await?;
    for (meta, bytes) in attachments {
        put_attachment(tx, sql, key, meta, bytes).await?;
    }
    Ok(())
}
