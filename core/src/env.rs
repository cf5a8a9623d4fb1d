//! What the host feeds into the deterministic core: the time, fresh ids and the live limits.

use alloc::format;
use alloc::string::String;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Milliseconds since the Unix epoch, as the host sees them.
pub trait Clock {
    fn now_ms(&self) -> i64;
}

/// Fresh ids for sessions (`s_…`), entries (`e_…`), attachments (`a_…`) and feed epochs (`f_…`:
/// one per incarnation of a session id, so a re-created id's feed is told apart from the old one).
pub trait IdGen {
    fn session_id(&self) -> String;
    fn entry_id(&self) -> String;
    fn attachment_id(&self) -> String;
    fn epoch_id(&self) -> String;
}

/// A clock that only moves when told to; starts at 1 000 000 ms (contract §0.4).
#[derive(Debug)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    pub const START_MS: i64 = 1_000_000;

    pub fn new() -> Self {
        ManualClock(AtomicU64::new(Self::START_MS as u64))
    }

    pub fn set(&self, ms: i64) {
        self.0.store(ms as u64, Ordering::SeqCst);
    }

    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms as u64, Ordering::SeqCst);
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst) as i64
    }
}

/// Sequential ids `s_001`, `e_001`, `a_001`, `f_001`… from independent counters (contract §0.4).
#[derive(Debug, Default)]
pub struct SeqIds {
    sessions: AtomicU32,
    entries: AtomicU32,
    attachments: AtomicU32,
    epochs: AtomicU32,
}

impl SeqIds {
    pub fn new() -> Self {
        SeqIds::default()
    }

    fn next(counter: &AtomicU32, prefix: &str) -> String {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        format!("{prefix}_{n:03}")
    }
}

impl IdGen for SeqIds {
    fn session_id(&self) -> String {
        Self::next(&self.sessions, "s")
    }
    fn entry_id(&self) -> String {
        Self::next(&self.entries, "e")
    }
    fn attachment_id(&self) -> String {
        Self::next(&self.attachments, "a")
    }
    fn epoch_id(&self) -> String {
        Self::next(&self.epochs, "f")
    }
}

/// Production ids `<prefix>_<uuid v4 simple>` built from 128 random bits the host supplies.
#[derive(Debug)]
pub struct RandomIds<R> {
    random: R,
}

impl<R: Fn() -> u128> RandomIds<R> {
    pub fn new(random: R) -> Self {
        RandomIds { random }
    }

    fn next(&self, prefix: &str) -> String {
        format!("{prefix}_{:032x}", uuid_v4_bits((self.random)()))
    }
}

/// Sets the version (4) and variant (RFC 4122) bits of 128 random bits.
pub fn uuid_v4_bits(random: u128) -> u128 {
    (random & !(0xF << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62)
}

impl<R: Fn() -> u128> IdGen for RandomIds<R> {
    fn session_id(&self) -> String {
        self.next("s")
    }
    fn entry_id(&self) -> String {
        self.next("e")
    }
    fn attachment_id(&self) -> String {
        self.next("a")
    }
    /// 64 random bits are plenty to tell one session id's incarnations apart, and every feed
    /// change carries the epoch: `f_` and 16 hex digits.
    fn epoch_id(&self) -> String {
        format!("f_{:016x}", (self.random)() >> 64)
    }
}

/// The live limits every call reads from the config snapshot (contract §2.0, §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub default_list_limit: usize,
    pub max_list_limit: usize,
    pub max_attachment_bytes: u64,
    /// Changes kept per session feed (`feed_retention`).
    pub feed_retention: usize,
    /// Payload bytes kept per session feed (`feed_retention_bytes`).
    pub feed_retention_bytes: u64,
    /// Seconds a trashed session is kept before the sweep purges it (`trash_retention_secs`).
    pub trash_retention_secs: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            default_list_limit: 50,
            max_list_limit: 500,
            max_attachment_bytes: 52_428_800,
            feed_retention: crate::feed::DEFAULT_RETENTION,
            feed_retention_bytes: crate::feed::DEFAULT_RETENTION_BYTES,
            trash_retention_secs: crate::lifecycle::DEFAULT_TRASH_RETENTION_SECS,
        }
    }
}

impl Limits {
    /// The feed retention these limits set.
    pub fn feed_retention(&self) -> crate::feed::Retention {
        crate::feed::Retention { changes: self.feed_retention, bytes: self.feed_retention_bytes }
    }

    /// [`Limits::trash_retention_secs`] in milliseconds.
    pub fn trash_retention_ms(&self) -> i64 {
        i64::try_from(self.trash_retention_secs.saturating_mul(1000)).unwrap_or(i64::MAX)
    }

    /// `clamp(limit ?? default, 1, max)`.
    pub fn page_size(&self, requested: Option<usize>) -> usize {
        requested.unwrap_or(self.default_list_limit).clamp(1, self.max_list_limit.max(1))
    }
}

/// Everything one call needs from its host besides the store.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    pub clock: &'a dyn Clock,
    pub ids: &'a dyn IdGen,
    pub limits: Limits,
}

impl Env<'_> {
    /// The `Feed` write recording `changes` now, with the configured retention. A change set that
    /// creates its session (a `session::created` among them) starts the feed's new epoch.
    pub fn feed_write(&self, changes: alloc::vec::Vec<crate::feed::PendingChange>) -> crate::Write {
        let creates = changes.iter().any(crate::feed::PendingChange::creates);
        crate::Write::Feed {
            timestamp: self.clock.now_ms(),
            retention: self.limits.feed_retention(),
            epoch: creates.then(|| self.ids.epoch_id()),
            changes,
        }
    }
}

impl core::fmt::Debug for Env<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Env").field("limits", &self.limits).finish_non_exhaustive()
    }
}

/// Ids drawn again the same: a decision a backend takes again ([`crate::Store::transact`]: an
/// optimistic one whose state moved), or a host's call rerun after a try it threw away (the
/// worker's `Backend::try_here` that refused), gets, in order, the ids the earlier run drew,
/// then fresh ones — so a decision taken twice answers what it would have answered once. `G`
/// is where fresh ids come from (`&dyn IdGen`, or an `Arc` a host moves between threads; with
/// `std` a `Redraw` is `Sync` when `G` is).
pub struct Redraw<G> {
    ids: G,
    /// The ids drawn so far and where the current run is in them.
    drawn: Lock<(alloc::vec::Vec<(u8, String)>, usize)>,
}

#[cfg(feature = "std")]
type Lock<T> = std::sync::Mutex<T>;
#[cfg(not(feature = "std"))]
type Lock<T> = core::cell::RefCell<T>;

impl<G> core::fmt::Debug for Redraw<G> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Redraw").field("drawn", &self.drawn).finish_non_exhaustive()
    }
}

impl<G: IdGen> Redraw<G> {
    pub fn new(ids: G) -> Self {
        Redraw { ids, drawn: Default::default() }
    }

    /// A decision starts (again): the ids drawn so far are handed out first.
    pub fn again(&self) {
        self.with(|(_, next)| *next = 0);
    }

    fn with<R>(&self, f: impl FnOnce(&mut (alloc::vec::Vec<(u8, String)>, usize)) -> R) -> R {
        #[cfg(feature = "std")]
        let mut guard = self.drawn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        #[cfg(not(feature = "std"))]
        let mut guard = self.drawn.borrow_mut();
        f(&mut guard)
    }

    fn id(&self, kind: u8, fresh: impl FnOnce() -> String) -> String {
        self.with(|(drawn, next)| {
            let at = *next;
            *next += 1;
            match drawn.get(at) {
                Some((k, id)) if *k == kind => id.clone(),
                _ => {
                    let id = fresh();
                    drawn.truncate(at);
                    drawn.push((kind, id.clone()));
                    id
                }
            }
        })
    }
}

impl<G: IdGen> IdGen for Redraw<G> {
    fn session_id(&self) -> String {
        self.id(0, || self.ids.session_id())
    }
    fn entry_id(&self) -> String {
        self.id(1, || self.ids.entry_id())
    }
    fn attachment_id(&self) -> String {
        self.id(2, || self.ids.attachment_id())
    }
    fn epoch_id(&self) -> String {
        self.id(3, || self.ids.epoch_id())
    }
}

impl<G: IdGen + ?Sized> IdGen for &G {
    fn session_id(&self) -> String {
        (**self).session_id()
    }
    fn entry_id(&self) -> String {
        (**self).entry_id()
    }
    fn attachment_id(&self) -> String {
        (**self).attachment_id()
    }
    fn epoch_id(&self) -> String {
        (**self).epoch_id()
    }
}

impl<G: IdGen + ?Sized> IdGen for alloc::sync::Arc<G> {
    fn session_id(&self) -> String {
        (**self).session_id()
    }
    fn entry_id(&self) -> String {
        (**self).entry_id()
    }
    fn attachment_id(&self) -> String {
        (**self).attachment_id()
    }
    fn epoch_id(&self) -> String {
        (**self).epoch_id()
    }
}

#[cfg(test)]
mod redraw_tests {
    use super::*;

    #[test]
    fn a_decision_taken_again_draws_the_same_ids_then_fresh_ones() {
        let ids = SeqIds::default();
        let redraw = Redraw::new(&ids);
        redraw.again();
        let first = (redraw.session_id(), redraw.entry_id());
        redraw.again();
        assert_eq!((redraw.session_id(), redraw.entry_id()), first);
        assert_ne!(redraw.entry_id(), first.1, "then a fresh one");
        redraw.again();
        assert_ne!(redraw.attachment_id(), first.0, "another kind at a place: fresh");
    }
}
