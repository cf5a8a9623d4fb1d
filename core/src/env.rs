//! What the host feeds into the deterministic core: the time, fresh ids and the live limits.

use alloc::format;
use alloc::string::String;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Milliseconds since the Unix epoch, as the host sees them.
pub trait Clock {
    fn now_ms(&self) -> i64;
}

/// Fresh ids for sessions (`s_…`), entries (`e_…`) and attachments (`a_…`).
pub trait IdGen {
    fn session_id(&self) -> String;
    fn entry_id(&self) -> String;
    fn attachment_id(&self) -> String;
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

/// Sequential ids `s_001`, `e_001`, `a_001`… from three independent counters (contract §0.4).
#[derive(Debug, Default)]
pub struct SeqIds {
    sessions: AtomicU32,
    entries: AtomicU32,
    attachments: AtomicU32,
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
}

/// The live limits every call reads from the config snapshot (contract §2.0, §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub default_list_limit: usize,
    pub max_list_limit: usize,
    pub max_attachment_bytes: u64,
    /// Changes kept per session feed (`feed_retention`).
    pub feed_retention: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            default_list_limit: 50,
            max_list_limit: 500,
            max_attachment_bytes: 52_428_800,
            feed_retention: crate::feed::DEFAULT_RETENTION,
        }
    }
}

impl Limits {
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
    /// The `Feed` write recording `changes` now, with the configured retention.
    pub fn feed_write(&self, changes: alloc::vec::Vec<crate::feed::PendingChange>) -> crate::Write {
        crate::Write::Feed {
            timestamp: self.clock.now_ms(),
            retention: self.limits.feed_retention,
            changes,
        }
    }
}

impl core::fmt::Debug for Env<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Env").field("limits", &self.limits).finish_non_exhaustive()
    }
}
