//! `session-manager erase (--session ID | --metadata KEY=VALUE… | --all) [--data-dir DIR |
//! --postgres-url URL]`: `session::erase` run offline on a data_dir or a database, one session
//! at a time behind a progress bar. Each session's delete is its own transaction, so an erase
//! killed midway leaves whole sessions erased or untouched and a rerun goes on with the ones that
//! still match; the store's traces (the fs journal and catalog, postgres's outbox metadata) are
//! erased at the end of every run, also a rerun that finds nothing left. No worker may have the
//! data_dir open meanwhile (a worker on postgres may run: each delete takes the row's lock).
//! Offline, no `session::deleted` is delivered: no worker runs to publish it.

use std::fmt;

use indicatif::{ProgressBar, ProgressStyle};
use session_core::ops::erase::{self, Progress};
use session_core::wire::EraseRequest;
use session_core::{Env, Limits, Store};

use crate::clock::{random_ids, SystemClock};

/// What an offline erase did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Erased {
    pub sessions: u64,
    pub bytes: u64,
}

impl fmt::Display for Erased {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} sessions, {} bytes", self.sessions, self.bytes)
    }
}

/// The request of the CLI's flags: `--metadata` pairs (`KEY=VALUE`, the value as JSON when it
/// parses, else as a string).
pub fn request(
    session: Option<String>,
    metadata: &[String],
    all: bool,
) -> Result<EraseRequest, String> {
    let metadata = crate::offline::metadata_pairs(metadata)?;
    Ok(EraseRequest { session_id: session, metadata, all })
}

/// Erases what `req` names from `store`, session by session, with a progress bar (hidden when
/// `quiet`).
pub fn run(store: &dyn Store, req: &EraseRequest, quiet: bool) -> Result<Erased, String> {
    let ids = random_ids();
    let env = Env { clock: &SystemClock, ids: &ids, limits: Limits::default() };
    let bar = match quiet {
        true => ProgressBar::hidden(),
        false => ProgressBar::new(0),
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} sessions erased, {elapsed} ({eta} left)",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let erased = erase::run_with(store, &env, req, &mut |step| match step {
        Progress::Matched(n) => bar.set_length(n as u64),
        Progress::Erased => bar.inc(1),
    });
    bar.finish_and_clear();
    let erased = erased.map_err(|e| e.to_string())?.response;
    Ok(Erased { sessions: erased.erased, bytes: erased.bytes })
}
