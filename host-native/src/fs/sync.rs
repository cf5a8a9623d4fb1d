//! Durability of the fs store: the `fsync` modes.
//!
//! In the durable modes a write is acknowledged (and a reader of its session answered) only
//! after an `fdatasync` of its session file that started after the write returned. `always`
//! runs that flush on the writing thread under the session's slot lock, one per write. `group`
//! (the default, issue 16) commits a session's writes in groups (`flush.rs`): a write lands
//! under the slot lock, the worker releases the session lock, and the first writer that finds
//! no flush running leads one `fdatasync` covering every write landed so far; the session's next
//! writers are decided and written meanwhile and share the next flush (on a blocking thread; a
//! write that is the worker's only call in progress flushes on its own thread, `worker.rs`,
//! since nothing could share its flush and the hand-off costs more). Events are published in
//! lock order all the same (`locks.rs`). Across sessions, flushes run concurrently, and a
//! journaling file system (ext4, xfs) commits the flushes that arrive together in one journal
//! transaction and one device cache flush.
//!
//! An earlier `group` mode had one leader flush a whole batch of files with one `syncfs`. On a
//! shared disk that is slower: `syncfs` writes back every dirty page of the file system, other
//! processes' included (here: p90 8 ms, max 31 ms, against p90 4 ms for `fdatasync`), and the
//! followers wait for a flush that started after their write, so up to two flush latencies; in the
//! same run 32 sessions reached 15.3k durable appends/s with it against 18.2k/s with concurrent
//! `fdatasync` (BENCHMARKS.md). A shared write-ahead log flushed once per batch measured no better
//! than concurrent per-file flushes in the disk's raw bounds, but those measure flush latency:
//! through the engine the worker is CPU-bound, and a prototype with one preallocated shared file
//! and one flusher thread closed most of the gap (BENCHMARKS.md, "A shared journal, measured
//! before it is built"; the design in `architecture/fs-store.md`). Not built yet: the log format
//! stays one file per session.

use serde::{Deserialize, Serialize};

/// When the fs store flushes to stable storage.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SyncMode {
    /// `fdatasync` of the session file after every write, before the answer, one per write.
    Always,
    /// Durable before the answer; the writes of one session that arrive while its flush runs
    /// share the next one (group commit, the default).
    #[default]
    Group,
    /// Never flush: the OS writes back when it likes. Survives a process crash, not a power loss.
    Never,
}
