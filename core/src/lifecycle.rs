//! A session's lifecycle beside its meta: the trash it may be in (its meta parked there, so no
//! seed read or list sees it) and the time it expires. Both are swept by [`crate::ops::sweep`].

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::wire::SessionMeta;

/// Latest `expires_at` accepted: 9999-12-31T23:59:59.999Z in milliseconds since the epoch.
pub const MAX_EXPIRES_AT: i64 = 253_402_300_799_999;

/// Default time a trashed session is kept before it is purged (config key
/// `trash_retention_secs`): 30 days.
pub const DEFAULT_TRASH_RETENTION_SECS: u64 = 30 * 24 * 60 * 60;

/// What a session holds besides its meta, entries and feed. Empty for a session that was never
/// trashed nor given an expiry (every session v1.0.32 wrote).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Lifecycle {
    /// Set while the session is in the trash (boxed: every session state holds a lifecycle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trashed: Option<alloc::boxed::Box<Trashed>>,
    /// When the session is deleted by the sweep (milliseconds since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
}

/// A session in the trash: when it went there and its meta, exactly as it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Trashed {
    pub at: i64,
    pub meta: SessionMeta,
}

/// Why the sweep removes a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Its `expires_at` has passed.
    Expired,
    /// It has been in the trash for `trash_retention`.
    Purged,
}

impl Lifecycle {
    /// Nothing set (the session is a plain one).
    pub fn is_empty(&self) -> bool {
        self.trashed.is_none() && self.expires_at.is_none()
    }

    /// When a trashed session is purged under `retention_ms`.
    pub fn purge_at(&self, retention_ms: i64) -> Option<i64> {
        self.trashed.as_ref().map(|t| t.at.saturating_add(retention_ms))
    }

    /// Whether the sweep removes the session at `now`, and why.
    pub fn due(&self, now: i64, retention_ms: i64) -> Option<Due> {
        if self.expires_at.is_some_and(|at| at <= now) {
            Some(Due::Expired)
        } else if self.purge_at(retention_ms).is_some_and(|at| at <= now) {
            Some(Due::Purged)
        } else {
            None
        }
    }
}

/// The sessions of `lifecycles` due at `now`, in id order.
pub fn due_ids(lifecycles: Vec<(String, Lifecycle)>, now: i64, retention_ms: i64) -> Vec<String> {
    let mut ids: Vec<String> = lifecycles
        .into_iter()
        .filter(|(_, lifecycle)| lifecycle.due(now, retention_ms).is_some())
        .map(|(sid, _)| sid)
        .collect();
    ids.sort_unstable();
    ids
}
