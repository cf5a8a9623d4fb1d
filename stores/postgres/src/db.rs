//! The database connection of the postgres adapter: a connection pool (deadpool-postgres over
//! tokio-postgres) on a small tokio runtime of its own, and [`Db::run`], which gives the store's
//! synchronous methods the answer of one async database job, bounded in time.

use std::future::Future;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use deadpool_postgres::{
    GenericClient, Object, Pool, PoolConfig, Runtime as PoolRuntime, Timeouts,
};
use session_core::StoreError;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row};

/// How long one store call may take, database round trips and waiting for a connection included.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// A pool of connections to one database and the runtime that drives them.
pub struct Db {
    pool: Pool,
    /// Drives the pool's connections; `None` only while dropping.
    io: Option<tokio::runtime::Runtime>,
}

impl Drop for Db {
    /// Closes the connections without waiting for them: a store may be dropped on an async
    /// thread (a hot reload, a test's restart), where a runtime may not block to shut down.
    fn drop(&mut self) {
        self.pool.close();
        if let Some(io) = self.io.take() {
            io.shutdown_background();
        }
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("status", &self.pool.status()).finish_non_exhaustive()
    }
}

/// A database failure as the store reports it (`session/storage` to the caller), with its causes.
pub fn db_error(action: &str, e: &dyn std::error::Error) -> StoreError {
    StoreError::Io(format!("postgres: {action}: {}", with_causes(e)))
}

/// An error and its causes: tokio-postgres keeps the server's message and the OS error in
/// `source()`, which its `Display` leaves out ("db error", "error connecting to server").
pub fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}

/// A call the database did not answer in time (or a store already closed).
fn no_answer(detail: &str) -> StoreError {
    StoreError::Io(format!("postgres: no answer: {detail}"))
}

impl Db {
    /// A pool of at most `max_connections` to the database of `pg_config`. Connects lazily: an
    /// unreachable database is an error of each call, not of this.
    pub fn new(pg_config: tokio_postgres::Config, max_connections: usize) -> Result<Db, String> {
        let io = tokio::runtime::Builder::new_multi_thread()
            // One thread: a task's requests are all queued before a connection sends
            // (`wait_for_task`); the database, not this thread, is what a call waits on.
            .worker_threads(1)
            .thread_name("session-postgres")
            .enable_all()
            .build()
            .map_err(|e| format!("postgres adapter: cannot start its runtime: {e}"))?;
        let manager = deadpool_postgres::Manager::from_config(
            pg_config,
            NoTls,
            deadpool_postgres::ManagerConfig {
                // A closed connection (its backend gone) is dropped when it comes back; no extra
                // round trip per call.
                recycling_method: deadpool_postgres::RecyclingMethod::Fast,
            },
        );
        let timeouts = Timeouts {
            wait: Some(CALL_TIMEOUT),
            create: Some(Duration::from_secs(5)),
            recycle: Some(Duration::from_secs(5)),
        };
        let pool = Pool::builder(manager)
            .config(PoolConfig {
                max_size: max_connections.max(1),
                timeouts,
                ..PoolConfig::default()
            })
            .runtime(PoolRuntime::Tokio1)
            .build()
            .map_err(|e| format!("postgres adapter: {e}"))?;
        Ok(Db { pool, io: Some(io) })
    }

    /// Runs `job` with a pooled connection on the pool's runtime and waits for its answer (at most
    /// [`CALL_TIMEOUT`]). Called from threads that may block: the worker's blocking pool, the
    /// worker's own thread for the only call in progress (`worker.rs`), tests.
    pub fn run<T, F, Fut>(&self, job: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Object) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, StoreError>> + Send,
    {
        let pool = self.pool.clone();
        self.wait_for(bounded(async move { job(pooled(&pool).await?).await }))
    }

    /// [`Db::run`] without its time limit: for a schema migration, which may rewrite every row.
    pub fn run_unbounded<T, F, Fut>(&self, job: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Object) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, StoreError>> + Send,
    {
        let pool = self.pool.clone();
        self.wait_for(async move { job(pooled(&pool).await?).await })
    }

    /// A pooled connection the caller then holds across several jobs ([`Db::run_on`]: one
    /// database transaction that spans a decision taken between its statements, `transact.rs`),
    /// and the answer of `job`, the first of them, run on it in the same hand-off. `Err` when no
    /// connection could be had.
    pub fn hold<T, F, Fut>(&self, job: F) -> Result<(Held, Result<T, StoreError>), StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Held) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, StoreError>> + Send,
    {
        let pool = self.pool.clone();
        self.wait_for_task(async move {
            let client = Arc::new(pooled(&pool).await?);
            let answer = job(client.clone()).await;
            Ok((client, answer))
        })
    }

    /// Runs `job` on the held connection `client`, as [`Db::run`] does on a pooled one.
    pub fn run_on<T, F, Fut>(&self, client: &Held, job: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Held) -> Fut,
        Fut: Future<Output = Result<T, StoreError>> + Send + 'static,
    {
        self.wait_for_task(job(client.clone()))
    }

    /// Runs `job` on the pool's runtime without waiting for it; its failure is only logged (a
    /// wake-up, `wake.rs`).
    pub fn detach(&self, job: impl Future<Output = Result<(), StoreError>> + Send + 'static) {
        let Some(io) = &self.io else { return };
        io.spawn(async move {
            if let Err(e) = bounded(job).await {
                tracing::debug!("{e}");
            }
        });
    }

    /// Drives `job` as a task of the pool's runtime and waits for its answer, at most
    /// [`CALL_TIMEOUT`]. For the jobs of a held transaction, which pipeline several requests
    /// (`BEGIN`, the lock, the catch-up; the writes, `COMMIT`): the runtime's one thread also
    /// drives the connections, so all of them are queued before the connection sends the first
    /// (one write, one round trip; from the calling thread the connection could send them apart).
    fn wait_for_task<T: Send + 'static>(
        &self,
        job: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = mpsc::sync_channel(1);
        let Some(io) = &self.io else {
            return Err(no_answer("the store is closed"));
        };
        io.spawn(async move {
            let _ = tx.send(bounded(job).await);
        });
        rx.recv_timeout(CALL_TIMEOUT * 2)
            .unwrap_or_else(|_| Err(no_answer(&format!("within {CALL_TIMEOUT:?}"))))
    }

    /// Drives `job` on the calling thread within the pool's runtime (whose threads drive the
    /// connections and the timers) and waits for its answer: each round trip wakes the caller
    /// straight from the connection's task, not through a task of its own.
    fn wait_for<T: Send + 'static>(
        &self,
        job: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let Some(io) = &self.io else {
            return Err(no_answer("the store is closed"));
        };
        let _within = io.enter();
        // Unconstrained: called on a thread inside a task of another runtime (the worker's
        // only call, a test's step), tokio's per-task budget would be that task's, spent and
        // never renewed while this blocks: its resources would answer "yield" forever.
        futures::executor::block_on(tokio::task::unconstrained(job))
    }
}

/// `job`'s answer, or no answer once [`CALL_TIMEOUT`] has passed.
async fn bounded<T>(job: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
    tokio::time::timeout(CALL_TIMEOUT, job)
        .await
        .unwrap_or_else(|_| Err(no_answer(&format!("within {CALL_TIMEOUT:?}"))))
}

/// A connection of `pool`, waited for.
async fn pooled(pool: &Pool) -> Result<Object, StoreError> {
    pool.get().await.map_err(|e| db_error("connect", &e))
}

/// A connection one caller holds across jobs (its transaction open between them).
pub type Held = Arc<Object>;

/// The parameters of one statement.
pub type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// Runs `sql` as a statement prepared once per connection (one round trip per call after the
/// first); `action` names it in the error.
pub async fn query(
    client: &impl GenericClient,
    action: &str,
    sql: &str,
    params: Params<'_>,
) -> Result<Vec<Row>, StoreError> {
    let statement = client.prepare_cached(sql).await.map_err(|e| db_error(action, &e))?;
    client.query(&statement, params).await.map_err(|e| db_error(action, &e))
}

/// [`query`] for a statement that returns no rows; the rows it changed.
pub async fn execute(
    client: &impl GenericClient,
    action: &str,
    sql: &str,
    params: Params<'_>,
) -> Result<u64, StoreError> {
    let statement = client.prepare_cached(sql).await.map_err(|e| db_error(action, &e))?;
    client.execute(&statement, params).await.map_err(|e| db_error(action, &e))
}
