//! The events of other instances: every instance follows the schema's outbox and delivers the
//! events of every change set another instance committed to its own bindings, through its own
//! emitter, once each. A LISTEN connection of its own wakes it at each commit (a 250 ms poll
//! covers a missed wake-up); the outbox, not the notification, says what to deliver: rows after
//! the last one seen, plus ids skipped on the way that a slower transaction may still commit
//! (kept 30 s). Per session it delivers the feed's changes from the last seq it delivered, so a
//! row read twice delivers nothing twice, and after a dropped connection it reconnects and goes
//! on from where it was. It saves how far it has delivered in `followers` under the instance's
//! name, so a restarted instance (same name: host and engine URL) delivers what was committed
//! while it was down, and what it had delivered just before it died possibly once more (at least
//! once); a first start begins at the outbox's head.
//!
//! Each change becomes its event again: the seed's six types from the change's payload (the
//! event payload itself), a `session::message-delta` as the `session::message-updated` it fired,
//! carrying the message as the follower reads it (the newest revision, when more deltas
//! followed); session metadata (for binding filters) is the session's when the follower reads it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use session_core::events::SessionEvent;
use session_core::wire::{Change, MessageDelta, MessageUpdatedEvent, SessionEntry};
use session_core::{Emitted, Store};
use tokio_postgres::{AsyncMessage, Client, NoTls};

use super::db::with_causes;
use super::PgStore;
use crate::emitter::Emitter;

/// The notification channel of every schema; the payload names the schema.
pub const CHANNEL: &str = "session_manager_outbox";
/// The statement that wakes the followers of schema `$1` (at commit).
pub const NOTIFY: &str = "SELECT pg_notify('session_manager_outbox', $1)";
/// How long an id skipped by the cursor may still commit.
const HOLE_TTL: Duration = Duration::from_secs(30);
/// The widest run of skipped ids the follower keeps waiting for.
const MAX_GAP: i64 = 1024;
/// The poll that covers a lost wake-up.
const POLL: Duration = Duration::from_millis(250);

/// A running follower; stops (within one poll) when dropped.
#[derive(Debug)]
pub struct Follower {
    stop: Arc<AtomicBool>,
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Where the follower publishes: the worker's emitter, on the worker's runtime when there is one.
#[derive(Debug, Clone)]
pub struct Publisher {
    pub emitter: Emitter,
    pub handle: Option<tokio::runtime::Handle>,
}

impl Publisher {
    async fn publish(&self, events: Vec<Emitted>) {
        let emitter = self.emitter.clone();
        let publish = async move { emitter.publish(&events, true).await };
        match &self.handle {
            Some(handle) => {
                let _ = handle.spawn(publish).await;
            }
            None => publish.await,
        }
    }
}

impl Follower {
    /// Starts following `store`'s schema on a thread of its own, from the outbox's newest row.
    pub fn start(store: &Arc<PgStore>, publisher: Publisher) -> Result<Follower, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let (weak, flag) = (Arc::downgrade(store), stop.clone());
        let config = store.pg_config.clone();
        std::thread::Builder::new()
            .name("session-postgres-follow".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                match runtime {
                    Ok(rt) => rt.block_on(run(weak, config, publisher, flag)),
                    Err(e) => tracing::error!("postgres follower: no runtime: {e}"),
                }
            })
            .map_err(|e| format!("postgres adapter: cannot start the outbox follower: {e}"))?;
        Ok(Follower { stop })
    }
}

/// What the follower has seen and delivered.
#[derive(Debug, Default)]
struct Position {
    /// The newest outbox id read (`None` until the first connection read the head).
    cursor: Option<i64>,
    /// Ids below the cursor not seen yet, with when they were skipped.
    holes: BTreeMap<i64, Instant>,
    /// Per session, the last seq delivered.
    delivered: HashMap<String, u64>,
    /// The cursor last saved in `followers`.
    saved: Option<i64>,
    last_trim: Option<Instant>,
}

async fn run(
    store: Weak<PgStore>,
    config: tokio_postgres::Config,
    publisher: Publisher,
    stop: Arc<AtomicBool>,
) {
    let mut position = Position::default();
    let mut logged = false;
    while !stop.load(Ordering::SeqCst) {
        let Some(schema) = store.upgrade().map(|s| s.sql.schema.clone()) else { return };
        match follow(&store, &config, &schema, &publisher, &stop, &mut position).await {
            Ok(()) => return,
            Err(e) => {
                if !logged {
                    tracing::warn!("postgres follower: {e}; reconnecting");
                    logged = true;
                }
                tokio::time::sleep(POLL).await;
            }
        }
    }
}

/// One connection's worth of following; `Ok` when stopped, `Err` when the connection failed.
async fn follow(
    store: &Weak<PgStore>,
    config: &tokio_postgres::Config,
    schema: &str,
    publisher: &Publisher,
    stop: &AtomicBool,
    position: &mut Position,
) -> Result<(), String> {
    let (client, mut connection) = config.connect(NoTls).await.map_err(|e| with_causes(&e))?;
    let (wake, mut woken) = tokio::sync::mpsc::unbounded_channel();
    let ours = schema.to_string();
    tokio::spawn(async move {
        while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            match message {
                Ok(AsyncMessage::Notification(n)) if n.payload() == ours => {
                    let _ = wake.send(());
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    });
    client.batch_execute(&format!("LISTEN {CHANNEL}")).await.map_err(|e| with_causes(&e))?;
    if position.cursor.is_none() {
        // Where this instance had delivered up to (a restart), else the outbox's head.
        let Some(store) = store.upgrade() else { return Ok(()) };
        let (sql, me) = (store.sql.clone(), store.instance.clone());
        drop(store);
        let saved =
            client.query_opt(&sql.follower_cursor, &[&me]).await.map_err(|e| with_causes(&e))?;
        let cursor = match saved {
            Some(row) => row.get(0),
            None => {
                client.query_one(&sql.outbox_head, &[]).await.map_err(|e| with_causes(&e))?.get(0)
            }
        };
        position.cursor = Some(cursor);
        position.saved = Some(cursor);
        client
            .execute(&sql.save_follower_cursor, &[&me, &cursor])
            .await
            .map_err(|e| with_causes(&e))?;
    }
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        let Some(store) = store.upgrade() else { return Ok(()) };
        let events = read(&client, &store, position).await?;
        if !events.is_empty() {
            publisher.publish(events).await;
        }
        // Everything up to here is delivered: a restart goes on after it (below any hole).
        let done = position.holes.keys().next().map_or(position.cursor, |hole| Some(hole - 1));
        if done != position.saved {
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&store.instance, &done];
            client
                .execute(&store.sql.save_follower_cursor, &params)
                .await
                .map_err(|e| with_causes(&e))?;
            position.saved = done;
        }
        drop(store);
        tokio::select! {
            woke = woken.recv() => {
                if woke.is_none() {
                    return Err("the LISTEN connection closed".into());
                }
                while woken.try_recv().is_ok() {}
            }
            () = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Reads the outbox after the cursor and the holes, and turns the other instances' rows into
/// events not delivered yet, in outbox order.
async fn read(
    client: &Client,
    store: &PgStore,
    position: &mut Position,
) -> Result<Vec<Emitted>, String> {
    let sql = &store.sql;
    let now = Instant::now();
    position.holes.retain(|_, since| now.duration_since(*since) < HOLE_TTL);
    if position.last_trim.is_none_or(|t| now.duration_since(t) > Duration::from_secs(60)) {
        position.last_trim = Some(now);
        client.execute(&sql.trim_outbox, &[]).await.map_err(|e| with_causes(&e))?;
    }
    let cursor = position.cursor.unwrap_or(0);
    let holes: Vec<i64> = position.holes.keys().copied().collect();
    let rows = client.query(&sql.follow, &[&cursor, &holes]).await.map_err(|e| with_causes(&e))?;
    let mut events = Vec::new();
    let mut newest = cursor;
    for row in rows {
        let id: i64 = row.get(0);
        if id > newest {
            // A wide gap is rows trimmed away (an instance back after long), not transactions
            // still in flight: only narrow ones are worth waiting for.
            if id - newest <= MAX_GAP {
                for skipped in newest + 1..id {
                    position.holes.insert(skipped, now);
                }
            }
            newest = id;
        } else {
            position.holes.remove(&id);
        }
        let instance: &str = row.get(4);
        if instance == store.instance {
            continue;
        }
        let Ok(sid) = String::from_utf8(row.get::<_, Vec<u8>>(1)) else { continue };
        let (first, last): (i64, i64) = (row.get(2), row.get(3));
        let (first, last) = (first.max(1) as u64, last.max(0) as u64);
        let from = position.delivered.get(&sid).copied().unwrap_or(0).max(first - 1);
        if from >= last {
            continue;
        }
        let page = store.changes(&sid, from, (last - from) as usize).map_err(|e| e.to_string())?;
        let metadata = store.get_meta(&sid).ok().flatten().and_then(|m| m.metadata);
        for change in page.changes.into_iter().filter(|c| c.seq > from && c.seq <= last) {
            if let Some(event) = event_of(store, &sid, &change) {
                events.push(Emitted {
                    event,
                    session_metadata: metadata.clone(),
                    change: Some(change),
                });
            }
        }
        position.delivered.insert(sid, last);
    }
    position.cursor = Some(newest);
    Ok(events)
}

/// The event a change was recorded for.
fn event_of(store: &PgStore, sid: &str, change: &Change) -> Option<SessionEvent> {
    if change.change_type != session_core::feed::MESSAGE_DELTA {
        return SessionEvent::from_parts(&change.change_type, &change.payload);
    }
    let delta: MessageDelta = serde_json::from_value(change.payload.clone()).ok()?;
    let Some(SessionEntry::Message { message, .. }) = store.get_entry(sid, &delta.entry_id).ok()?
    else {
        return None;
    };
    Some(SessionEvent::MessageUpdated(MessageUpdatedEvent {
        session_id: sid.into(),
        entry_id: delta.entry_id,
        message,
        revision: delta.revision,
        origin: None,
        timestamp: change.timestamp,
    }))
}
