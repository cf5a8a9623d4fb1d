//! The waiting rule of group commit, shared by the session flushers (`flush.rs`) and the journal
//! (`journal/`): what a waiter does next, and a condvar that counts its waiters.

use std::sync::{Condvar, MutexGuard};

use session_core::StoreError;

/// What a waiter for count `upto` of a group commit does next, given the ranges failed flushes
/// dropped, the durable count and whether a flush runs (the rule of the session flushers and
/// of the journal, `journal/`).
pub(super) fn next_step(
    failed: &[(u64, u64, String)],
    durable: u64,
    flushing: bool,
    upto: u64,
) -> Next {
    if let Some((_, _, why)) = failed.iter().find(|(from, to, _)| *from < upto && upto <= *to) {
        return Next::Done(Err(StoreError::Io(why.clone())));
    }
    if durable >= upto {
        Next::Done(Ok(()))
    } else if flushing {
        Next::Wait
    } else {
        Next::Lead
    }
}

/// A waiter's next step.
pub(super) enum Next {
    /// Durable, or dropped by a failed flush.
    Done(Result<(), StoreError>),
    /// A flush runs: wait for it to end.
    Wait,
    /// No flush runs: lead one.
    Lead,
}

/// A condvar whose waiters are counted in the state its mutex guards, so a wake with nobody
/// waiting makes no syscall (a std `Condvar` wake always makes one; a lone append's flush wakes
/// nobody). Read the count under the lock, wake after releasing it.
#[derive(Debug, Default)]
pub(super) struct CountedCondvar(Condvar);

impl CountedCondvar {
    /// Waits once; `*waiting(state)` counts this thread meanwhile.
    pub(super) fn wait<'a, T>(
        &self,
        mut guard: MutexGuard<'a, T>,
        waiting: fn(&mut T) -> &mut usize,
    ) -> MutexGuard<'a, T> {
        *waiting(&mut guard) += 1;
        let mut guard = self.0.wait(guard).unwrap_or_else(|p| p.into_inner());
        *waiting(&mut guard) -= 1;
        guard
    }

    /// [`Self::wait`] for at most `timeout`.
    pub(super) fn wait_timeout<'a, T>(
        &self,
        mut guard: MutexGuard<'a, T>,
        timeout: std::time::Duration,
        waiting: fn(&mut T) -> &mut usize,
    ) -> MutexGuard<'a, T> {
        *waiting(&mut guard) += 1;
        let (mut guard, _) = self.0.wait_timeout(guard, timeout).unwrap_or_else(|p| p.into_inner());
        *waiting(&mut guard) -= 1;
        guard
    }

    /// Wakes every waiter, if `waiting` (the count read under the lock) says there is one.
    pub(super) fn notify_all(&self, waiting: usize) {
        if waiting > 0 {
            self.0.notify_all();
        }
    }
}
