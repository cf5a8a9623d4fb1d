//! The entry rows a change set leaves behind, written in its transaction right after its log
//! chunk: each entry the change set touched (its JSON, class and active-path position), the
//! active path's moves (the positions past where the new path leaves the old one are cleared,
//! the new path's entries past it get theirs) and the row's `leaf`, `path_len` and `projected`.
//! They are what a cold instance reads a page from (`read.rs`); the log stays the only truth, so
//! whenever the rows were not current before the write (a session an older build wrote), an
//! entry moved to another parent, entries were deleted, or the active path is broken, all of the
//! session's rows are rewritten from the caught-up state instead (or marked not current, so reads
//! replay the log and fail as a walk of the chain does; so too when the rewrite would exceed
//! [`WHOLE_ROWS_MAX_BYTES`]). Each row carries the entry's search terms and timestamp
//! (`search/`).

use deadpool_postgres::GenericClient;
use session_core::path_index::EntryClass;
use session_core::record::SessionState;
use session_core::store::Write;
use session_core::wire::SessionEntry;
use session_core::StoreError;

use super::db::query;
use super::schema::Sql;
use super::search::terms::entry_terms;

/// The most entry JSON (with its search terms) a whole rewrite writes in the transaction of one
/// call (which must end within [`super::CALL_TIMEOUT`]): a larger session an older build wrote
/// keeps its rows marked not current, so its reads replay the log as they did before the rows
/// existed.
pub const WHOLE_ROWS_MAX_BYTES: usize = 16 << 20;

/// What the entry rows need to know of a session before its change set is planned.
#[derive(Debug)]
pub struct Before {
    leaf: Option<String>,
    len: usize,
    /// All rows are rewritten (see the module docs).
    whole: bool,
}

impl Before {
    /// `state` before `writes` are planned on it; `current`: its rows reflected its log.
    pub fn of(state: &SessionState, writes: &[Write], current: bool) -> Before {
        let moves = writes.iter().any(|write| match write {
            Write::DeleteEntries => true,
            Write::PutEntry(new) => {
                state.entries.get(new.id()).is_some_and(|old| old.parent_id() != new.parent_id())
            }
            _ => false,
        });
        let index = state.path_index();
        Before {
            leaf: state.leaf.clone(),
            len: index.len(),
            whole: !current || moves || index.broken().is_some(),
        }
    }
}

/// The parameters of one `project` call (`schema.rs`).
#[derive(Debug, Default)]
pub struct EntryRows {
    whole: bool,
    /// Positions from here on are cleared (`None`: the old path had none past the junction).
    cut: Option<i64>,
    moved: Vec<Vec<u8>>,
    moved_at: Vec<i64>,
    /// The entries to insert or replace.
    upserts: Upserts,
    /// The bytes of their bodies, terms and tsvectors.
    bytes: usize,
    leaf: Option<Vec<u8>>,
    len: i64,
    current: bool,
}

impl EntryRows {
    /// The rows `writes`, planned on a state that was `before`, leave in `state`.
    pub fn after(before: &Before, state: &SessionState, writes: &[Write]) -> EntryRows {
        let index = state.path_index();
        let mut rows = EntryRows {
            leaf: state.leaf.as_ref().map(|leaf| leaf.as_bytes().to_vec()),
            len: index.len() as i64,
            current: index.broken().is_none(),
            ..EntryRows::default()
        };
        let touched = touched_ids(writes);
        let cut = match before.whole {
            true => None,
            false => junction(before, state),
        };
        let Some(cut) = cut.filter(|_| rows.current) else {
            rows.whole = true;
            if !rows.current {
                return rows;
            }
            for entry in state.entries.values() {
                rows.put(state, entry);
                if rows.bytes > WHOLE_ROWS_MAX_BYTES {
                    // Too much for one call: no rows, marked not current (reads replay).
                    rows.take_upserts();
                    rows.current = false;
                    break;
                }
            }
            return rows;
        };
        rows.cut = (cut < before.len).then_some(cut as i64);
        for at in cut..index.len() {
            match index.id_at(at) {
                Some(id) if !touched.contains(&id) => {
                    rows.moved.push(id.as_bytes().to_vec());
                    rows.moved_at.push(at as i64);
                }
                _ => {}
            }
        }
        for id in touched {
            match state.entries.get(id) {
                Some(entry) => rows.put(state, entry),
                // Not kept (a refused or idempotent write names it): the log decides, rebuild.
                None => return EntryRows::whole(state),
            }
        }
        rows
    }

    /// All rows of `state`, replacing what the session had (`migrate`).
    pub fn whole(state: &SessionState) -> EntryRows {
        EntryRows::after(&Before { leaf: None, len: 0, whole: true }, state, &[])
    }

    fn put(&mut self, state: &SessionState, entry: &SessionEntry) {
        let rows = &mut self.upserts;
        rows.ids.push(entry.id().as_bytes().to_vec());
        rows.at.push(state.path_index().position(entry.id()).map(|at| at as i64));
        rows.classes.push(EntryClass::of(entry) as i16);
        let body = serde_json::to_string(entry).unwrap_or_default();
        let terms = entry_terms(entry);
        self.bytes += body.len() + terms.as_ref().map_or(0, |t| t.json.len() + t.lex.len());
        rows.bodies.push(body);
        let (json, lex) = terms.map(|t| (t.json, t.lex)).unzip();
        rows.terms.push(json);
        rows.lex.push(lex);
        rows.timestamps.push(entry.timestamp());
    }

    /// Whether these rows only insert or replace the entries the change set touched (no rewrite,
    /// no position cleared or moved): what one statement writes with its chunk
    /// (`Sql::append_alone`).
    pub fn plain(&self) -> bool {
        !self.whole && self.cut.is_none() && self.moved.is_empty()
    }

    /// The entries to insert or replace, taken out.
    pub fn take_upserts(&mut self) -> Upserts {
        self.bytes = 0;
        std::mem::take(&mut self.upserts)
    }

    /// The session row's columns these rows set: `leaf`, `path_len` and whether they are
    /// current (`append_chunk` sets them with the chunk's number).
    pub fn row(&self) -> (&Option<Vec<u8>>, &i64, &bool) {
        (&self.leaf, &self.len, &self.current)
    }

    /// Writes these rows for session `key` (after its chunk, in the same transaction), and with
    /// `row` the session row's columns too ([`EntryRows::row`]; else the chunk's statement did).
    pub async fn write(
        &self,
        client: &impl GenericClient,
        sql: &Sql,
        key: &[u8],
        row: bool,
    ) -> Result<(), StoreError> {
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 16] = [
            &key,
            &self.whole,
            &self.cut,
            &self.moved,
            &self.moved_at,
            &self.upserts.ids,
            &self.upserts.at,
            &self.upserts.classes,
            &self.upserts.bodies,
            &self.leaf,
            &self.len,
            &self.current,
            &row,
            &self.upserts.terms,
            &self.upserts.timestamps,
            &self.upserts.lex,
        ];
        query(client, "write the entry rows", &sql.project, &params).await?;
        Ok(())
    }
}

/// The entry rows one statement inserts or replaces, column by column.
#[derive(Debug, Default)]
pub struct Upserts {
    pub ids: Vec<Vec<u8>>,
    pub at: Vec<Option<i64>>,
    pub classes: Vec<i16>,
    pub bodies: Vec<String>,
    pub terms: Vec<Option<String>>,
    pub lex: Vec<Option<String>>,
    pub timestamps: Vec<i64>,
}

/// Ids of the entries `writes` may change.
fn touched_ids(writes: &[Write]) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    for write in writes {
        let id = match write {
            Write::PutEntry(entry) | Write::CommitAppend { entry, .. } => entry.id(),
            Write::AppendDelta { delta, .. } => delta.entry_id.as_str(),
            _ => continue,
        };
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// How many leading positions the active path of `state` shares with the one `before` had,
/// found walking back from the old leaf (entries keep their parents, else `before.whole`); `None`
/// when the old path cannot be walked in `state`.
fn junction(before: &Before, state: &SessionState) -> Option<usize> {
    let index = state.path_index();
    let mut next = before.leaf.as_deref();
    let mut len = before.len;
    while let Some(id) = next {
        if len == 0 {
            return None;
        }
        if index.id_at(len - 1) == Some(id) {
            return Some(len);
        }
        next = state.entries.get(id)?.parent_id();
        len -= 1;
    }
    (len == 0).then_some(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use session_core::conformance::message_entry;
    use session_core::record::Record;

    fn state_of(entries: usize, text_bytes: usize) -> SessionState {
        let mut state = SessionState::default();
        let text = "x".repeat(text_bytes);
        for i in 0..entries {
            let parent = (i > 0).then(|| format!("e{}", i - 1));
            let entry = message_entry(&format!("e{i}"), parent.as_deref(), i as i64, &text);
            state.apply(&Record::Entry { entry });
        }
        state.apply(&Record::Leaf { entry_id: Some(format!("e{}", entries - 1)) });
        state
    }

    #[test]
    fn a_whole_rewrite_writes_every_entry_with_its_position() {
        let rows = EntryRows::whole(&state_of(5, 10));
        assert!(rows.whole && rows.current);
        assert_eq!(rows.upserts.ids.len(), 5);
        assert_eq!(rows.len, 5);
        let mut at: Vec<Option<i64>> = rows.upserts.at.clone();
        at.sort();
        assert_eq!(at, (0..5).map(Some).collect::<Vec<_>>());
    }

    #[test]
    fn a_whole_rewrite_too_large_for_one_call_marks_the_rows_stale() {
        let rows = EntryRows::whole(&state_of(17, 1 << 20));
        assert!(rows.whole && !rows.current, "rows past the cap are not current");
        assert!(rows.upserts.ids.is_empty() && rows.upserts.bodies.is_empty());
        assert_eq!(rows.len, 17, "the row still names the path's length");
    }
}
