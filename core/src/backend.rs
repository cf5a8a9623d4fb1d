//! [`Backend`]: a store as a host runs calls on it — where a call may run (the caller's thread or
//! one that may block) and when its writes are durable. The worker knows every store only
//! through this trait and [`Store`] (issue 36): a backend that batches its flushes says so here,
//! never through a branch on which store it is.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::future::Future;
use core::pin::Pin;

use serde_json::Value;

use crate::catalog::Operation;
use crate::{Emitted, Outcome, SessionError, Store, StoreError};

/// What one call of the catalog answers.
pub type CallResult = Result<Outcome<Value>, SessionError>;

/// One call of the catalog against a store (the host's decide → apply → encode).
pub type Call<'a> = dyn FnMut(&dyn Store) -> CallResult + 'a;

/// A future of a durability wait.
pub type Waiting = Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send>>;

/// What a call's writes (or what a read saw) still wait for before the call may answer: a
/// flush shared with other calls. `Err` when it failed: the writes are not acknowledged.
pub trait Durable: Send + core::fmt::Debug {
    /// Waits on this thread (a flush this call leads runs here): for a caller with nothing else
    /// to do meanwhile.
    fn wait_here(self: Box<Self>) -> Result<(), StoreError>;
    /// Waits without holding a thread.
    fn wait(self: Box<Self>) -> Waiting;
}

/// A call's run: its answer, and what its writes still wait for (`None`: durable already).
pub type Ran = (CallResult, Option<Box<dyn Durable>>);

/// A [`Store`] as a host runs calls on it. Every method but [`Backend::run`] has the answer of a
/// store whose calls block until they are durable and that keeps nothing to flush.
pub trait Backend: Store + Send + Sync {
    /// Runs `call` on a thread that may block, against the store or a view of it whose writes
    /// leave their flush to the returned [`Durable`] (waited for after the session lock is
    /// released, so the session's next writers are decided meanwhile and share it).
    fn run(&self, op: &Operation, call: &mut Call<'_>) -> Ran;

    /// Whether a call of `op` may first be tried on the caller's thread ([`Backend::try_here`]).
    fn may_try_here(&self, _op: &Operation) -> bool {
        false
    }

    /// Runs `call` against a view that refuses instead of blocking on IO or another thread.
    /// `None` when it refused: nothing was written, and the host runs the call again with
    /// [`Backend::run`] on a thread that may block.
    fn try_here(&self, _op: &Operation, _call: &mut Call<'_>) -> Option<Ran> {
        None
    }

    /// The store's calls wait on threads of its own (a database pool's): a call that is the only
    /// one in progress may [`Backend::run`] on the caller's thread.
    fn waits_elsewhere(&self) -> bool {
        false
    }

    /// Whether this call of `op` (its `payload`) costs less than the hand-offs to a thread that
    /// may block and back: when it is the only call in progress, it may [`Backend::run`] on the
    /// caller's thread (the fs store: a search its index answers from few postings).
    fn runs_here_alone(&self, _op: &Operation, _payload: &Value) -> bool {
        false
    }

    /// A write call arrives: a token it holds from before it takes its session's lock until its
    /// write landed (a group flush waits briefly for the writes that hold one).
    fn write_arriving(&self) -> Option<Box<dyn Send>> {
        None
    }

    /// What a read of `session_id` that just answered may have seen before it was durable:
    /// the read answers once that is.
    fn read_settles(&self, _session_id: &str) -> Option<Box<dyn Durable>> {
        None
    }

    /// A [`Durable`] failed: cut back what the failed flush left, now (so every later reader,
    /// listing or restart sees the disk as it is). May block.
    fn after_failed_flush(&self) {}

    /// The feed retention replays keep (the worker's `feed_retention` and
    /// `feed_retention_bytes`).
    fn set_feed_retention(&self, _retention: crate::feed::Retention) {}

    /// Before a shutdown: saves what makes the next start fast (listing catalogs, checkpoints)
    /// and empties journals into their files. Everything acknowledged is durable already.
    fn flush_for_shutdown(&self) {}
}

/// Where a backend hands on the events it learns of but did not publish itself: the postgres
/// follower's (other instances' writes), a bridge relay's (its main's feed). The host implements
/// it over its emitter, which runs them through its bindings like its own.
pub trait EventSink: Send + Sync + core::fmt::Debug {
    fn publish(&self, events: Vec<Emitted>) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}
