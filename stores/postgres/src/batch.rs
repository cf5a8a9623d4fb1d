//! Group commit of plain appends ([`AloneWrite`]) across sessions: writes that arrive while
//! others are being committed share the next transaction, each its own statement in one
//! pipelined round trip (`BEGIN`, the statements in session-id order, `COMMIT`; a write alone is
//! its statement's own transaction), so 32 writers on their own sessions pay for a few commits,
//! not 32. Each statement still checks and locks only
//! its own session's row: one that finds its session moved writes nothing and answers `None`
//! without failing the others. At most [`LEADERS`] transactions are on their way at once, each
//! run by one of the waiting callers; a batch that fails is run again one write per transaction,
//! so a failure is answered only to the write it belongs to. Rows are locked in session-id
//! order in every batch, so two instances' batches cannot deadlock on each other.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use session_core::StoreError;

use super::apply::AloneWrite;
use super::db::{db_error, Db};
use super::schema::Sql;

/// Transactions of batched writes on their way at once.
const LEADERS: usize = 4;
/// The most writes one transaction carries.
const MAX_BATCH: usize = 64;

/// What a write came to: the chunk's n and the log's base, `None` when its session moved.
pub type Landed = Result<Option<(i64, i64)>, StoreError>;

/// The writes waiting for a transaction and the answers not collected yet.
#[derive(Debug, Default)]
struct Queue {
    waiting: Vec<(u64, AloneWrite)>,
    answers: HashMap<u64, Landed>,
    next: u64,
    leaders: usize,
}

/// The batches of one store.
#[derive(Debug, Default)]
pub struct Batches {
    queue: Mutex<Queue>,
    answered: Condvar,
}

impl Batches {
    /// Commits `write` with whatever other writes are waiting, and answers what it came to.
    /// Blocking: the caller may run the transaction that carries it, or another one.
    pub fn write(&self, db: &Db, sql: &Arc<Sql>, write: AloneWrite) -> Landed {
        let mut queue = self.lock();
        let ticket = queue.next;
        queue.next += 1;
        queue.waiting.push((ticket, write));
        loop {
            if let Some(answer) = queue.answers.remove(&ticket) {
                return answer;
            }
            if queue.leaders < LEADERS && !queue.waiting.is_empty() {
                let take = queue.waiting.len().min(MAX_BATCH);
                let batch: Vec<(u64, AloneWrite)> = queue.waiting.drain(..take).collect();
                queue.leaders += 1;
                drop(queue);
                let answers = commit(db, sql, batch);
                queue = self.lock();
                queue.leaders -= 1;
                queue.answers.extend(answers);
                self.answered.notify_all();
                continue;
            }
            queue = self.answered.wait(queue).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Runs `batch` as one transaction; when it fails, each write again in one of its own.
fn commit(db: &Db, sql: &Arc<Sql>, mut batch: Vec<(u64, AloneWrite)>) -> Vec<(u64, Landed)> {
    batch.sort_by(|a, b| a.1.key.cmp(&b.1.key));
    let (tickets, writes): (Vec<u64>, Vec<AloneWrite>) = batch.into_iter().unzip();
    let writes = Arc::new(writes);
    match transaction(db, sql, writes.clone()) {
        Ok(landed) => tickets.into_iter().zip(landed.into_iter().map(Ok)).collect(),
        Err(e) => match Arc::try_unwrap(writes) {
            Ok(writes) if writes.len() > 1 => {
                let alone = |write| {
                    transaction(db, sql, Arc::new(vec![write])).map(|mut landed| landed.remove(0))
                };
                tickets.into_iter().zip(writes.into_iter().map(alone)).collect()
            }
            _ => tickets.into_iter().map(|ticket| (ticket, Err(e.clone()))).collect(),
        },
    }
}

/// `writes` in one transaction, one pipelined round trip: what each came to, or the failure
/// of the whole (nothing committed).
fn transaction(
    db: &Db,
    sql: &Arc<Sql>,
    writes: Arc<Vec<AloneWrite>>,
) -> Result<Vec<Option<(i64, i64)>>, StoreError> {
    let sql = sql.clone();
    db.run(move |client| async move {
        let fail = |e: tokio_postgres::Error| db_error("append to the session log", &e);
        let statement = client.prepare_cached(&sql.append_alone).await.map_err(fail)?;
        let params: Vec<_> = writes.iter().map(AloneWrite::params).collect();
        if let [one] = params.as_slice() {
            // One statement is a transaction of its own: acknowledged (`ReadyForQuery`) only
            // once committed, and sent as one request.
            let rows = client.query(&statement, one).await.map_err(fail)?;
            return Ok(vec![rows.first().map(|row| (row.get(0), row.get(1)))]);
        }
        let statements =
            futures::future::join_all(params.iter().map(|params| client.query(&statement, params)));
        // Polled in this order, so sent in it: `BEGIN`, each write, `COMMIT`.
        let (begun, rows, committed) =
            tokio::join!(client.batch_execute("BEGIN"), statements, client.batch_execute("COMMIT"));
        begun.map_err(fail)?;
        // A failed statement aborts the transaction: its `COMMIT` then answers `ROLLBACK`
        // without an error, so every statement's answer is looked at first.
        let landed = rows
            .into_iter()
            .map(|rows| rows.map(|rows| rows.first().map(|row| (row.get(0), row.get(1)))))
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        committed.map_err(fail)?;
        Ok(landed)
    })
}
