//! Coalescing `session::changed` deliveries (a binding's `coalesce_ms`): consecutive
//! `session::message-delta` changes of one block wait up to `coalesce_ms` and go out as one
//! change covering `first_seq..=seq` (merged by the core's [`merge_delta`]); any other change of
//! that binding and session first sends what is pending, then itself. A worker that stops drops
//! what is pending: the subscriber sees the seq jump at its next delivery and reads the gap with
//! `session::changes`, as after any lost delivery.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use session_core::feed::{merge_delta, MESSAGE_DELTA};
use session_core::subscriptions::Subscription;
use session_core::wire::ChangedEvent;

/// Pending merged deltas, per binding and session.
#[derive(Debug, Default)]
pub struct Coalescer {
    pending: Mutex<HashMap<(String, String), Pending>>,
    generation: std::sync::atomic::AtomicU64,
}

#[derive(Debug)]
struct Pending {
    sub: Subscription,
    event: ChangedEvent,
    /// Which timer owns it (a newer run of deltas gets a newer one).
    generation: u64,
}

/// What [`Coalescer::offer`] decided.
#[derive(Debug, Default)]
pub struct Offered {
    /// To deliver now, in order.
    pub now: Vec<(Subscription, ChangedEvent)>,
    /// A run of deltas started: call [`Coalescer::flush`] with this after the binding's
    /// `coalesce_ms`.
    pub timer: Option<Timer>,
}

/// A flush due after `after`.
#[derive(Debug)]
pub struct Timer {
    key: (String, String),
    generation: u64,
    pub after: Duration,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Coalescer {
    /// Takes one delivery of a coalescing binding (`coalesce_ms` = `ms`).
    pub fn offer(&self, sub: Subscription, event: ChangedEvent, ms: u64) -> Offered {
        let key = (sub.id.clone(), event.session_id.clone());
        let mut pending = lock(&self.pending);
        if let Some(p) = pending.get_mut(&key) {
            if merge_delta(&mut p.event, &event) {
                return Offered::default();
            }
        }
        let mut offered = Offered::default();
        if let Some(p) = pending.remove(&key) {
            offered.now.push((p.sub, p.event));
        }
        if event.change_type == MESSAGE_DELTA && event.first_seq.is_none() {
            let generation = self.generation.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            pending.insert(key.clone(), Pending { sub, event, generation });
            offered.timer = Some(Timer { key, generation, after: Duration::from_millis(ms) });
        } else {
            offered.now.push((sub, event));
        }
        offered
    }

    /// The pending run `timer` started, if nothing sent it meanwhile.
    pub fn flush(&self, timer: &Timer) -> Option<(Subscription, ChangedEvent)> {
        let mut pending = lock(&self.pending);
        match pending.get(&timer.key) {
            Some(p) if p.generation == timer.generation => {
                pending.remove(&timer.key).map(|p| (p.sub, p.event))
            }
            _ => None,
        }
    }

    /// Runs of deltas waiting (for tests and shutdown logs).
    pub fn pending(&self) -> usize {
        lock(&self.pending).len()
    }
}

/// Shared by the emitter's clones.
pub type SharedCoalescer = Arc<Coalescer>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use session_core::subscriptions::Subscriptions;

    fn sub() -> Subscription {
        let mut subs = Subscriptions::new();
        subs.bind("session::changed", "b", "f", &json!({"coalesce_ms": 20})).unwrap().clone()
    }

    fn change(seq: u64, change_type: &str, text: &str) -> ChangedEvent {
        ChangedEvent {
            session_id: "s".into(),
            epoch: None,
            seq,
            first_seq: None,
            change_type: change_type.into(),
            payload: json!({"session_id": "s", "entry_id": "e", "revision": seq,
                "block_index": 0, "text": text}),
            timestamp: 0,
        }
    }

    #[test]
    fn a_run_of_deltas_goes_out_once_and_another_change_sends_it_first() {
        let c = Coalescer::default();
        let first = c.offer(sub(), change(2, MESSAGE_DELTA, "a"), 20);
        assert!(first.now.is_empty());
        let timer = first.timer.expect("a run starts a timer");
        for (seq, text) in [(3, "b"), (4, "c")] {
            let merged = c.offer(sub(), change(seq, MESSAGE_DELTA, text), 20);
            assert!(merged.now.is_empty() && merged.timer.is_none());
        }
        let (_, run) = c.flush(&timer).expect("the run");
        assert_eq!(
            (run.first_seq, run.seq, run.payload["text"].clone()),
            (Some(2), 4, json!("abc"))
        );
        assert!(c.flush(&timer).is_none(), "sent once");

        let started = c.offer(sub(), change(5, MESSAGE_DELTA, "d"), 20);
        let status = c.offer(sub(), change(6, "session::status-changed", ""), 20);
        let seqs: Vec<u64> = status.now.iter().map(|(_, e)| e.seq).collect();
        assert_eq!(seqs, [5, 6], "the pending run, then the change");
        assert!(c.flush(&started.timer.expect("timer")).is_none(), "already sent");
        assert_eq!(c.pending(), 0);
    }
}
