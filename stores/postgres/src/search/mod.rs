//! The postgres store's search index (issue 39): every entry row and session row keeps its terms
//! with their counts (`terms.rs`), written by the transaction that writes the row, so every
//! instance finds every write acknowledged before its search began. A GIN index over the terms
//! as a tsvector (`schema.rs`, version 7) finds the documents that hold every term of a query
//! (first, on their own: the planner cannot guess how many entries a session row joins); the
//! statement bounds each one's score from the counts — a word its count, a prefix the count its
//! prefix key keeps, a phrase the lowest count of its pairs of neighbours, summed over the
//! items, as the core's [`Candidate::bound`] asks. When those bounds are the scores (words,
//! prefixes of up to eight characters, phrases of two words: [`Found::exact`]) and the core
//! asks ([`Wanted::keep`]), it ranks them and keeps the best page (SQL's `rank()` keeps every
//! one tied with the last); a bound of 0 is no candidate at all. For a lone word it first finds
//! the highest tier of the word's count that holds a page (`probe_sql`), so a common word reads
//! the rows of that tier only. What it does not cover is named
//! unindexed: sessions whose entry rows are not current, rows without terms (written before
//! version 7, or a text with too many terms). Both statements read one snapshot.
//!
//! The statements are `statements.rs`'s; [`read`] runs them in one read-only snapshot.

mod statements;
pub mod terms;

use std::collections::BTreeMap;

use session_core::path_index::EntryClass;
use session_core::search::index::{Candidate, Doc, Found, Resolve, SearchIndex, Unindexed, Wanted};
use session_core::search::text::entry_text;
use session_core::search::Query;
use session_core::wire::{SearchKind, SessionEntry, SessionMeta};
use session_core::StoreError;
use tokio_postgres::types::ToSql;
use tokio_postgres::{IsolationLevel, Row};

use super::db::db_error;
use super::{decode, PgStore};
use statements::{candidates_sql, probe_sql, unindexed_sql};
use terms::TIERS;

/// The class a session's own text has in the statement's rows.
pub(super) const SESSION_CLASS: i16 = -1;

impl SearchIndex for PgStore {
    fn find(&self, query: &Query, wanted: &Wanted<'_>) -> Result<Found<'_>, StoreError> {
        self.search_find(query, wanted)
    }
}

impl PgStore {
    /// [`SearchIndex::find`], its answer owning all it holds (wrappers in tests forward it).
    pub fn search_find(
        &self,
        query: &Query,
        wanted: &Wanted<'_>,
    ) -> Result<Found<'static>, StoreError> {
        let lookup = terms::Lookup::of(query);
        let exact = lookup.exact;
        let keep = wanted.keep.filter(|_| exact);
        let schema = self.sql.schema.clone();
        let tiers = lookup.tiers.filter(|_| keep.is_some());
        let candidates = candidates_sql(&schema, &lookup.items, keep.is_some(), false);
        let unindexed = unindexed_sql(&schema);
        let classes: Vec<i16> = EntryClass::EVERY
            .into_iter()
            .filter(|class| {
                let (kind, role) = class.search_kind();
                wanted.admits_kind(kind, role)
            })
            .map(|class| class as i16)
            .collect();
        let after = wanted.after.map(|(score, at)| (i64::try_from(score).unwrap_or(i64::MAX), at));
        let keys: Vec<String> = lookup.items.iter().flatten().cloned().collect();
        let mut params: Params = vec![
            Box::new(lookup.tsquery.clone()),
            Box::new(classes.clone()),
            Box::new(wanted.since),
            Box::new(wanted.until),
            Box::new(wanted.admits_kind(SearchKind::Session, None)),
        ];
        if let Some(keep) = keep {
            params.push(Box::new(i64::try_from(keep).unwrap_or(i64::MAX)));
            params.push(Box::new(after.map(|a| a.0)));
            params.push(Box::new(after.map(|a| a.1)));
        }
        params.extend(keys.iter().map(|key| Box::new(key.clone()) as Box<dyn ToSql + Send + Sync>));
        // A lone word's tier: `probe_sql`'s parameters, then the candidates' last one.
        let probe = tiers.map(|mut tiers| {
            // Last, the word itself: whether it holds a page at all.
            tiers.push(lookup.tsquery.clone());
            let mut probe: Params = vec![
                Box::new(tiers),
                Box::new(classes),
                Box::new(wanted.since),
                Box::new(wanted.until),
                Box::new(keep.map(|keep| i64::try_from(keep).unwrap_or(i64::MAX))),
                Box::new(after.map(|a| a.0)),
                Box::new(after.map(|a| a.1)),
            ];
            probe.extend(keys.into_iter().map(|key| Box::new(key) as Box<dyn ToSql + Send + Sync>));
            let tiered = candidates_sql(&schema, &lookup.items, true, true);
            Probe { sql: probe_sql(&schema, &lookup.items), params: probe, tiered }
        });
        let tsquery = lookup.tsquery;
        let (rows, unindexed) = self.db.run(move |mut client| async move {
            read(&mut client, &unindexed, &candidates, probe.as_ref(), params, tsquery).await
        })?;
        let mut docs = Vec::with_capacity(rows.len());
        let mut candidates = Vec::with_capacity(rows.len());
        let mut metas = BTreeMap::new();
        for row in &rows {
            let (doc, candidate) = doc_of(row, docs.len() as u64)?;
            if let (Some(meta), false) =
                (row.get::<_, Option<&str>>(6), metas.contains_key(&doc.session_id))
            {
                metas.insert(
                    doc.session_id.clone(),
                    decode::<SessionMeta>("a session's meta", meta)?,
                );
            }
            docs.push(doc);
            candidates.push(candidate);
        }
        Ok(Found {
            candidates,
            exact,
            unindexed: unindexed_of(&unindexed)?,
            resolver: Box::new(Resolver { docs, metas }),
        })
    }
}

/// Parameters of a statement, owned.
type Params = Vec<Box<dyn ToSql + Send + Sync>>;

/// A lone word's tier probe: its statement and parameters, and the candidates' statement that
/// reads one tier (whose tsquery the probe answers).
struct Probe {
    sql: String,
    params: Params,
    tiered: String,
}

/// The candidates' rows and the unindexed rows of one search, read in one snapshot: the
/// `unindexed` statement, `probe` when it is a lone word's, then `candidates` with `params` (or
/// the probe's `tiered` statement, with the tier's tsquery added, or `tsquery` when not even the
/// word holds a page). Two round trips after `BEGIN` for a lone word, one for any other query: no
/// statement waits for the unindexed one's answer.
async fn read(
    client: &mut deadpool_postgres::Object,
    unindexed: &str,
    candidates: &str,
    probe: Option<&Probe>,
    mut params: Params,
    tsquery: String,
) -> Result<(Vec<Row>, Vec<Row>), StoreError> {
    let fail = |e: tokio_postgres::Error| db_error("search", &e);
    // Read only: dropped at the end, which sends its `ROLLBACK` without waiting for it.
    let tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(fail)?;
    // Prepared once per connection and statement shape (the text holds no value). The planner
    // cannot tell how few sessions are not current (`projected <> version` compares two
    // columns): it would read every session row, not the partial index that holds them, so the
    // unindexed statement runs with sequential scans off. It has no parameters: its plan is made
    // once per connection, under that setting, which always goes out just before it.
    let unindexed = tx.prepare_cached(unindexed).await.map_err(fail)?;
    // Then the candidates with sequential scans again or, for a lone word, its tier probe.
    // Each tier's probe reads at most a page of rows: the planner, which cannot know how many
    // rows a parameter's lexeme holds, could otherwise take a sequential scan for one, which
    // reads the whole table when the tier is empty. The probe and the tier's statement read a
    // few rows through the indexes whatever their values, so their plans are made once per
    // connection (planning them for each search cost more than running them).
    let (next, next_params, setting) = match probe {
        None => (candidates, &params, "SET LOCAL enable_seqscan = on"),
        Some(probe) => {
            (probe.sql.as_str(), &probe.params, "SET LOCAL plan_cache_mode = force_generic_plan")
        }
    };
    let next = tx.prepare_cached(next).await.map_err(fail)?;
    let next_params = refs(next_params);
    let (off, unindexed, set, rows) = tokio::join!(
        tx.batch_execute("SET LOCAL enable_seqscan = off"),
        tx.query(&unindexed, &[]),
        tx.batch_execute(setting),
        tx.query(&next, &next_params)
    );
    off.and(set).map_err(fail)?;
    let (rows, unindexed) = (rows.map_err(fail)?, unindexed.map_err(fail)?);
    let Some(probe) = probe else { return Ok((rows, unindexed)) };
    let found = rows.first().map(|row| (row.get::<_, i32>(0), row.get::<_, String>(1)));
    let (statement, setting) = match found {
        // A tier holds a page: its rows.
        Some((at, tier)) if at <= TIERS.len() as i32 => {
            params.push(Box::new(tier));
            (probe.tiered.as_str(), None)
        }
        // Only the word itself holds one: every row that holds it, planned for how many
        // rows the word has.
        Some(_) => (candidates, Some("SET LOCAL plan_cache_mode = auto")),
        // Not even the word: its few rows.
        None => {
            params.push(Box::new(tsquery));
            (probe.tiered.as_str(), None)
        }
    };
    let statement = tx.prepare_cached(statement).await.map_err(fail)?;
    let params = refs(&params);
    let rows = match setting {
        Some(setting) => {
            let (set, rows) =
                tokio::join!(tx.batch_execute(setting), tx.query(&statement, &params));
            set.map_err(fail)?;
            rows
        }
        None => tx.query(&statement, &params).await,
    };
    Ok((rows.map_err(fail)?, unindexed))
}

/// Boxed parameters as a statement takes them.
fn refs(params: &[Box<dyn ToSql + Send + Sync>]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)).collect()
}

/// What a candidate's row names, before it is resolved.
struct RowDoc {
    session_id: String,
    entry_id: Option<String>,
    class: i16,
    /// The entry's JSON, read with it when the statement kept only the best.
    body: Option<String>,
}

fn text_of(bytes: Vec<u8>) -> Result<String, StoreError> {
    String::from_utf8(bytes).map_err(|e| StoreError::Corrupt(format!("postgres: an id: {e}")))
}

fn doc_of(row: &Row, doc: u64) -> Result<(RowDoc, Candidate), StoreError> {
    let session_id = text_of(row.get(0))?;
    let entry_id = row.get::<_, Option<Vec<u8>>>(1).map(text_of).transpose()?;
    let candidate = Candidate {
        bound: u64::try_from(row.get::<_, i64>(4)).unwrap_or(0),
        timestamp: row.get(3),
        doc,
    };
    Ok((RowDoc { session_id, entry_id, class: row.get(2), body: row.get(5) }, candidate))
}

/// The unindexed rows (kind, session id, entry id) as the core takes them: `s` a session whose
/// entry rows are not current, `e` an entry without terms, `m` a session's text without terms.
fn unindexed_of(rows: &[Row]) -> Result<Vec<Unindexed>, StoreError> {
    let mut out = Vec::new();
    let mut entries: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in rows {
        let sid = text_of(row.get(1))?;
        match row.get::<_, &str>(0) {
            "s" => out.push(Unindexed::Session(sid)),
            _ => {
                let ids = entries.entry(sid).or_default();
                if let Some(eid) = row.get::<_, Option<Vec<u8>>>(2) {
                    ids.push(text_of(eid)?);
                }
            }
        }
    }
    out.extend(
        entries
            .into_iter()
            .map(|(session_id, entry_ids)| Unindexed::Entries { session_id, entry_ids }),
    );
    Ok(out)
}

/// The candidates' rows, by their place in the answer, and the metas of their sessions when the
/// statement read them.
struct Resolver {
    docs: Vec<RowDoc>,
    metas: BTreeMap<String, SessionMeta>,
}

impl Resolve for Resolver {
    fn resolve(&self, doc: u64) -> Result<Doc, StoreError> {
        let found = self
            .docs
            .get(doc as usize)
            .ok_or_else(|| StoreError::Internal("postgres: search: no such candidate".into()))?;
        let (kind, role) = match found.class {
            SESSION_CLASS => (SearchKind::Session, None),
            class => u8::try_from(class)
                .ok()
                .and_then(EntryClass::from_index)
                .map_or((SearchKind::Custom, None), EntryClass::search_kind),
        };
        let text = match &found.body {
            Some(body) => Some(entry_text(&decode::<SessionEntry>("an entry", body)?)),
            None => None,
        };
        Ok(Doc {
            session_id: found.session_id.clone(),
            entry_id: found.entry_id.clone(),
            text,
            kind,
            role,
        })
    }

    fn listed_meta(&self, session_id: &str) -> Option<&SessionMeta> {
        self.metas.get(session_id)
    }
}
