//! The operations: one module per public function. Each `decide` reads what it needs from the
//! store and returns a `Plan` — the writes of one atomic change set and how to finish once they
//! landed — without writing anything itself (decide → apply → publish).

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::events::Emitted;
use crate::feed::PendingChange;
use crate::store::{Applied, ChangeSet, Store, Write};
use crate::wire::{Change, SessionEntry, SessionMeta};

pub mod append;
pub mod append_delta;
pub mod append_many;
pub mod attachments;
pub mod changes;
pub mod create;
pub mod delete;
pub mod ensure;
pub mod fork;
pub mod get;
pub mod get_message;
pub mod list;
pub mod messages;
pub mod messages_range;
pub mod messages_tail;
pub mod set_active_leaf;
pub mod set_draft;
pub mod set_meta;
pub mod set_status;
pub mod store_protocol;
pub mod update_message;

/// A call's result: the response and the events to publish, in order, once the write landed.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome<R> {
    pub response: R,
    pub events: Vec<Emitted>,
}

impl<R> Outcome<R> {
    /// A response with no events.
    pub fn silent(response: R) -> Self {
        Outcome { response, events: Vec::new() }
    }

    pub fn map<T>(self, f: impl FnOnce(R) -> T) -> Outcome<T> {
        Outcome { response: f(self.response), events: self.events }
    }
}

/// How a plan turns into an outcome.
pub enum Finish<R> {
    /// Known before the write.
    Ready(Outcome<R>),
    /// Depends on what the store reported (the authoritative append commit).
    AfterApply(Box<dyn FnOnce(Applied) -> Result<Outcome<R>>>),
}

/// What a mutation decided: at most one change set, then how to finish.
#[must_use = "a plan does nothing until it is executed"]
pub struct Plan<R> {
    pub changes: Option<ChangeSet>,
    pub finish: Finish<R>,
}

impl<R: core::fmt::Debug> core::fmt::Debug for Finish<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Finish::Ready(outcome) => f.debug_tuple("Ready").field(outcome).finish(),
            Finish::AfterApply(_) => f.write_str("AfterApply(..)"),
        }
    }
}

impl<R> core::fmt::Debug for Plan<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Plan").field("changes", &self.changes).finish_non_exhaustive()
    }
}

impl<R> Plan<R> {
    /// A read, or a mutation that turned out to be a no-op.
    pub fn read(response: R) -> Self {
        Plan { changes: None, finish: Finish::Ready(Outcome::silent(response)) }
    }

    /// Writes whose outcome is known up front.
    pub fn write(changes: ChangeSet, response: R, events: Vec<Emitted>) -> Self {
        Plan { changes: Some(changes), finish: Finish::Ready(Outcome { response, events }) }
    }

    /// Applies the change set (if any) to `store`, then finishes. Events are returned only after
    /// the write landed; a failed write yields `session/storage` and no events.
    ///
    /// A change set whose events are known up front records them in the session's feed (a
    /// `Feed` write added last) unless the operation wrote its own; each event then carries the
    /// change (seq) the store gave it.
    #[inline]
    pub fn execute(self, store: &dyn Store, env: &Env<'_>) -> Result<Outcome<R>> {
        // Everything but the finish is the same for every response type: written once in
        // `apply_known` / `apply_unknown` / `attach_changes`, not once per operation.
        match self.finish {
            Finish::Ready(mut outcome) => {
                apply_known(self.changes, &mut outcome.events, store, env)?;
                Ok(outcome)
            }
            Finish::AfterApply(finish) => {
                let (applied, recorded) = apply_unknown(self.changes, store)?;
                let mut outcome = finish(applied)?;
                attach_changes(&mut outcome.events, recorded);
                Ok(outcome)
            }
        }
    }
}

/// Applies `changes` (if any) whose `events` are known up front: unless the operation wrote its
/// own `Feed`, a `Feed` write recording them is added last; each event gets its change.
fn apply_known(
    changes: Option<ChangeSet>,
    events: &mut [Emitted],
    store: &dyn Store,
    env: &Env<'_>,
) -> Result<()> {
    let Some(mut set) = changes else {
        return Ok(());
    };
    let has_feed = set.writes.iter().any(|w| matches!(w, Write::Feed { .. }));
    if !has_feed && !events.is_empty() {
        let pending = events.iter().map(PendingChange::of).collect();
        set.push(env.feed_write(pending));
    }
    let applied = apply_changes(Some(&set), store)?;
    attach_changes(events, applied.changes);
    Ok(())
}

/// Applies `changes` (if any) whose events depend on what the store reports: what it reported,
/// and apart the changes it recorded (for the events the finish returns).
fn apply_unknown(changes: Option<ChangeSet>, store: &dyn Store) -> Result<(Applied, Vec<Change>)> {
    let mut applied = apply_changes(changes.as_ref(), store)?;
    let recorded = core::mem::take(&mut applied.changes);
    Ok((applied, recorded))
}

/// Applies `changes` (if any) to `store`.
fn apply_changes(changes: Option<&ChangeSet>, store: &dyn Store) -> Result<Applied> {
    match changes {
        Some(changes) => Ok(store.apply(changes)?),
        None => Ok(Applied::default()),
    }
}

/// Gives each event its recorded change: one change per event, in order; a store without a feed
/// recorded none.
fn attach_changes(events: &mut [Emitted], recorded: Vec<Change>) {
    if recorded.len() == events.len() {
        for (emitted, change) in events.iter_mut().zip(recorded) {
            emitted.change = Some(change);
        }
    }
}

/// The session's meta, or `session/not_found`.
pub fn require_meta(store: &dyn Store, session_id: &str) -> Result<SessionMeta> {
    store.get_meta(session_id)?.ok_or_else(|| SessionError::session_not_found(session_id))
}

/// An entry of the session (any branch), or `session/entry_not_found`.
pub fn require_entry(store: &dyn Store, session_id: &str, entry_id: &str) -> Result<SessionEntry> {
    store
        .get_entry(session_id, entry_id)?
        .ok_or_else(|| SessionError::entry_not_found(session_id, entry_id))
}
