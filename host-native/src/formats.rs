//! `session-manager import --from pi|claude-code|openai|ui-message FILE…` and `export --to …`:
//! other agents' files into a data_dir or a database and back, offline, through the same core
//! operations as `session::import` / `session::export` ([`session_core::ops::import`],
//! [`session_core::ops::export`]), one transaction per session, with a progress bar.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use indicatif::{ProgressBar, ProgressStyle};
use session_core::formats::Format;
use session_core::ops::{export, import};
use session_core::wire::{ExportRequest, ImportOutcome, ImportRequest, ImportResponse, Object};
use session_core::{Env, Limits, Store};

use crate::clock::{random_ids, SystemClock};

/// What happened to one file.
#[derive(Debug)]
pub struct FileImport {
    pub file: PathBuf,
    /// The session it became, or why it did not.
    pub result: Result<ImportResponse, String>,
}

impl fmt::Display for FileImport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        let done = match &self.result {
            Err(e) => return write!(f, "{file}: not imported: {e}"),
            Ok(done) => done,
        };
        let what = match done.outcome {
            ImportOutcome::Created => "created",
            ImportOutcome::Replaced => "replaced",
            ImportOutcome::Unchanged => "already imported, unchanged",
            ImportOutcome::Exists => "skipped: another session of this id exists (--replace)",
        };
        write!(f, "{file} → {} ({} entries): {what}", done.session_id, done.entries)?;
        for skipped in &done.skipped {
            write!(f, "\n  line {} left out: {}", skipped.line, skipped.reason)?;
        }
        Ok(())
    }
}

/// A file's modification time in milliseconds (0 when unknown): the time of what its format
/// gives no time, so importing it again finds it unchanged.
fn modified_ms(path: &Path) -> i64 {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn bar(len: usize, what: &str, quiet: bool) -> ProgressBar {
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(len as u64) };
    let template = format!("{{bar:40}} {{pos}}/{{len}} {what}, {{elapsed}} ({{eta}} left) {{msg}}");
    bar.set_style(
        ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Where imported sessions go and how.
pub struct ImportTo<'a> {
    pub store: &'a dyn Store,
    /// Replace a stored session of the same id with other content.
    pub replace: bool,
    /// Pairs added to each imported session's metadata.
    pub metadata: Option<Object>,
}

impl fmt::Debug for ImportTo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImportTo")
            .field("replace", &self.replace)
            .field("metadata", &self.metadata)
            .finish_non_exhaustive()
    }
}

/// Imports each file as one session of `into.store`; a file that fails leaves nothing of its
/// session behind and the others go on.
pub fn import_files(
    into: &ImportTo<'_>,
    format: Format,
    files: &[PathBuf],
    quiet: bool,
) -> Vec<FileImport> {
    let ids = random_ids();
    let env = Env { clock: &SystemClock, ids: &ids, limits: Limits::default() };
    let bar = bar(files.len(), "files", quiet);
    let mut done = Vec::new();
    for file in files {
        bar.set_message(file.display().to_string());
        let result = import_file(into, &env, format, file);
        done.push(FileImport { file: file.clone(), result });
        bar.inc(1);
    }
    bar.finish_and_clear();
    done
}

fn import_file(
    into: &ImportTo<'_>,
    env: &Env<'_>,
    format: Format,
    file: &Path,
) -> Result<ImportResponse, String> {
    let data = fs::read(file).map_err(|e| format!("read: {e}"))?;
    let data = String::from_utf8(data).map_err(|e| format!("not UTF-8 text: {e}"))?;
    let req = ImportRequest {
        format,
        data,
        file_name: Some(file.display().to_string()),
        modified: Some(modified_ms(file)),
        metadata: into.metadata.clone(),
        replace: into.replace,
    };
    let conversation = import::conversation(env, &req).map_err(|e| e.to_string())?;
    drop(req);
    let outcome = import::store_conversation(into.store, env, &conversation, into.replace);
    outcome.map(|o| o.response).map_err(|e| e.to_string())
}

/// One session written out.
#[derive(Debug)]
pub struct Exported {
    pub session_id: String,
    pub file: PathBuf,
    pub entries: u64,
}

impl fmt::Display for Exported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} → {} ({} entries)", self.session_id, self.file.display(), self.entries)
    }
}

/// Writes `session` (every session when `None`) of `store` in `format` into `out`.
pub fn export_sessions(
    store: &dyn Store,
    format: Format,
    session: Option<String>,
    out: &Path,
    quiet: bool,
) -> Result<Vec<Exported>, String> {
    let ids = random_ids();
    let env = Env { clock: &SystemClock, ids: &ids, limits: Limits::default() };
    let sessions = match session {
        Some(id) => vec![id],
        None => {
            let mut all: Vec<String> = store
                .list_metas()
                .map_err(|e| format!("listing sessions: {e}"))?
                .into_iter()
                .map(|m| m.session_id)
                .collect();
            all.sort();
            all
        }
    };
    fs::create_dir_all(out).map_err(|e| format!("create {}: {e}", out.display()))?;
    let bar = bar(sessions.len(), "sessions", quiet);
    let mut done = Vec::new();
    for session_id in sessions {
        let req = ExportRequest { session_id: session_id.clone(), format };
        let written = export::decide(store, &env, req).map_err(|e| e.to_string())?;
        let file = out.join(&written.file_name);
        fs::write(&file, written.data).map_err(|e| format!("write {}: {e}", file.display()))?;
        done.push(Exported { session_id, file, entries: written.entries });
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(done)
}
