//! The events of other instances: every instance follows the schema's outbox and delivers the
//! events of every change set another instance committed to its own bindings, through its own
//! emitter, once each. A LISTEN connection of its own wakes it after another instance's commit
//! (`wake.rs`: sent while the follower finds another instance present in `followers`, where it
//! renews its own presence every 2 s; a 250 ms poll covers a missed wake-up); the outbox, not
//! the notification, says what to deliver: rows after the last one seen, plus ids skipped on the
//! way that a slower transaction may still commit (kept 30 s). Per session it delivers the feed's
//! changes from the last seq it delivered in the row's epoch (a re-created session id starts a
//! new epoch at seq 1), so a row read twice delivers nothing twice, and after a dropped connection it reconnects and goes
//! on from where it was. It saves how far it has delivered in `followers` under the instance's
//! name, so a restarted instance (same name: host and engine URL) delivers what was committed
//! while it was down, and what it had delivered just before it died possibly once more (at least
//! once); a first start begins at the outbox's head.
//!
//! Each change becomes its event again: the seed's six types from the change's payload (the
//! event payload itself), a `session::message-delta` as the `session::message-updated` it fired,
//! carrying the message as the follower reads it (the newest revision, when more deltas
//! followed); session metadata (for binding filters) is the session's when the follower reads it.
//! A change set that deleted its session took the feed with it: its row holds its changes and
//! the session's metadata inline (`ended`). Changes of an epoch that ended before the follower
//! read them are not delivered (only the deletion is).

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

/// The notification channel of every schema; the payload names the schema.
pub const CHANNEL: &str = "session_manager_outbox";
/// How long an id skipped by the cursor may still commit.
const HOLE_TTL: Duration = Duration::from_secs(30);
/// The widest run of skipped ids the follower keeps waiting for.
const MAX_GAP: i64 = 1024;
/// The poll that covers a lost wake-up.
const POLL: Duration = Duration::from_millis(250);
/// How often the follower renews its instance's presence and looks for other instances'.
const PRESENCE: Duration = Duration::from_secs(2);

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

/// Where a follower hands the other instances' events (the worker's emitter, `runtime.rs`).
pub type Publisher = Arc<dyn session_core::EventSink>;

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
    /// Per session, the epoch and the last seq of it delivered.
    delivered: HashMap<String, (Option<String>, u64)>,
    /// The cursor last saved in `followers`.
    saved: Option<i64>,
    /// When the instance's presence was last renewed there.
    present_at: Option<Instant>,
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
    let Some(own) = store.upgrade().map(|store| store.wake.sender()) else { return Ok(()) };
    tokio::spawn(async move {
        while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            match message {
                Ok(AsyncMessage::Notification(n))
                    if n.payload() == ours && n.process_id() != own.load(Ordering::SeqCst) =>
                {
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
        let (events, outcome) = read(&client, &store, position).await;
        if !events.is_empty() {
            publisher.publish(events).await;
        }
        outcome?;
        // Everything up to here is delivered: a restart goes on after it (below any hole).
        let done = position.holes.keys().next().map_or(position.cursor, |hole| Some(hole - 1));
        if position.present_at.is_none_or(|at| at.elapsed() >= PRESENCE) {
            // Saved with the instance's presence; whether another instance follows says whether
            // this one's commits wake anyone (`wake.rs`).
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&store.instance, &done];
            let others = client
                .query_one(&store.sql.presence, &params)
                .await
                .map_err(|e| with_causes(&e))?;
            store.wake.others_follow(others.get(0));
            (position.present_at, position.saved) = (Some(Instant::now()), done);
        } else if done != position.saved {
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

/// One outbox row: a change set some instance committed to one session.
#[derive(Debug, Clone)]
struct OutboxRow {
    id: i64,
    session: Vec<u8>,
    first_seq: i64,
    last_seq: i64,
    instance: String,
    epoch: Option<String>,
    /// JSON of [`crate::apply::Ended`]: the row's changes, when its change set deleted the session.
    ended: Option<String>,
}

/// Reads the outbox after the cursor and the holes, and turns the other instances' rows into
/// events not delivered yet, in outbox order. The events come back even when the read fails
/// part way (a terminated connection): they are counted as delivered, so they must be published.
async fn read(
    client: &Client,
    store: &PgStore,
    position: &mut Position,
) -> (Vec<Emitted>, Result<(), String>) {
    let mut events = Vec::new();
    let outcome = read_into(client, store, position, &mut events).await;
    (events, outcome)
}

async fn read_into(
    client: &Client,
    store: &PgStore,
    position: &mut Position,
    events: &mut Vec<Emitted>,
) -> Result<(), String> {
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
    let rows = rows.iter().map(|row| OutboxRow {
        id: row.get(0),
        session: row.get(1),
        first_seq: row.get(2),
        last_seq: row.get(3),
        instance: row.get(4),
        epoch: row.get(5),
        ended: row.get(6),
    });
    position.advance(rows, &store.instance, now, events, |sid, epoch, from, last| {
        let page = store.changes(sid, from, (last - from) as usize).map_err(|e| e.to_string())?;
        if page.epoch.as_deref() != epoch {
            // That epoch ended (the session was deleted since): its deletion's row delivers it.
            return Ok(Vec::new());
        }
        // A trashed session's events (its trash's `session::deleted`) filter on its parked meta.
        let meta = session_core::ops::trash::meta_or_trashed(store, sid).ok().flatten();
        let metadata = meta.and_then(|m| m.metadata);
        let in_range = page.changes.into_iter().filter(|c| c.seq > from && c.seq <= last);
        Ok(in_range
            .filter_map(|change| {
                let event = event_of(store, sid, &change)?;
                Some(Emitted { event, session_metadata: metadata.clone(), change: Some(change) })
            })
            .collect())
    })
}

impl Position {
    /// Goes over `rows` (the outbox after the cursor, and the holes, in id order): the rows of
    /// instances other than `me` become events through `fetch(session, epoch, after_seq,
    /// last_seq)`, or from the changes a deleting row holds inline.
    /// A row counts as seen (cursor, holes, delivered seqs) only once its events are in
    /// `events`; at the first failing fetch it stops, so a re-read starts at that row and every
    /// event is delivered once.
    fn advance(
        &mut self,
        rows: impl IntoIterator<Item = OutboxRow>,
        me: &str,
        now: Instant,
        events: &mut Vec<Emitted>,
        mut fetch: impl FnMut(&str, Option<&str>, u64, u64) -> Result<Vec<Emitted>, String>,
    ) -> Result<(), String> {
        for row in rows {
            if row.instance != me {
                if let Ok(sid) = String::from_utf8(row.session) {
                    let (first, last) = (row.first_seq.max(1) as u64, row.last_seq.max(0) as u64);
                    let held = self.delivered.get(&sid).filter(|(epoch, _)| *epoch == row.epoch);
                    let from = held.map_or(0, |(_, seq)| *seq).max(first - 1);
                    if from < last {
                        events.extend(match &row.ended {
                            Some(ended) => ended_events(ended, from, last),
                            None => fetch(&sid, row.epoch.as_deref(), from, last)?,
                        });
                        self.delivered.insert(sid, (row.epoch, last));
                    }
                }
            }
            let newest = self.cursor.unwrap_or(0);
            if row.id > newest {
                // A wide gap is rows trimmed away (an instance back after long), not
                // transactions still in flight: only narrow ones are worth waiting for.
                if row.id - newest <= MAX_GAP {
                    for skipped in newest + 1..row.id {
                        self.holes.insert(skipped, now);
                    }
                }
                self.cursor = Some(row.id);
            } else {
                self.holes.remove(&row.id);
            }
        }
        Ok(())
    }
}

/// The events of a deleting change set's row (its changes inline) after `from`, up to `last`.
fn ended_events(ended: &str, from: u64, last: u64) -> Vec<Emitted> {
    let Ok(ended) = serde_json::from_str::<crate::apply::Ended>(ended) else {
        tracing::warn!("postgres follower: an outbox row's ended changes do not parse");
        return Vec::new();
    };
    let in_range = ended.changes.into_iter().filter(|c| c.seq > from && c.seq <= last);
    in_range
        .filter_map(|change| {
            let event = SessionEvent::from_parts(&change.change_type, &change.payload)?;
            Some(Emitted { event, session_metadata: ended.metadata.clone(), change: Some(change) })
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use session_core::wire::DeletedEvent;

    fn row(id: i64, session: &str, first_seq: i64, last_seq: i64, instance: &str) -> OutboxRow {
        let (session, instance) = (session.as_bytes().to_vec(), instance.to_string());
        OutboxRow { id, session, first_seq, last_seq, instance, epoch: None, ended: None }
    }

    /// One event per seq, naming its session and seq.
    fn events_of(sid: &str, from: u64, last: u64) -> Vec<Emitted> {
        (from + 1..=last)
            .map(|seq| Emitted {
                event: SessionEvent::Deleted(DeletedEvent { session_id: sid.into(), timestamp: 0 }),
                session_metadata: None,
                change: Some(Change {
                    seq,
                    change_type: "session::deleted".into(),
                    payload: serde_json::Value::Null,
                    timestamp: 0,
                    epoch: None,
                }),
            })
            .collect()
    }

    fn delivered(events: &[Emitted]) -> Vec<(String, u64)> {
        let key = |e: &Emitted| match &e.event {
            SessionEvent::Deleted(d) => (d.session_id.clone(), e.change.as_ref().unwrap().seq),
            _ => unreachable!(),
        };
        events.iter().map(key).collect()
    }

    /// What the follow query returns: rows after the cursor, and the holes, in id order.
    fn query(outbox: &[OutboxRow], position: &Position) -> Vec<OutboxRow> {
        let cursor = position.cursor.unwrap_or(0);
        let wanted = |r: &&OutboxRow| r.id > cursor || position.holes.contains_key(&r.id);
        outbox.iter().filter(wanted).cloned().collect()
    }

    #[test]
    fn a_fetch_failing_mid_batch_loses_and_repeats_nothing() {
        // Row 5 commits late (a slower transaction): row 6 leaves a hole for it.
        let mut outbox = vec![
            row(1, "a", 1, 2, "them"),
            row(2, "b", 1, 1, "them"),
            row(3, "a", 3, 3, "me"),
            row(4, "a", 4, 4, "them"),
            row(6, "b", 2, 3, "them"),
        ];
        for failing_call in 1..=4 {
            let mut position = Position { cursor: Some(0), ..Position::default() };
            let (mut published, mut calls, mut failures) = (Vec::new(), 0, 0);
            for round in 0..4 {
                if round == 2 {
                    outbox.push(row(5, "c", 1, 1, "them"));
                    outbox.sort_by_key(|r| r.id);
                }
                let rows = query(&outbox, &position);
                let mut events = Vec::new();
                let outcome =
                    position.advance(rows, "me", Instant::now(), &mut events, |s, _, f, l| {
                        calls += 1;
                        if calls == failing_call {
                            return Err("the connection was terminated".into());
                        }
                        Ok(events_of(s, f, l))
                    });
                failures += usize::from(outcome.is_err());
                published.extend(events);
            }
            outbox.retain(|r| r.id != 5);
            assert_eq!(failures, 1, "call {failing_call} failed once");
            let mut got = delivered(&published);
            got.sort();
            let want = [("a", 1), ("a", 2), ("a", 4), ("b", 1), ("b", 2), ("b", 3), ("c", 1)];
            let want: Vec<(String, u64)> = want.iter().map(|(s, q)| (s.to_string(), *q)).collect();
            assert_eq!(got, want, "failing call {failing_call}");
            assert!(position.holes.is_empty(), "the late row filled its hole");
        }
    }
}
