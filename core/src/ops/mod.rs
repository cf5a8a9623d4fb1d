//! The operations: one module per public function. A mutation's `decide` reads one session
//! through the [`SessionView`] its backend loaded under its lock and returns a `Plan` — the
//! writes of one atomic change set and how to finish once they landed — that [`transact`] applies
//! in the same transaction (load → decide → apply → publish); a read's `decide` reads through the
//! store's indexed reads.

use alloc::boxed::Box;
use alloc::format;
use alloc::vec::Vec;
use core::marker::PhantomData;

use serde::Serialize;
use serde_json::Value;

use crate::env::{Env, Redraw};
use crate::error::{Result, SessionError};
use crate::events::Emitted;
use crate::feed::PendingChange;
use crate::store::{Applied, ChangeSet, Store, Write};
use crate::store::{SessionView, StoreView};
use crate::wire::{Change, SessionEntry, SessionMeta};

pub mod append;
pub mod append_delta;
pub mod append_many;
pub mod attachments;
pub mod changes;
pub mod compact;
pub mod context;
pub mod create;
pub mod delete;
pub mod ensure;
pub mod erase;
pub mod expiry;
#[cfg(feature = "formats")]
pub mod export;
pub mod fork;
pub mod get;
pub mod get_message;
#[cfg(feature = "formats")]
pub mod import;
pub mod list;
pub mod messages;
pub mod messages_range;
pub mod messages_tail;
pub(crate) mod newest_first;
pub mod search;
pub mod set_active_leaf;
pub mod set_draft;
pub mod set_meta;
pub mod set_status;
pub mod store_protocol;
pub mod sweep;
pub mod trash;
pub mod update_message;
pub mod usage;

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
    /// Depends on what the store reported (the authoritative append commit); answers encoded
    /// ([`Finish::after_apply`]), so running a plan needs no copy per response type.
    AfterApply(Box<dyn FnOnce(Applied) -> Result<Outcome<Value>>>),
}

impl<R: Serialize + 'static> Finish<R> {
    /// A finish that depends on what the store reported.
    pub fn after_apply(finish: impl FnOnce(Applied) -> Result<Outcome<R>> + 'static) -> Self {
        Finish::AfterApply(Box::new(move |applied| encode(finish(applied)?)))
    }
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
    /// A mutation that turned out to write nothing (an unchanged value, a stale revision).
    pub fn no_write(response: R) -> Self {
        Plan { changes: None, finish: Finish::Ready(Outcome::silent(response)) }
    }

    /// Writes whose outcome is known up front.
    pub fn write(changes: ChangeSet, response: R, events: Vec<Emitted>) -> Self {
        Plan { changes: Some(changes), finish: Finish::Ready(Outcome { response, events }) }
    }
}

impl<R: Serialize> Plan<R> {
    /// Applies the change set (if any) to `store`, then finishes. Events are returned only after
    /// the write landed; a failed write yields `session/storage` and no events. For writes that
    /// decide on nothing stored (`session::create`); a mutation that reads before it writes runs
    /// through [`transact`].
    pub fn execute(self, store: &dyn Store, env: &Env<'_>) -> Result<Encoded<R>> {
        let (changes, pending) = self.encoded()?.prepare(env);
        let applied = match changes {
            Some(changes) => Some(store.apply(&changes)?),
            None => None,
        };
        Ok(Encoded(pending.finish(applied)?, PhantomData))
    }

    /// This plan with its response encoded.
    fn encoded(self) -> Result<Plan<Value>> {
        let finish = match self.finish {
            Finish::Ready(outcome) => Finish::Ready(encode(outcome)?),
            Finish::AfterApply(finish) => Finish::AfterApply(finish),
        };
        Ok(Plan { changes: self.changes, finish })
    }
}

impl Plan<Value> {
    /// The change set to apply and what finishes the call once it landed. A change set whose
    /// events are known up front records them in the session's feed (a `Feed` write added last)
    /// unless the operation wrote its own; each event then carries the change (seq) the store
    /// gave it.
    fn prepare(self, env: &Env<'_>) -> (Option<ChangeSet>, Pending) {
        let mut changes = self.changes;
        if let (Some(set), Finish::Ready(outcome)) = (&mut changes, &self.finish) {
            let has_feed = set.writes.iter().any(|w| matches!(w, Write::Feed { .. }));
            if !has_feed && !outcome.events.is_empty() {
                let pending = outcome.events.iter().map(PendingChange::of).collect();
                set.push(env.feed_write(pending));
            }
        }
        (changes, Pending(self.finish))
    }
}

/// The finish of a prepared plan, waiting for what its change set reported.
#[must_use = "a write's response and events come from finishing it"]
struct Pending(Finish<Value>);

impl Pending {
    /// The outcome once the change set landed (`None`: there was none to apply).
    fn finish(self, applied: Option<Applied>) -> Result<Outcome<Value>> {
        let mut applied = applied.unwrap_or_default();
        let recorded = core::mem::take(&mut applied.changes);
        let mut outcome = match self.0 {
            Finish::Ready(outcome) => outcome,
            Finish::AfterApply(finish) => finish(applied)?,
        };
        attach_changes(&mut outcome.events, recorded);
        Ok(outcome)
    }
}

/// Runs a mutation of `session_id` as one transaction of `store` ([`Store::transact`]): `decide`
/// sees the session only through the view the backend loaded under its lock, and its change set
/// is applied in the same transaction (a backend may decide again on a newer view: only the last
/// decision counts, so `decide` is `Fn`, and it gets an env whose ids a decision taken again
/// draws the same, [`Redraw`]). Events come back only for a write that landed. The response
/// comes back encoded, typed by `R` for the catalog; everything past the decision runs once for
/// every response type (the wasm bundle's size).
pub fn transact<R: Serialize>(
    store: &dyn Store,
    env: &Env<'_>,
    session_id: &str,
    decide: impl Fn(&dyn SessionView, &Env<'_>) -> Result<Plan<R>>,
) -> Result<Encoded<R>> {
    let decide = &mut |view: &dyn SessionView, env: &Env<'_>| decide(view, env)?.encoded();
    let outcome = transact_encoded(store, env, session_id, decide)?;
    Ok(Encoded(outcome, PhantomData))
}

/// A decision whose response is encoded ([`transact_encoded`]).
type DecideEncoded<'d> = &'d mut dyn FnMut(&dyn SessionView, &Env<'_>) -> Result<Plan<Value>>;

/// [`transact`] once its decision encodes its response.
fn transact_encoded(
    store: &dyn Store,
    env: &Env<'_>,
    session_id: &str,
    decide: DecideEncoded<'_>,
) -> Result<Outcome<Value>> {
    let redraw = Redraw::new(env.ids);
    let env = Env { clock: env.clock, ids: &redraw, limits: env.limits };
    let mut pending = None;
    let applied = store.transact(session_id, &mut |view| {
        redraw.again();
        let (changes, finish) = decide(view, &env)?.prepare(&env);
        pending = Some(finish);
        Ok(changes)
    })?;
    let pending = pending.ok_or_else(|| SessionError::storage("the store never decided"))?;
    pending.finish(applied)
}

/// An outcome whose response is already encoded, typed by the response it encodes (the catalog
/// checks that against the function's registered response type).
#[derive(Debug)]
pub struct Encoded<R>(pub Outcome<Value>, PhantomData<fn() -> R>);

/// `outcome` with its response as JSON.
pub fn encode<R: Serialize>(outcome: Outcome<R>) -> Result<Outcome<Value>> {
    let response = serde_json::to_value(&outcome.response)
        .map_err(|e| SessionError::storage(format!("response encoding failed: {e}")))?;
    Ok(Outcome { response, events: outcome.events })
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
pub fn require_meta(view: &dyn SessionView) -> Result<SessionMeta> {
    view.meta()?.ok_or_else(|| SessionError::session_not_found(view.session_id()))
}

/// An entry of the session (any branch), or `session/entry_not_found`.
pub fn require_entry(view: &dyn SessionView, entry_id: &str) -> Result<SessionEntry> {
    view.entry(entry_id)?.ok_or_else(|| SessionError::entry_not_found(view.session_id(), entry_id))
}

/// A generated entry id that no entry of the session holds yet. A deterministic generator
/// (`SeqIds`: the browser's `deterministic` workspace, the tests) can draw an id a loaded file
/// already holds, and a new entry under a taken id would pass for that entry's replay (`append`)
/// or replace it (`append-many`); random ids only make that unlikely.
pub fn fresh_entry_id(view: &dyn SessionView, env: &Env<'_>) -> Result<alloc::string::String> {
    loop {
        let id = env.ids.entry_id();
        if view.entry(&id)?.is_none() {
            return Ok(id);
        }
    }
}

/// [`require_meta`] for a read, through the store's own reads.
pub fn stored_meta(store: &dyn Store, session_id: &str) -> Result<SessionMeta> {
    require_meta(&StoreView { store, session_id })
}

/// [`require_entry`] for a read, through the store's own reads.
pub fn stored_entry(store: &dyn Store, session_id: &str, entry_id: &str) -> Result<SessionEntry> {
    require_entry(&StoreView { store, session_id }, entry_id)
}
