//! `session::set-expiry` and `session::lifecycle` (extensions): a session's time to live, checked
//! before anything is read (a malformed `expires_at` changes nothing), swept by
//! [`super::sweep`]; and what a session's lifecycle is.

use alloc::format;
use serde_json::Value;

use super::{require_meta, trash::lifecycle_of, Plan};
use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::lifecycle::MAX_EXPIRES_AT;
use crate::store::{ChangeSet, SessionView, Store, StoreView, Write};
use crate::wire::{LifecycleRequest, LifecycleResponse, SetExpiryRequest, SetExpiryResponse};

/// `expires_at` as milliseconds since the epoch, or `None` for `null`; anything else refused.
pub fn parse_expires_at(value: &Value) -> Result<Option<i64>> {
    let millis = match value {
        Value::Null => return Ok(None),
        Value::Number(n) => n.as_i64().filter(|ms| (0..=MAX_EXPIRES_AT).contains(ms)),
        _ => None,
    };
    millis.map(Some).ok_or_else(|| {
        let shown = format!("{value}");
        SessionError::invalid_request(format!(
            "expires_at must be milliseconds since the epoch (an integer from 0 to \
             {MAX_EXPIRES_AT}) or null, got {}",
            crate::catalog::clip(&shown)
        ))
    })
}

pub fn set(view: &dyn SessionView, req: SetExpiryRequest) -> Result<Plan<SetExpiryResponse>> {
    let expires_at = parse_expires_at(&req.expires_at)?;
    require_meta(view)?;
    let response = SetExpiryResponse { session_id: req.session_id.clone(), expires_at };
    if lifecycle_of(view)?.expires_at == expires_at {
        return Ok(Plan::no_write(response));
    }
    let changes = ChangeSet::new(req.session_id).with(Write::SetExpiry(expires_at));
    Ok(Plan::write(changes, response, alloc::vec::Vec::new()))
}

pub fn read(
    store: &dyn Store,
    env: &Env<'_>,
    req: LifecycleRequest,
) -> Result<Option<LifecycleResponse>> {
    let view = StoreView { store, session_id: &req.session_id };
    let lifecycle = lifecycle_of(&view)?;
    if lifecycle.trashed.is_none() && store.get_meta(&req.session_id)?.is_none() {
        return Ok(None);
    }
    Ok(Some(LifecycleResponse {
        session_id: req.session_id,
        expires_at: lifecycle.expires_at,
        trashed_at: lifecycle.trashed.as_ref().map(|t| t.at),
        purge_at: lifecycle.purge_at(env.limits.trash_retention_ms()),
    }))
}
