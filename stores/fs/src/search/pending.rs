//! What the index does not hold yet: the sessions and entries written since their documents were
//! last committed. A write records itself here before it touches the log, and stays until a
//! commit that read it after that is visible to searches; meanwhile searches read it from the
//! store instead ([`Unindexed`]).

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use session_core::search::index::Unindexed;
use session_core::search::touched::Touched;

/// One session's unindexed writes, each with the generation it was recorded at.
#[derive(Debug, Clone, Default)]
pub(crate) struct Work {
    /// The whole session is to be read again.
    pub whole: Option<u64>,
    /// Its own text (title, description, `updated_at`).
    pub own: Option<u64>,
    pub entries: HashMap<String, u64>,
}

#[derive(Debug, Default)]
struct Inner {
    generation: u64,
    sessions: HashMap<String, Work>,
}

/// The unindexed writes of every session.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    inner: Mutex<Inner>,
    wake: Condvar,
}

impl Pending {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records what a write is about to change.
    pub(crate) fn touch(&self, sid: &str, touched: Touched) {
        if touched == Touched::Nothing {
            return;
        }
        let mut inner = self.lock();
        inner.generation += 1;
        let generation = inner.generation;
        let work = inner.sessions.entry(sid.to_string()).or_default();
        work.own = Some(generation);
        match touched {
            Touched::Session => work.whole = Some(generation),
            Touched::Entries(ids) => {
                for id in ids {
                    work.entries.insert(id, generation);
                }
            }
            Touched::Nothing => {}
        }
        drop(inner);
        self.wake.notify_one();
    }

    /// What searches must read from the store right now.
    pub(crate) fn unindexed(&self) -> Vec<Unindexed> {
        let inner = self.lock();
        inner
            .sessions
            .iter()
            .map(|(sid, work)| match work.whole {
                Some(_) => Unindexed::Session(sid.clone()),
                None => Unindexed::Entries {
                    session_id: sid.clone(),
                    entry_ids: work.entries.keys().cloned().collect(),
                },
            })
            .collect()
    }

    /// Up to `max` sessions with unindexed writes.
    pub(crate) fn sessions(&self, max: usize) -> Vec<String> {
        self.lock().sessions.keys().take(max).cloned().collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().sessions.len()
    }

    /// The session's unindexed writes as of now, and the generation they go up to.
    pub(crate) fn work(&self, sid: &str) -> Option<(u64, Work)> {
        let inner = self.lock();
        inner.sessions.get(sid).map(|work| (inner.generation, work.clone()))
    }

    /// After a commit of what [`Self::work`] gave at `generation` became visible: forgets every
    /// write of the session up to it (later ones stay).
    pub(crate) fn done(&self, sid: &str, generation: u64) {
        let mut inner = self.lock();
        let Some(work) = inner.sessions.get_mut(sid) else { return };
        work.whole = work.whole.filter(|&g| g > generation);
        work.own = work.own.filter(|&g| g > generation);
        work.entries.retain(|_, g| *g > generation);
        if work.whole.is_none() && work.own.is_none() && work.entries.is_empty() {
            inner.sessions.remove(sid);
        }
    }

    /// Waits up to `timeout` for a write to record itself (at once when one is waiting).
    pub(crate) fn wait(&self, timeout: Duration) {
        let inner = self.lock();
        if inner.sessions.is_empty() {
            let _ = self.wake.wait_timeout(inner, timeout);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_stays_unindexed_until_a_commit_read_it() {
        let pending = Pending::default();
        pending.touch("s", Touched::Entries(vec!["a".into()]));
        let (generation, work) = pending.work("s").expect("work");
        assert_eq!(work.entries.keys().collect::<Vec<_>>(), ["a"]);
        pending.touch("s", Touched::Entries(vec!["b".into()]));
        pending.done("s", generation);
        let left = pending.unindexed();
        assert_eq!(
            left,
            [Unindexed::Entries { session_id: "s".into(), entry_ids: vec!["b".into()] }]
        );
        let (generation, _) = pending.work("s").expect("work");
        pending.done("s", generation);
        assert!(pending.unindexed().is_empty());
        pending.touch("s", Touched::Nothing);
        assert_eq!(pending.len(), 0);
    }
}
