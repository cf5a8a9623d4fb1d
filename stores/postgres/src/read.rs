//! Reads of one session from its entry rows (`entry_rows.rs`): an entry by id, the active leaf,
//! where an entry is on the active path and a window of it, each one statement that also checks
//! the rows reflect the session's log (`projected = version`). So a cold instance answers a
//! page of the active path in O(page + log N), replaying nothing and caching nothing. Each
//! answers `None` when it cannot answer from the rows — rows not current, or a path to a leaf
//! other than the active one — and the store then replays the log (`PgStore::with_state`).

use session_core::path::{PathSelect, PathSpot};
use session_core::path_index::EntryClass;
use session_core::wire::SessionEntry;
use session_core::StoreError;
use tokio_postgres::Row;

use super::{decode, Param, PgStore};

/// What one statement over the entry rows found: `None` when they are not current.
type FromRows<T> = Result<Option<T>, StoreError>;

impl PgStore {
    /// The active leaf of `sid` from its row.
    pub(super) fn leaf_from_rows(&self, sid: &str) -> FromRows<Option<String>> {
        let rows = self.rows(|s| &s.rows_leaf, vec![Param::id(sid)], |row| leaf_of(row, 0))?;
        Ok(rows.into_iter().next())
    }

    /// Entry `eid` of `sid`.
    pub(super) fn entry_from_rows(&self, sid: &str, eid: &str) -> FromRows<Option<SessionEntry>> {
        let params = vec![Param::id(sid), Param::id(eid)];
        let rows = self.rows(|s| &s.rows_entry, params, |row| entry_of(row, 0))?;
        Ok(rows.into_iter().next())
    }

    /// [`session_core::Store::path_locate`] when `leaf` is the active leaf.
    pub(super) fn locate_from_rows(
        &self,
        sid: &str,
        leaf: &str,
        id: Option<&str>,
    ) -> FromRows<PathSpot> {
        let params = vec![Param::id(sid), Param::Nullable(id.map(|id| id.as_bytes().to_vec()))];
        let rows = self.rows(
            |s| &s.rows_locate,
            params,
            |row| {
                let at: Option<i64> = row.get(2);
                let class = row.get::<_, Option<i16>>(3).and_then(|c| u8::try_from(c).ok());
                let at = at.zip(class.and_then(EntryClass::from_index));
                let len = row.get::<_, i64>(1) as usize;
                Ok((leaf_of(row, 0)?, PathSpot { len, at: at.map(|(at, c)| (at as usize, c)) }))
            },
        )?;
        Ok(rows.into_iter().next().and_then(|(active, spot)| on_active(active, leaf, spot)))
    }

    /// [`session_core::Store::path_select`] when `leaf` is the active leaf.
    pub(super) fn select_from_rows(
        &self,
        sid: &str,
        leaf: &str,
        query: &PathSelect,
    ) -> FromRows<Vec<(usize, SessionEntry)>> {
        let classes = query.classes.classes().map(|class| class as i16).collect();
        let from = query.from.min(i64::MAX as usize) as i64;
        let limit = query.limit.min(i64::MAX as usize) as i64;
        let params =
            vec![Param::id(sid), Param::Int(from), Param::Classes(classes), Param::Int(limit)];
        let backward = query.backward;
        let rows = self.rows(
            move |s| if backward { &s.rows_before } else { &s.rows_after },
            params,
            |row| {
                let found = match row.get::<_, Option<i64>>(1) {
                    Some(at) => {
                        let entry = entry_of(row, 2)?;
                        let entry = entry.ok_or_else(|| StoreError::Corrupt("no entry".into()))?;
                        Some((at as usize, entry))
                    }
                    None => None,
                };
                Ok((leaf_of(row, 0)?, found))
            },
        )?;
        let Some(active) = rows.first().map(|(active, _)| active.clone()) else { return Ok(None) };
        let mut found: Vec<(usize, SessionEntry)> =
            rows.into_iter().filter_map(|(_, found)| found).collect();
        if backward {
            found.reverse();
        }
        Ok(on_active(active, leaf, found))
    }
}

/// `answer` when `leaf` is the `active` leaf the rows index.
fn on_active<T>(active: Option<String>, leaf: &str, answer: T) -> Option<T> {
    (active.as_deref() == Some(leaf)).then_some(answer)
}

fn leaf_of(row: &Row, column: usize) -> Result<Option<String>, StoreError> {
    row.get::<_, Option<Vec<u8>>>(column)
        .map(|bytes| {
            String::from_utf8(bytes)
                .map_err(|e| StoreError::Corrupt(format!("postgres: an active leaf: {e}")))
        })
        .transpose()
}

fn entry_of(row: &Row, column: usize) -> Result<Option<SessionEntry>, StoreError> {
    row.get::<_, Option<&str>>(column).map(|text| decode("an entry row", text)).transpose()
}
