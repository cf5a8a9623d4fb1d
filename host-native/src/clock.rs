//! What the host feeds the core: wall-clock time, uuid-v4 randomness for ids, and the same ids
//! again for the rerun of a thrown-away inline try ([`Redraw`]).

use session_core::{Clock, IdGen, RandomIds};

/// The system clock, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        now_ms()
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn random_u128() -> u128 {
    uuid::Uuid::new_v4().as_u128()
}

/// Production ids: `s_` / `e_` / `a_` + a v4 uuid in simple form.
pub fn random_ids() -> RandomIds<fn() -> u128> {
    RandomIds::new(random_u128 as fn() -> u128)
}

/// Ids handed out again: records the ids a call draws on a try that is then thrown away (the
/// fs store's inline view refused, `fs/inline.rs`) and, after [`Redraw::replay`], gives the same
/// ones, in order, to the rerun. A refused try changes nothing, not even the ids a call gets.
pub struct Redraw {
    ids: std::sync::Arc<dyn IdGen + Send + Sync>,
    drawn: std::sync::Mutex<std::collections::VecDeque<(IdKind, String)>>,
    replaying: std::sync::atomic::AtomicBool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdKind {
    Session,
    Entry,
    Attachment,
}

impl std::fmt::Debug for Redraw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redraw").field("drawn", &self.drawn).finish_non_exhaustive()
    }
}

impl Redraw {
    pub fn new(ids: std::sync::Arc<dyn IdGen + Send + Sync>) -> Self {
        Redraw { ids, drawn: Default::default(), replaying: false.into() }
    }

    /// From now on, hand out the recorded ids first.
    pub fn replay(&self) {
        self.replaying.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    fn id(&self, kind: IdKind, fresh: impl FnOnce() -> String) -> String {
        let mut drawn = self.drawn.lock().unwrap_or_else(|p| p.into_inner());
        if !self.replaying.load(std::sync::atomic::Ordering::Relaxed) {
            let id = fresh();
            drawn.push_back((kind, id.clone()));
            return id;
        }
        match drawn.front() {
            Some((k, _)) if *k == kind => drawn.pop_front().map(|(_, id)| id).unwrap_or_default(),
            _ => fresh(),
        }
    }
}

impl IdGen for Redraw {
    fn session_id(&self) -> String {
        self.id(IdKind::Session, || self.ids.session_id())
    }
    fn entry_id(&self) -> String {
        self.id(IdKind::Entry, || self.ids.entry_id())
    }
    fn attachment_id(&self) -> String {
        self.id(IdKind::Attachment, || self.ids.attachment_id())
    }
}

#[cfg(test)]
mod redraw_tests {
    use super::*;

    #[test]
    fn a_rerun_gets_the_ids_the_thrown_away_try_drew() {
        let redraw = Redraw::new(std::sync::Arc::new(session_core::SeqIds::default()));
        let first = (redraw.entry_id(), redraw.session_id());
        redraw.replay();
        assert_eq!((redraw.entry_id(), redraw.session_id()), first);
        assert_ne!(redraw.entry_id(), first.0, "then fresh ones");
    }
}
