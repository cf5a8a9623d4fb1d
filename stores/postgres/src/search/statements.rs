//! The statements of the postgres store's search (`super`): the candidates of a query, a lone
//! word's tier probe and what the index does not cover. Their text depends on the query's shape
//! (its items and terms, `keep`), never on its values: those are parameters.

use super::terms;
use super::SESSION_CLASS;

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
pub fn candidates_sql(s: &str, items_keys: &[Vec<String>], keep: bool, tiered: bool) -> String {
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
pub fn probe_sql(s: &str, items_keys: &[Vec<String>]) -> String {
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

/// What the index does not cover (kind, session id, entry id; `super::unindexed_of` reads it).
pub fn unindexed_sql(s: &str) -> String {
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
