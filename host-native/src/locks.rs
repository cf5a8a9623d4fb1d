//! Per-session async locks: mutations of one session run one at a time, different sessions in
//! parallel, reads take none (contract §0.4). The table is never pruned.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use session_core::catalog::{LockKey, Operation};
use tokio::sync::OwnedMutexGuard;

/// The lock table.
#[derive(Debug, Default)]
pub struct SessionLocks {
    table: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl SessionLocks {
    /// Waits for the lock of `session_id`.
    pub async fn lock(&self, session_id: &str) -> OwnedMutexGuard<()> {
        let cell = {
            let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
            table.entry(session_id.to_string()).or_default().clone()
        };
        cell.lock_owned().await
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
}
