//! Per-session async locks: mutations of one session run one at a time, different sessions in
//! parallel, reads take none (contract §0.4). The table is never pruned. With each lock a call
//! takes its *turn*: the events of a session's calls are published in the order the calls held
//! its lock, also when a call releases the lock before its group flush returns (`fs/flush.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use session_core::catalog::{LockKey, Operation};
use tokio::sync::{oneshot, OwnedMutexGuard};

/// The lock table.
#[derive(Debug, Default)]
pub struct SessionLocks {
    table: Mutex<HashMap<String, Arc<Cell>>>,
}

#[derive(Debug, Default)]
struct Cell {
    lock: Arc<tokio::sync::Mutex<()>>,
    /// Ends when the last holder's turn ended.
    last_turn: Mutex<Option<oneshot::Receiver<()>>>,
}

/// A held session lock and the holder's turn.
#[derive(Debug)]
pub struct Locked {
    pub guard: OwnedMutexGuard<()>,
    pub turn: Turn,
}

/// A call's place in its session's order: [`Turn::predecessor`] waits until the previous holder's
/// turn ended; dropping the turn ends it.
#[derive(Debug)]
pub struct Turn {
    previous: Option<oneshot::Receiver<()>>,
    _done: oneshot::Sender<()>,
}

impl Turn {
    /// Waits until the call that held the session's lock before this one ended its turn.
    pub async fn predecessor(&mut self) {
        if let Some(previous) = &mut self.previous {
            let _ = previous.await;
            self.previous = None;
        }
    }
}

impl SessionLocks {
    /// Waits for the lock of `session_id` and takes the next turn.
    pub async fn lock(&self, session_id: &str) -> Locked {
        let cell = {
            let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
            table.entry(session_id.to_string()).or_default().clone()
        };
        let guard = Arc::clone(&cell.lock).lock_owned().await;
        let (done, next) = oneshot::channel();
        let previous = cell.last_turn.lock().unwrap_or_else(|p| p.into_inner()).replace(next);
        Locked { guard, turn: Turn { previous, _done: done } }
    }
}

/// The session a call of `op` must lock, if any, as the catalog declares it
/// ([`Operation::effects`]): `payload.session_id`, or for the store protocol's writes also
/// `payload.meta.session_id`.
pub fn lock_key(op: &Operation, payload: &Value) -> Option<String> {
    let sid = |v: &Value| v.get("session_id").and_then(Value::as_str).map(str::to_string);
    match op.effects.lock {
        LockKey::None => None,
        LockKey::SessionId => sid(payload),
        LockKey::SessionIdOrMeta => sid(payload).or_else(|| payload.get("meta").and_then(sid)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use session_core::catalog::operation;

    #[test]
    fn keys() {
        let key = |id: &str, p: Value| lock_key(operation(id).unwrap(), &p);
        assert_eq!(key("session::append", json!({"session_id": "s"})), Some("s".into()));
        assert_eq!(key("session::create", json!({"session_id": "s"})), None);
        assert_eq!(key("session::messages", json!({"session_id": "s"})), None);
        assert_eq!(
            key("session::store::put-meta", json!({"meta": {"session_id": "m"}})),
            Some("m".into())
        );
        assert_eq!(key("session::store::get-meta", json!({"session_id": "s"})), None);
        assert_eq!(key("session::store::publish-events", json!({"session_id": "s"})), None);
    }

    #[tokio::test]
    async fn serializes_one_session_only() {
        let locks = SessionLocks::default();
        let a = locks.lock("a").await;
        let _b = locks.lock("b").await;
        assert!(tokio::time::timeout(std::time::Duration::from_millis(20), locks.lock("a"))
            .await
            .is_err());
        drop(a);
        let _a = locks.lock("a").await;
    }

    /// Turns end in lock order, whatever order the holders finish in.
    #[tokio::test]
    async fn turns_follow_the_lock_order() {
        let locks = SessionLocks::default();
        let Locked { guard, turn: first } = locks.lock("s").await;
        drop(guard);
        let Locked { guard, turn: mut second } = locks.lock("s").await;
        drop(guard);
        let waiting =
            tokio::time::timeout(std::time::Duration::from_millis(20), second.predecessor());
        assert!(waiting.await.is_err(), "the second turn must wait for the first");
        drop(first);
        second.predecessor().await;
        let mut third = locks.lock("s").await.turn;
        assert!(tokio::time::timeout(std::time::Duration::from_millis(20), third.predecessor())
            .await
            .is_err());
        drop(second);
        third.predecessor().await;
    }
}
