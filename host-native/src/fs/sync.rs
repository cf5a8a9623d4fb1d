//! Durability of the fs store: the `fsync` modes.
//!
//! In the durable modes every write is followed by an `fdatasync` of its session file, on the
//! writing thread and under the session's slot lock, before the write is acknowledged (and before
//! any reader of that session sees it). Group commit is the file system's: writers of different
//! sessions flush concurrently, and a journaling file system (ext4, xfs) commits the flushes that
//! arrive together in one journal transaction and one device cache flush.
//!
//! An earlier `group` mode had one leader flush a whole batch of files with one `syncfs`. On a
//! shared disk that is slower: `syncfs` writes back every dirty page of the file system, other
//! processes' included (here: p90 8 ms, max 31 ms, against p90 4 ms for `fdatasync`), and the
//! followers wait for a flush that started after their write, so up to two flush latencies; in the
//! same run 32 sessions reached 15.3k durable appends/s with it against 18.2k/s with concurrent
//! `fdatasync` (BENCHMARKS.md). A shared write-ahead log flushed once per batch (one file, one
//! `fdatasync`) measured no better than concurrent per-file flushes on this disk (the raw bounds
//! in the same bench), so the log format stays one file per session.

use serde::{Deserialize, Serialize};

/// When the fs store flushes to stable storage.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SyncMode {
    /// `fdatasync` of the session file after every write, before the answer.
    Always,
    /// Durable before the answer, concurrent writers' flushes committed together by the file
    /// system's journal (the default). Since the file system groups them, it flushes exactly like
    /// `always`; the name stays for existing configurations.
    #[default]
    Group,
    /// Never flush: the OS writes back when it likes. Survives a process crash, not a power loss.
    Never,
}
