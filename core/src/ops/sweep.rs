//! `session::sweep` (extension): deletes every session whose `expires_at` has passed and purges
//! every one trashed longer than `trash_retention_secs`, each in its own transaction that checks
//! again, under the store's lock, that it is due. The worker runs it in the background and at
//! start; [`remove`] is also how `session::erase` removes a session, live or trashed.

use alloc::vec::Vec;

use super::delete::deletion;
use super::trash::lifecycle_of;
use super::{transact, Plan};
use crate::env::Env;
use crate::error::Result;
use crate::events::{Emitted, SessionEvent};
use crate::lifecycle::{due_ids, Due};
use crate::ops::Outcome;
use crate::store::{ChangeSet, SessionView, Store};
use crate::wire::{DeletedEvent, SweepRequest, SweepResponse};

/// The writes and events that remove the session, live or trashed (`None`: there is none). A
/// live one fires `session::deleted`; a trashed one fired it when it was trashed.
pub(crate) fn removal(
    view: &dyn SessionView,
    env: &Env<'_>,
) -> Result<Option<(ChangeSet, Vec<Emitted>)>> {
    let live = view.meta()?;
    if live.is_none() && lifecycle_of(view)?.trashed.is_none() {
        return Ok(None);
    }
    let sid = view.session_id();
    let deleted = |meta| {
        let timestamp = env.clock.now_ms();
        let event = SessionEvent::Deleted(DeletedEvent { session_id: sid.into(), timestamp });
        Emitted::new(event, meta)
    };
    Ok(Some((deletion(sid), live.iter().map(deleted).collect())))
}

/// Removes the session, live or trashed; answers whether there was one.
pub fn remove(view: &dyn SessionView, env: &Env<'_>) -> Result<Plan<bool>> {
    Ok(match removal(view, env)? {
        Some((changes, events)) => Plan::write(changes, true, events),
        None => Plan::no_write(false),
    })
}

/// Removes the session when it is due at `now` (checked on the view its transaction holds).
fn remove_if_due(view: &dyn SessionView, env: &Env<'_>, now: i64) -> Result<Plan<SweepResponse>> {
    let due = lifecycle_of(view)?.due(now, env.limits.trash_retention_ms());
    let (Some(due), Some((changes, events))) = (due, removal(view, env)?) else {
        return Ok(Plan::no_write(SweepResponse::default()));
    };
    let response = SweepResponse {
        expired: u64::from(due == Due::Expired),
        purged: u64::from(due == Due::Purged),
    };
    Ok(Plan::write(changes, response, events))
}

pub fn run(store: &dyn Store, env: &Env<'_>, _req: SweepRequest) -> Result<Outcome<SweepResponse>> {
    let now = env.clock.now_ms();
    let due = due_ids(store.list_lifecycles()?, now, env.limits.trash_retention_ms());
    let mut outcome = Outcome::silent(SweepResponse::default());
    for sid in &due {
        let swept = transact(store, env, sid, |view, env| remove_if_due(view, env, now))?.0;
        let one: SweepResponse = serde_json::from_value(swept.response).unwrap_or_default();
        outcome.response.expired += one.expired;
        outcome.response.purged += one.purged;
        outcome.events.extend(swept.events);
    }
    Ok(outcome)
}
