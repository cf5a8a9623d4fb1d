//! The sessions an instance has replayed, each kept with the log position it reflects, and the
//! catch-up that brings one to the database's latest in one round trip: the chunks other
//! instances appended since, or the whole log when a rewrite started a new one. The database
//! stays the only truth: a read trusts a cached state only once it caught it up, a write only
//! for a decision its apply then checks against the row (`transact.rs`). A catch-up that finds
//! chunks the instance did not write marks the session as written elsewhere
//! ([`Replayed::foreign_at`]): its writes then take the row lock before they decide for a while.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use deadpool_postgres::GenericClient;
use session_core::jsonl;
use session_core::record::SessionState;
use session_core::StoreError;

use super::db::query;
use super::schema::Sql;

/// How long after another writer was last seen on a session this instance's writes to it lock
/// first and decide after (two instances writing one session would otherwise keep finding it
/// moved, each time replaying it whole).
pub const SHARED_FOR: Duration = Duration::from_secs(60);

/// One session as replayed from its log: chunks `base..=version` of it (`chunks` of them).
#[derive(Debug, Default)]
pub struct Replayed {
    pub base: i64,
    pub version: i64,
    pub chunks: i64,
    /// The session's entry rows reflect chunk `version` (`projected = version`).
    pub current: bool,
    /// When a catch-up last found chunks another instance wrote, or a write found the session
    /// moved under the state it decided on.
    pub foreign_at: Option<Instant>,
    pub state: SessionState,
}

impl Replayed {
    /// A session with no row: nothing stored.
    pub fn none() -> Replayed {
        Replayed { base: -1, version: -1, ..Replayed::default() }
    }

    /// Whether a write may decide over this state before it locks the row, its apply then
    /// checking that the row is still at this version: a stored session no other instance
    /// wrote to lately.
    pub fn decides_alone(&self) -> bool {
        self.version > 0 && self.foreign_at.is_none_or(|at| at.elapsed() > SHARED_FOR)
    }
}

/// A session's cache slot; its lock serializes this instance's work on the session.
pub type Slot = Arc<Mutex<Option<Replayed>>>;

/// The replayed sessions of this instance, at most `capacity` of them.
#[derive(Debug)]
pub struct Cache {
    slots: Mutex<HashMap<String, Slot>>,
    capacity: usize,
}

impl Cache {
    pub fn new(capacity: usize) -> Cache {
        Cache { slots: Mutex::new(HashMap::new()), capacity: capacity.max(1) }
    }

    /// The slot of `sid`, made when missing; beyond capacity, slots nobody holds are dropped
    /// (their sessions replay again on their next use).
    pub fn slot(&self, sid: &str) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = slots.get(sid) {
            return slot.clone();
        }
        if slots.len() >= self.capacity {
            slots.retain(|_, slot| Arc::strong_count(slot) > 1);
        }
        slots.entry(sid.to_string()).or_default().clone()
    }
}

impl Cache {
    /// How many sessions are held replayed.
    pub fn replayed(&self) -> usize {
        let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.values().filter(|slot| slot.try_lock().map_or(true, |s| s.is_some())).count()
    }
}

/// Locks a slot (a panic while holding it leaves a state that is only a copy: dropped).
pub fn lock(slot: &Slot) -> MutexGuard<'_, Option<Replayed>> {
    slot.lock().unwrap_or_else(|p| {
        let mut guard = p.into_inner();
        *guard = None;
        guard
    })
}

/// Brings `cached` to the database's latest state of `sid` (inside a transaction when `client`
/// is one: then the row must already be locked so that nothing moves between the two).
pub async fn catch_up(
    client: &impl GenericClient,
    sql: &Sql,
    sid: &str,
    cached: &mut Option<Replayed>,
) -> Result<(), StoreError> {
    let (base, version) = position(cached);
    let rows =
        query(client, "read the session log", &sql.catch_up, &[&sid.as_bytes(), &base, &version])
            .await?;
    absorb(&rows, cached);
    Ok(())
}

/// The log position `cached` reflects, as [`Sql::catch_up`] takes it (`-1, -1`: nothing).
pub fn position(cached: &Option<Replayed>) -> (i64, i64) {
    cached.as_ref().map_or((-1, -1), |c| (c.base, c.version))
}

/// Replays the answer of [`Sql::catch_up`] into `cached`: the chunks after its position, or the
/// whole log when a rewrite started a new one; no row means no session.
pub fn absorb(rows: &[tokio_postgres::Row], cached: &mut Option<Replayed>) {
    let (base, version) = position(cached);
    let Some(head) = rows.first() else {
        *cached = Some(Replayed::none());
        return;
    };
    let (new_base, new_version, chunks): (i64, i64, i64) = (head.get(0), head.get(1), head.get(2));
    let current = head.get::<_, Option<bool>>(4).unwrap_or(false);
    if new_base == base && new_version == version {
        if let Some(replayed) = cached {
            replayed.current = current;
        }
        return;
    }
    // Chunks this instance did not write (its own writes move the cache with them).
    let foreign = cached.as_ref().map(|_| Instant::now());
    let mut replayed = match cached.take() {
        Some(c) if c.base == new_base && new_base >= 0 => c,
        _ => Replayed::default(),
    };
    replayed.foreign_at = foreign.or(replayed.foreign_at);
    replayed.current = current;
    let mut bytes = Vec::new();
    for row in rows {
        if let Some(lines) = row.get::<_, Option<&str>>(3) {
            bytes.extend_from_slice(lines.as_bytes());
        }
    }
    jsonl::replay_into(&mut replayed.state, &bytes);
    replayed.base = new_base;
    replayed.version = new_version;
    replayed.chunks = chunks;
    *cached = Some(replayed);
}
