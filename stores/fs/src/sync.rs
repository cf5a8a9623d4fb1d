//! Durability of the fs store: the `fsync` modes.
//!
//! In the durable modes a write is acknowledged (and a reader of its session answered) only
//! after an `fdatasync` that started after the write returned and covers it. `always` syncs the
//! session file on the writing thread under the session's slot lock, one per write. `group` (the
//! default, issue 16) writes the session file, then the same bytes as a record in the data_dir's
//! journal (`journal/`), and the worker releases the session lock; the journal's flusher thread
//! syncs the journal whenever it holds unflushed records, so one `fdatasync` covers the writes of
//! every session that arrived meanwhile (`flush.rs` keeps each session's durable count; a write
//! that is the worker's only call in progress leads the flush on its own thread, `worker.rs`,
//! since nothing could share it and the hand-off costs more). Events are published in lock order
//! all the same (`locks.rs`).
//!
//! An earlier `group` mode had one leader flush a whole batch of files with one `syncfs`. On a
//! shared disk that is slower: `syncfs` writes back every dirty page of the file system, other
//! processes' included (here: p90 8 ms, max 31 ms, against p90 4 ms for `fdatasync`), and the
//! followers wait for a flush that started after their write, so up to two flush latencies; in the
//! same run 32 sessions reached 15.3k durable appends/s with it against 18.2k/s with concurrent
//! `fdatasync` (in the history of BENCHMARKS.md). The per-file flushes that replaced it cost the worker an
//! `fdatasync` per write, each writing the inode of a growing file; through the engine the worker
//! is CPU-bound, and the journal (one zero-filled file, one flush per batch) took 32 writers on
//! own sessions from 0.62–0.65× to 0.85–0.90× of the schema no-op (BENCHMARKS.md, "One journal for all
//! sessions").

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

/// `always` | `group` | `never` (the worker's `--fs-sync` flag).
impl std::str::FromStr for SyncMode {
    type Err = String;

    fn from_str(text: &str) -> Result<SyncMode, String> {
        match text {
            "always" => Ok(SyncMode::Always),
            "group" => Ok(SyncMode::Group),
            "never" => Ok(SyncMode::Never),
            other => Err(format!("unknown fs sync mode {other:?} (always | group | never)")),
        }
    }
}
