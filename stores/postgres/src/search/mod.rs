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
//! The statement's text depends on the query's shape (its items and terms, `keep`), never on its
//! values: they are parameters.

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
use terms::TIERS;

/// The class a session's own text has in the statement's rows.
const SESSION_CLASS: i16 = -1;

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
        let mut params: Vec<Box<dyn ToSql + Send + Sync>> = vec![
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
            let mut probe: Vec<Box<dyn ToSql + Send + Sync>> = vec![
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
            (probe_sql(&schema, &lookup.items), probe, tiered)
        });
        let (rows, unindexed) = self.db.run(move |mut client| async move {
            let fail = |e: tokio_postgres::Error| db_error("search", &e);
            // Read only: dropped at the end, which sends its `ROLLBACK` without waiting for it.
            let tx = client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await
                .map_err(fail)?;
            // Prepared once per connection and statement shape (the text holds no value).
            let unindexed = tx.prepare_cached(&unindexed).await.map_err(fail)?;
            // The planner cannot tell how few sessions are not current (`projected <> version`
            // compares two columns): it would read every session row, not the partial index
            // that holds them. The setting goes out in the same round trip as the statement,
            // which has no parameters, so its plan is made once per connection, under it.
            let (off, unindexed) = tokio::join!(
                tx.batch_execute("SET LOCAL enable_seqscan = off"),
                tx.query(&unindexed, &[])
            );
            off.map_err(fail)?;
            let unindexed = unindexed.map_err(fail)?;
            // What the candidates statement runs under: with seq scans again, unless a probe ran.
            let mut setting = "SET LOCAL enable_seqscan = on";
            let mut statement = &candidates;
            if let Some((probe, probe_params, tiered)) = &probe {
                // Each tier's probe reads at most a page of rows: the planner, which cannot
                // know how many rows a parameter's lexeme holds, could otherwise take a
                // sequential scan for one, which reads the whole table when the tier is empty.
                // The probe and the tier's statement read a few rows through the indexes
                // whatever their values, so their plans are made once per connection
                // (planning them for each search cost more than running them).
                let probe = tx.prepare_cached(probe).await.map_err(fail)?;
                let probe_params = refs(probe_params);
                let (generic, found) = tokio::join!(
                    tx.batch_execute("SET LOCAL plan_cache_mode = force_generic_plan"),
                    tx.query_opt(&probe, &probe_params)
                );
                generic.map_err(fail)?;
                setting = "SET LOCAL plan_cache_mode = force_generic_plan";
                match found
                    .map_err(fail)?
                    .map(|row| (row.get::<_, i32>(0), row.get::<_, String>(1)))
                {
                    // A tier holds a page: its rows.
                    Some((at, tier)) if at <= TIERS.len() as i32 => {
                        params.push(Box::new(tier));
                        statement = tiered;
                    }
                    // Only the word itself holds one: every row that holds it, planned for
                    // how many rows the word has.
                    Some(_) => setting = "SET LOCAL plan_cache_mode = auto",
                    // Not even the word: its few rows.
                    None => {
                        params.push(Box::new(lookup.tsquery));
                        statement = tiered;
                    }
                }
            }
            let statement = tx.prepare_cached(statement).await.map_err(fail)?;
            let params = refs(&params);
            let (set, rows) =
                tokio::join!(tx.batch_execute(setting), tx.query(&statement, &params));
            set.map_err(fail)?;
            Ok((rows.map_err(fail)?, unindexed))
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

/// The candidates' statement: `$1` tsquery, `$2` entry classes, `$3`/`$4` since/until (or
/// `NULL`), `$5` whether sessions' own text is wanted; with `keep`, `$6` keep, `$7`/`$8` the
/// cursor's score and time (or `NULL`); then the key of each query term in order
/// ([`terms::Lookup`]), and with `tiered` the tsquery the entries are looked up by →
/// session id, entry id (`NULL`: the session's text), class, timestamp, bound, and with `keep`
/// only the entry's body and its session's meta (read with them: no call for it later). Each
/// bound is a sum over the items of the lowest count of the item's keys, one lookup each in the
/// row's terms; a bound of 0 cannot match.
///
/// `tiered` (a lone word, with `keep`): the entries are looked up by the last parameter, the
/// tier [`probe_sql`] chose, and each looks its session up (a tier holds few rows; a statement
/// that may find every row joins the sessions whole).
fn candidates_sql(s: &str, items_keys: &[Vec<String>], keep: bool, tiered: bool) -> String {
    let first = if keep { 9 } else { 6 };
    let entry_bound = bound_sql(items_keys, first, "e");
    let session_bound = bound_sql(items_keys, first, "r");
    let entries_query = match tiered {
        false => "$1".to_string(),
        true => format!("${}", first + items_keys.iter().map(Vec::len).sum::<usize>()),
    };
    // Which found entries' sessions are listed and current.
    let live = match tiered {
        true => format!(
            "WHERE f.bound > 0 AND (SELECT r.projected = r.version AND r.meta IS NOT NULL \
             FROM {s}.sessions r WHERE r.session_id = f.session_id)"
        ),
        false => format!(
            "JOIN {s}.sessions r ON r.session_id = f.session_id \
             WHERE f.bound > 0 AND r.projected = r.version AND r.meta IS NOT NULL"
        ),
    };
    let docs = format!(
        "WITH found AS MATERIALIZED (\
         SELECT e.session_id, e.entry_id, e.class, e.ts, {entry_bound} AS bound \
         FROM {s}.entries e \
         WHERE e.lex @@ {entries_query}::text::tsquery AND {ADMITTED}), \
         scored AS (\
         SELECT f.session_id, f.entry_id, f.class, f.ts, f.bound FROM found f {live} \
         UNION ALL \
         SELECT * FROM (SELECT r.session_id, NULL::bytea AS entry_id, \
         {SESSION_CLASS}::smallint AS class, r.updated_at AS ts, {session_bound} AS bound \
         FROM {s}.sessions r \
         WHERE $5::boolean AND r.lex @@ $1::text::tsquery \
         AND r.projected = r.version AND r.meta IS NOT NULL \
         AND ($3::bigint IS NULL OR r.updated_at >= $3) \
         AND ($4::bigint IS NULL OR r.updated_at < $4) \
         AND NOT EXISTS (SELECT 1 FROM {s}.entries u \
         WHERE u.session_id = r.session_id AND u.terms IS NULL)) d WHERE d.bound > 0)"
    );
    if !keep {
        return format!(
            "{docs} SELECT session_id, entry_id, class, ts, bound, NULL::text, NULL::text \
             FROM scored"
        );
    }
    // `Wanted::keep`: those tied with the cursor always (their ids decide), those after it
    // ranked, the best `$6` kept with every one tied with the last of them.
    format!(
        "{docs}, ranked AS (SELECT *, rank() OVER (ORDER BY bound DESC, ts DESC) AS place \
         FROM scored WHERE $7::bigint IS NULL OR (bound, ts) < ($7, $8::bigint)), \
         kept AS (SELECT session_id, entry_id, class, ts, bound FROM ranked WHERE place <= $6 \
         UNION ALL SELECT session_id, entry_id, class, ts, bound FROM scored \
         WHERE (bound, ts) = ($7, $8::bigint)) \
         SELECT k.session_id, k.entry_id, k.class, k.ts, k.bound, e.body, r.meta FROM kept k \
         LEFT JOIN {s}.entries e ON e.session_id = k.session_id AND e.entry_id = k.entry_id \
         JOIN {s}.sessions r ON r.session_id = k.session_id"
    )
}

/// Which entries a statement reads: `$2` their classes, `$3`/`$4` since/until (or `NULL`).
const ADMITTED: &str = "e.class = ANY($2::smallint[]) \
    AND ($3::bigint IS NULL OR e.ts >= $3) AND ($4::bigint IS NULL OR e.ts < $4)";

/// The tier a lone word's kept candidates are read from: `$1` the word's tier tsqueries, the
/// highest first ([`terms::Lookup::tiers`]), then the word's own, `$2`–`$4` as in
/// [`candidates_sql`], `$5` keep, `$6`/`$7` the cursor's score and time (or `NULL`), `$8` the
/// word's key → the place (from 1) and tsquery of the first that holds at least `keep`
/// admitted entries ranked after the cursor (no row: not even the word does, so few rows hold
/// it). Each reads at most `keep` rows and the probe stops at the first that holds them, so a
/// common word costs a few index lookups here and the rows of one tier in [`candidates_sql`],
/// not every row that holds it. It is exact: when `keep` entries reach a tier, the best `keep`,
/// those tied with the last of them and those tied with the cursor all reach it too.
fn probe_sql(s: &str, items_keys: &[Vec<String>]) -> String {
    let bound = bound_sql(items_keys, 8, "e");
    format!(
        "WITH RECURSIVE probe(i, n) AS (SELECT 0, 0::bigint UNION ALL \
         SELECT p.i + 1, (SELECT count(*) FROM (SELECT 1 FROM (SELECT e.session_id \
         FROM {s}.entries e WHERE e.lex @@ ($1::text[])[p.i + 1]::tsquery AND {ADMITTED} \
         AND ($6::bigint IS NULL OR ({bound}, e.ts) < ($6, $7::bigint)) OFFSET 0) e \
         WHERE (SELECT r.projected = r.version AND r.meta IS NOT NULL FROM {s}.sessions r \
         WHERE r.session_id = e.session_id) LIMIT $5) x) \
         FROM probe p WHERE p.n < $5 AND p.i < cardinality($1::text[])) \
         SELECT i, ($1::text[])[i] FROM probe WHERE n >= $5 AND i > 0"
    )
}

/// A document's bound over the row `alias` (`e` an entry, `r` a session): per item the lowest
/// count of its keys, summed; the keys are parameters from `$first` on, in order, each looked up
/// in the column that counts it ([`terms::in_groups`]).
fn bound_sql(items_keys: &[Vec<String>], first: usize, alias: &str) -> String {
    let mut n = first;
    let mut items = Vec::new();
    for keys in items_keys {
        let counts: Vec<String> = keys
            .iter()
            .map(|key| {
                let column = if terms::in_groups(key) { "groups" } else { "terms" };
                n += 1;
                format!("coalesce(({alias}.{column} ->> ${})::bigint, 0)", n - 1)
            })
            .collect();
        items.push(match counts.len() {
            1 => counts.into_iter().next().unwrap_or_default(),
            _ => format!("LEAST({})", counts.join(", ")),
        });
    }
    format!("({})::bigint", items.join(" + "))
}

/// What the index does not cover (see [`unindexed_of`]).
fn unindexed_sql(s: &str) -> String {
    // The sessions' condition is the one `sessions_unprojected` is partial on (`schema.rs`).
    format!(
        "SELECT CASE WHEN projected <> version THEN 's' ELSE 'm' END, session_id, NULL::bytea \
         FROM {s}.sessions WHERE meta IS NOT NULL AND (projected <> version OR terms IS NULL) \
         UNION ALL \
         SELECT 'e', e.session_id, e.entry_id FROM {s}.entries e \
         JOIN {s}.sessions r ON r.session_id = e.session_id \
         WHERE e.terms IS NULL AND r.meta IS NOT NULL AND r.projected = r.version"
    )
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
