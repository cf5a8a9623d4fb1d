//! The postgres store of session-manager (its own crate: it depends on the core and nothing of the
//! worker; the worker re-exports it as `session_manager::pg`): sessions in a PostgreSQL database
//! that any number of instances (one per engine) share. Each session is its fs log cut into change-set chunks (`schema.rs`), replayed by
//! the core's record state machine into a per-instance cache that every call first catches up
//! (`cache.rs`), so a read through any instance sees every write acknowledged before it began;
//! each change set is one transaction whose decision meets its apply under the session row's
//! lock (`transact.rs`, `apply.rs`, `batch.rs`), which also writes the session's entry rows
//! (`entry_rows.rs`). Entries, the active leaf and pages of the
//! active path are read from those rows (`read.rs`), metas and attachments straight from theirs,
//! list pages as SQL keyset pages over indexes; the rest (feed pages, other branches, sessions
//! whose rows are not current) from the replayed state.

mod apply;
mod batch;
mod cache;
mod config;
mod db;
mod entry_rows;
mod follow;
mod import;
mod read;
mod schema;
mod search;
mod transact;
mod wake;

use std::sync::Arc;

use session_core::lifecycle::Lifecycle;
use session_core::meta_order::ListQuery;
use session_core::path::{PathSelect, PathSpot};
use session_core::record::SessionState;
use session_core::store::{Applied, ChangeSet};
use session_core::usage::Tally;
use session_core::wire::{AttachmentMeta, FeedPage, SessionEntry, SessionMeta};
use session_core::{Store, StoreError};
use tokio_postgres::Row;

pub use config::PostgresAdapterConfig;
pub use db::CALL_TIMEOUT;
pub use follow::{Follower, Publisher};
pub use schema::{valid_schema_name, PENDING_LIST_KB, SCHEMA_VERSION};

use cache::{catch_up, lock, Cache};
use db::Db;
use schema::Sql;

/// Sessions an instance keeps replayed by default.
pub const CACHED_SESSIONS: usize = 1024;

/// A `Store` over one PostgreSQL schema.
#[derive(Debug)]
pub struct PgStore {
    db: Db,
    sql: Arc<Sql>,
    cache: Cache,
    /// This instance in the outbox and among the followers: its own rows it does not deliver, and
    /// a restarted instance goes on from where it had delivered (`with_instance`; else a fresh id).
    instance: String,
    /// For the follower's LISTEN connection.
    pg_config: tokio_postgres::Config,
    /// Wakes the other instances' followers after a commit that recorded feed changes.
    wake: wake::Wake,
    /// Plain appends decided alone, committed together (`batch.rs`).
    batches: batch::Batches,
}

impl PgStore {
    /// Connects to `config.url` and migrates `config.schema` (creating it when missing). Fails
    /// when the database cannot be reached or its schema is newer than this build.
    pub fn open(config: &PostgresAdapterConfig) -> Result<PgStore, String> {
        let config = config.clone().validated()?;
        let pg_config: tokio_postgres::Config =
            config.url.parse().map_err(|e| format!("postgres adapter: bad url: {e}"))?;
        let db = Db::new(pg_config.clone(), config.max_connections)?;
        let (schema, sql) = (config.schema.clone(), Arc::new(Sql::new(&config.schema)));
        let reads = sql.clone();
        // Unbounded: a migration may rewrite every entry row (version 8 took 46 s for 500k
        // entries, BENCHMARKS.md), far longer than any call may.
        db.run_unbounded(move |mut client| async move {
            schema::migrate(&mut client, &schema).await?;
            // The page reads prepared on the connection the first read will likely get: a cold
            // instance's first page costs its statements, not their prepares too.
            reads.prepare_reads(&client).await
        })
        .map_err(|e| format!("postgres adapter: {e}"))?;
        Ok(PgStore {
            db,
            sql,
            cache: Cache::new(CACHED_SESSIONS),
            instance: uuid::Uuid::new_v4().to_string(),
            wake: wake::Wake::new(pg_config.clone(), &config.schema),
            batches: batch::Batches::default(),
            pg_config,
        })
    }

    /// Names this instance for good (its host and engine URL, say), instead of a fresh id: its
    /// follower then resumes after a restart where the previous run had delivered.
    pub fn with_instance(mut self, instance: String) -> Self {
        self.instance = instance;
        self
    }

    /// The PostgreSQL schema this store keeps its tables in.
    pub fn schema(&self) -> &str {
        &self.sql.schema
    }

    /// Every stored session's id (a session with a log), in id order.
    pub fn session_ids(&self) -> Result<Vec<String>, StoreError> {
        self.rows(|s| &s.session_ids, Vec::new(), session_id_of)
    }

    /// Every id with a log or an attachment, in id order (what `migrate` moves).
    pub fn stored_ids(&self) -> Result<Vec<String>, StoreError> {
        self.rows(|s| &s.stored_ids, Vec::new(), session_id_of)
    }

    /// How many sessions this instance holds replayed (its memory beyond one call's answer).
    pub fn replayed_sessions(&self) -> usize {
        self.cache.replayed()
    }

    /// `sid`'s state replayed from the database alone, the cache left aside (what a new instance
    /// would find: tests, `migrate`).
    pub fn session_state(&self, sid: &str) -> Result<SessionState, StoreError> {
        let (sql, id) = (self.sql.clone(), sid.to_string());
        let replayed = self.db.run(move |client| async move {
            let mut fresh = None;
            catch_up(&client, &sql, &id, &mut fresh).await.map(|()| fresh)
        })?;
        Ok(replayed.map(|r| r.state).unwrap_or_default())
    }

    /// Runs `read` on `sid`'s state, caught up to the database's latest first.
    fn with_state<T>(
        &self,
        sid: &str,
        read: impl FnOnce(&SessionState) -> T,
    ) -> Result<T, StoreError> {
        let slot = self.cache.slot(sid);
        let mut guard = lock(&slot);
        let (sql, id) = (self.sql.clone(), sid.to_string());
        let mut cached = guard.take();
        let result = self.db.run(move |client| async move {
            let caught = catch_up(&client, &sql, &id, &mut cached).await;
            caught.map(|()| cached)
        });
        *guard = result?;
        let empty = SessionState::default();
        Ok(read(guard.as_ref().map_or(&empty, |r| &r.state)))
    }

    /// Rows of one query, mapped.
    fn rows<T: Send + 'static>(
        &self,
        query: impl Fn(&Sql) -> &str + Send + 'static,
        params: Vec<Param>,
        map: impl Fn(&Row) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<Vec<T>, StoreError> {
        let sql = self.sql.clone();
        self.db.run(move |client| async move {
            let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                params.iter().map(Param::as_sql).collect();
            let rows = db::query(&client, "read", query(&sql), &refs).await?;
            rows.iter().map(map).collect()
        })
    }
}

/// An owned query parameter (jobs run on the pool's runtime).
#[derive(Debug)]
enum Param {
    Bytes(Vec<u8>),
    Nullable(Option<Vec<u8>>),
    Int(i64),
    Classes(Vec<i16>),
}

impl Param {
    fn id(id: &str) -> Param {
        Param::Bytes(id.as_bytes().to_vec())
    }
    fn as_sql(&self) -> &(dyn tokio_postgres::types::ToSql + Sync) {
        match self {
            Param::Bytes(b) => b,
            Param::Nullable(b) => b,
            Param::Int(i) => i,
            Param::Classes(c) => c,
        }
    }
}

fn decode<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("postgres: {what}: {e}")))
}

fn session_id_of(row: &Row) -> Result<String, StoreError> {
    String::from_utf8(row.get::<_, Vec<u8>>(0))
        .map_err(|e| StoreError::Corrupt(format!("postgres: a session id: {e}")))
}

fn meta_of(row: &Row) -> Result<SessionMeta, StoreError> {
    decode("a session's meta", row.get::<_, &str>(0))
}

fn attachment_meta_of(row: &Row) -> Result<AttachmentMeta, StoreError> {
    decode("an attachment's meta", row.get::<_, &str>(0))
}

/// Every call waits on the pool's own runtime, never on the caller's: the only call in progress
/// runs on the worker's thread it came on (the hand-offs to a blocking thread and back cost more
/// than waiting there). A write is durable when its transaction committed.
impl session_core::Backend for PgStore {
    fn run(
        &self,
        _op: &session_core::catalog::Operation,
        call: &mut session_core::backend::Call<'_>,
    ) -> session_core::backend::Ran {
        (call(self), None)
    }

    fn waits_elsewhere(&self) -> bool {
        true
    }
}

impl Store for PgStore {
    /// The erased sessions' rows went with their deletes; what is left of them is the metadata
    /// their deletions' outbox rows carry for other instances' binding filters.
    fn erase_traces(&self, session_ids: &[String]) -> Result<(), StoreError> {
        let sql = self.sql.clone();
        let keys: Vec<Vec<u8>> = session_ids.iter().map(|s| s.as_bytes().to_vec()).collect();
        self.db.run(move |client| async move {
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&keys];
            db::execute(&client, "strip erased metadata", &sql.strip_ended_metadata, &params)
                .await
                .map(|_| ())
        })
    }

    fn get_meta(&self, sid: &str) -> Result<Option<SessionMeta>, StoreError> {
        let metas = self.rows(
            |s| &s.meta,
            vec![Param::id(sid)],
            |row| row.get::<_, Option<&str>>(0).map(|t| decode("a session's meta", t)).transpose(),
        )?;
        Ok(metas.into_iter().next().flatten())
    }

    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.rows(|s| &s.metas, Vec::new(), meta_of)
    }

    fn search_index(&self) -> Option<&dyn session_core::search::index::SearchIndex> {
        Some(self)
    }

    fn lifecycle(&self, sid: &str) -> Result<Lifecycle, StoreError> {
        let found = self.rows(
            |s| &s.lifecycle,
            vec![Param::id(sid)],
            |row| decode("a session's lifecycle", row.get::<_, &str>(0)),
        )?;
        Ok(found.into_iter().next().unwrap_or_default())
    }

    fn list_lifecycles(&self) -> Result<Vec<(String, Lifecycle)>, StoreError> {
        self.rows(
            |s| &s.lifecycles,
            Vec::new(),
            |row| {
                let sid = String::from_utf8_lossy(row.get::<_, &[u8]>(0)).into_owned();
                Ok((sid, decode("a session's lifecycle", row.get::<_, &str>(1))?))
            },
        )
    }

    fn get_entry(&self, sid: &str, eid: &str) -> Result<Option<SessionEntry>, StoreError> {
        match self.entry_from_rows(sid, eid)? {
            Some(found) => Ok(found),
            None => self.with_state(sid, |s| s.entries.get(eid).cloned()),
        }
    }

    fn list_entries(&self, sid: &str) -> Result<Vec<SessionEntry>, StoreError> {
        self.with_state(sid, |s| s.entries.values().cloned().collect())
    }

    fn get_active_leaf(&self, sid: &str) -> Result<Option<String>, StoreError> {
        match self.leaf_from_rows(sid)? {
            Some(leaf) => Ok(leaf),
            None => self.with_state(sid, |s| s.leaf.clone()),
        }
    }

    fn get_attachment(
        &self,
        sid: &str,
        aid: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        let found = self.rows(
            |s| &s.attachment,
            vec![Param::id(sid), Param::id(aid)],
            |row| Ok((attachment_meta_of(row)?, row.get::<_, Vec<u8>>(1))),
        )?;
        Ok(found.into_iter().next())
    }

    fn get_attachment_meta(
        &self,
        sid: &str,
        aid: &str,
    ) -> Result<Option<AttachmentMeta>, StoreError> {
        let params = vec![Param::id(sid), Param::id(aid)];
        Ok(self.rows(|s| &s.attachment_meta, params, attachment_meta_of)?.into_iter().next())
    }

    fn list_attachments(&self, sid: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
        self.rows(|s| &s.attachments, vec![Param::id(sid)], attachment_meta_of)
    }

    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        self.apply_alone(changes)
    }

    fn transact(
        &self,
        sid: &str,
        decide: session_core::store::Decide<'_>,
    ) -> Result<Option<Applied>, session_core::SessionError> {
        self.transact_in_db(sid, decide)?
    }

    fn changes(&self, sid: &str, after_seq: u64, limit: usize) -> Result<FeedPage, StoreError> {
        self.with_state(sid, |s| s.feed_page(after_seq, limit))
    }

    fn path_locate(&self, sid: &str, leaf: &str, id: Option<&str>) -> Result<PathSpot, StoreError> {
        match self.locate_from_rows(sid, leaf, id)? {
            Some(spot) => Ok(spot),
            None => self.with_state(sid, |s| s.path_locate(sid, leaf, id))?,
        }
    }

    fn path_select(
        &self,
        sid: &str,
        leaf: &str,
        query: &PathSelect,
    ) -> Result<Vec<(usize, SessionEntry)>, StoreError> {
        match self.select_from_rows(sid, leaf, query)? {
            Some(window) => Ok(window),
            None => self.with_state(sid, |s| s.path_select(sid, leaf, query))?,
        }
    }

    fn usage(&self, sid: &str, leaf: Option<&str>) -> Result<(Tally, Tally), StoreError> {
        self.with_state(sid, |s| s.usage(sid, leaf))?
    }

    /// Keyset pages in SQL, the filter applied here: a batch of the page's size at a time, so a page
    /// costs its metas plus the ones its filter skips.
    fn list_page(&self, query: &ListQuery<'_>) -> Result<Vec<SessionMeta>, StoreError> {
        let mut page = Vec::new();
        let mut after = query.after.map(|(key, sid)| (key, sid.to_string()));
        let batch = query.limit.clamp(1, 500) as i64;
        while page.len() < query.limit {
            let (order, from) = (query.order, after.is_some());
            let params = match &after {
                None => vec![Param::Int(batch)],
                Some((key, sid)) => vec![Param::Int(*key), Param::id(sid), Param::Int(batch)],
            };
            let metas = self.rows(move |s| s.list_page(order, from), params, meta_of)?;
            let Some(last) = metas.last() else { break };
            after =
                Some((session_core::meta_order::sort_key(last, order), last.session_id.clone()));
            let full = metas.len() as i64 == batch;
            page.extend(metas.into_iter().filter(|m| query.filter.matches(m)));
            if !full {
                break;
            }
        }
        page.truncate(query.limit);
        Ok(page)
    }
}
