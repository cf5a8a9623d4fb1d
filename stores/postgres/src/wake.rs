//! The followers' wake-up after a commit that recorded feed changes: a `NOTIFY` in a transaction
//! of its own on a connection of its own, sent after the write's commit without the write waiting
//! for it. Inside the write's transaction it would serialize every notifying commit, WAL flush
//! included, behind one database-wide lock (PostgreSQL's `PreCommit_Notify`): 32 writers on their
//! own sessions then commit one at a time. Its transaction does not wait for its WAL flush
//! (`synchronous_commit` off): a wake-up is not data, and a lost one is covered by the followers'
//! poll. Commits that come while a wake-up is still to be sent share it. The instance's own
//! follower is not woken by them (it knows the sending backend, [`Wake::sender`]): it has
//! nothing to deliver from its own instance's writes; and none is sent while the follower found
//! no other instance following the schema ([`Wake::others_follow`]: one instance alone pays
//! nothing for them).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

use tokio_postgres::{Client, NoTls};

use super::db::{db_error, Db};
use super::follow::CHANNEL;

/// Wakes the followers of one schema.
#[derive(Debug)]
pub struct Wake {
    /// A wake-up is on its way and not sent yet: a commit before it is sent needs no other.
    pending: Arc<AtomicBool>,
    /// The connection wake-ups are sent on, opened at the first.
    link: Arc<tokio::sync::Mutex<Option<Client>>>,
    config: tokio_postgres::Config,
    /// The whole request (the schema is a validated identifier, its payload).
    statement: Arc<str>,
    /// The backend process of `link` (0 before the first wake-up).
    pid: Arc<AtomicI32>,
    /// Another instance follows the schema (or this one has no follower to tell).
    others: AtomicBool,
}

impl Wake {
    pub fn new(config: tokio_postgres::Config, schema: &str) -> Wake {
        let statement = format!(
            "BEGIN; SET LOCAL synchronous_commit TO off; \
             SELECT pg_notify('{CHANNEL}', '{schema}'); COMMIT"
        );
        Wake {
            pending: Arc::new(AtomicBool::new(false)),
            link: Arc::default(),
            config,
            statement: statement.into(),
            pid: Arc::default(),
            others: AtomicBool::new(true),
        }
    }

    /// What this instance's follower last found: whether another instance follows the schema.
    pub fn others_follow(&self, others: bool) {
        self.others.store(others, Ordering::SeqCst);
    }

    /// The backend process wake-ups come from (0 before the first): a notification from it is
    /// this instance's own.
    pub fn sender(&self) -> Arc<AtomicI32> {
        self.pid.clone()
    }

    /// Called after a commit that wrote an outbox row: a wake-up is sent later than that commit
    /// (a new one, or one still to be sent).
    pub fn after_commit(&self, db: &Db) {
        if !self.others.load(Ordering::SeqCst) || self.pending.swap(true, Ordering::SeqCst) {
            return;
        }
        let (pending, link) = (self.pending.clone(), self.link.clone());
        let (config, statement, pid) =
            (self.config.clone(), self.statement.clone(), self.pid.clone());
        db.detach(async move {
            let mut link = link.lock().await;
            // Cleared once this one is next to send: a commit after this point sends its own.
            pending.store(false, Ordering::SeqCst);
            if link.is_none() {
                let (client, connection) =
                    config.connect(NoTls).await.map_err(|e| db_error("wake the followers", &e))?;
                tokio::spawn(connection);
                let fail = |e| db_error("wake the followers", &e);
                let row = client.query_one("SELECT pg_backend_pid()", &[]).await.map_err(fail)?;
                pid.store(row.get(0), Ordering::SeqCst);
                *link = Some(client);
            }
            let Some(client) = link.as_ref() else { return Ok(()) };
            let sent = client.batch_execute(&statement).await;
            if sent.is_err() {
                *link = None;
            }
            sent.map_err(|e| db_error("wake the followers", &e))
        });
    }
}
