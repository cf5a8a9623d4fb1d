//! The postgres adapter's tables in their own PostgreSQL schema: the SQL text of every statement
//! (the schema name, a validated identifier, is the only thing ever formatted into it; values
//! are always parameters) and the versioned migrations applied at start under an advisory lock.
//!
//! Tables: `sessions` (one row per stored session: its log's first and last chunk numbers, its
//! meta as JSON text and the two list keys, indexed for the list orders), `log` (each session's
//! log as the fs store would write it, one chunk per change set: the same v1.0.32 lines), the
//! `log_n` sequence that numbers chunks across every session, `attachments`, and (version 2) the
//! `outbox`: one row per change set that recorded feed changes (session, seq range, instance),
//! written in the change set's transaction, which other instances follow (`follow.rs`), and
//! (version 3) `followers`: how far each instance has delivered, so a restarted one goes on
//! there; (version 4) `entries`, the read rows: each entry of a session as JSON with its class and
//! its position on the active path (`NULL` off it), the row's `leaf` and `path_len`, and
//! `projected`, the log chunk the rows reflect — written in the same transaction as each chunk by
//! `project` (`entry_rows.rs`), trusted by a read only while `projected = version`, so a cold
//! instance reads a page of a path without replaying the log (`read.rs`); (version 5) each outbox
//! row's feed `epoch` and, for a change set that deleted its session (whose feed goes with it),
//! its `ended` changes inline, so other instances still deliver them; (version 6) `lifecycles`:
//! the lifecycle (trash, expiry) of each session that has one, as JSON, written in the
//! transaction of the change set that set it, so the sweep and `session::list-trash` read it
//! without replaying a log; (version 7) search's terms (`search/`): each entry row's and session
//! row's terms with their counts (`terms`), its prefixes' and neighbouring pairs' counts
//! (`groups`) and its terms as a tsvector (`lex`, GIN), written with the row, and each entry
//! row's timestamp; (version 8) each entry's `lex` with its tier lexemes (`search/terms.rs`:
//! `#t#term` for each tier `t` the term's count reaches), made from its `terms` for the
//! rows an older build wrote — a row whose lexemes would then be too many loses its terms, so
//! searches read it instead; (version 9) both search indexes' pending lists kept short
//! ([`PENDING_LIST_KB`]). Ids are `bytea`: a
//! session or attachment id may hold any character, NUL included.

use session_core::wire::ListOrder;
use session_core::StoreError;
use tokio_postgres::Client;

use super::db::db_error;

/// The newest schema version this build knows.
pub const SCHEMA_VERSION: i32 = 9;

/// How long an instance counts as following after it last renewed its presence (`follow.rs`
/// renews it far more often).
pub const PRESENT_FOR_SECS: u64 = 30;

/// Migration `i` brings the schema from version `i` to `i + 1`; `{s}` stands for the schema.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE {s}.sessions (
    session_id bytea PRIMARY KEY,
    base bigint NOT NULL,
    version bigint NOT NULL,
    chunks bigint NOT NULL,
    meta text,
    created_at bigint,
    updated_at bigint
);
CREATE INDEX sessions_created ON {s}.sessions (created_at, session_id) WHERE meta IS NOT NULL;
CREATE INDEX sessions_updated ON {s}.sessions (updated_at, session_id) WHERE meta IS NOT NULL;
CREATE TABLE {s}.log (
    session_id bytea NOT NULL,
    n bigint NOT NULL,
    lines text NOT NULL,
    PRIMARY KEY (session_id, n)
);
CREATE SEQUENCE {s}.log_n;
CREATE TABLE {s}.attachments (
    session_id bytea NOT NULL,
    attachment_id bytea NOT NULL,
    meta text NOT NULL,
    bytes bytea NOT NULL,
    PRIMARY KEY (session_id, attachment_id)
);
"#,
    r#"
CREATE TABLE {s}.outbox (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT now(),
    session_id bytea NOT NULL,
    first_seq bigint NOT NULL,
    last_seq bigint NOT NULL,
    instance text NOT NULL
);
CREATE INDEX outbox_at ON {s}.outbox (at);
"#,
    r#"
CREATE TABLE {s}.followers (
    instance text PRIMARY KEY,
    cursor bigint NOT NULL,
    at timestamptz NOT NULL DEFAULT now()
);
"#,
    r#"
ALTER TABLE {s}.sessions ADD COLUMN projected bigint NOT NULL DEFAULT -1,
    ADD COLUMN leaf bytea, ADD COLUMN path_len bigint NOT NULL DEFAULT 0;
CREATE TABLE {s}.entries (
    session_id bytea NOT NULL,
    entry_id bytea NOT NULL,
    pos bigint,
    class smallint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (session_id, entry_id)
);
CREATE INDEX entries_path ON {s}.entries (session_id, pos) WHERE pos IS NOT NULL;
CREATE FUNCTION {s}.project(p_sid bytea, p_whole boolean, p_cut bigint, p_moved bytea[],
    p_moved_pos bigint[], p_ids bytea[], p_pos bigint[], p_classes smallint[], p_bodies text[],
    p_leaf bytea, p_len bigint, p_current boolean, p_row boolean) RETURNS void
    LANGUAGE plpgsql AS $$
BEGIN
    IF p_whole THEN
        DELETE FROM {s}.entries WHERE session_id = p_sid;
    END IF;
    IF p_cut IS NOT NULL THEN
        UPDATE {s}.entries SET pos = NULL WHERE session_id = p_sid AND pos >= p_cut;
    END IF;
    IF cardinality(p_moved) > 0 THEN
        UPDATE {s}.entries e SET pos = m.at FROM unnest(p_moved, p_moved_pos) AS m(id, at)
            WHERE e.session_id = p_sid AND e.entry_id = m.id;
    END IF;
    IF cardinality(p_ids) > 0 THEN
        INSERT INTO {s}.entries (session_id, entry_id, pos, class, body)
            SELECT p_sid, r.id, r.at, r.class, r.body
            FROM unnest(p_ids, p_pos, p_classes, p_bodies) AS r(id, at, class, body)
            ON CONFLICT (session_id, entry_id)
            DO UPDATE SET pos = EXCLUDED.pos, class = EXCLUDED.class, body = EXCLUDED.body;
    END IF;
    IF p_row THEN
        UPDATE {s}.sessions SET leaf = p_leaf, path_len = p_len,
            projected = CASE WHEN p_current THEN version ELSE -1 END
            WHERE session_id = p_sid;
    END IF;
END $$;
"#,
    r#"
ALTER TABLE {s}.outbox ADD COLUMN epoch text, ADD COLUMN ended text;
"#,
    r#"
CREATE TABLE {s}.lifecycles (
    session_id bytea PRIMARY KEY,
    lifecycle text NOT NULL
);
"#,
    r#"
ALTER TABLE {s}.entries ADD COLUMN terms jsonb, ADD COLUMN groups jsonb,
    ADD COLUMN lex tsvector, ADD COLUMN ts bigint;
ALTER TABLE {s}.sessions ADD COLUMN terms jsonb, ADD COLUMN groups jsonb, ADD COLUMN lex tsvector;
CREATE INDEX entries_lex ON {s}.entries USING gin (lex);
CREATE INDEX entries_unindexed ON {s}.entries (session_id) WHERE terms IS NULL;
CREATE INDEX sessions_lex ON {s}.sessions USING gin (lex);
CREATE INDEX sessions_unprojected ON {s}.sessions (session_id)
    WHERE meta IS NOT NULL AND (projected <> version OR terms IS NULL);
DROP FUNCTION {s}.project(bytea, boolean, bigint, bytea[], bigint[], bytea[], bigint[],
    smallint[], text[], bytea, bigint, boolean, boolean);
CREATE FUNCTION {s}.project(p_sid bytea, p_whole boolean, p_cut bigint, p_moved bytea[],
    p_moved_pos bigint[], p_ids bytea[], p_pos bigint[], p_classes smallint[], p_bodies text[],
    p_leaf bytea, p_len bigint, p_current boolean, p_row boolean, p_terms text[], p_ts bigint[],
    p_lex text[])
    RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_whole THEN
        DELETE FROM {s}.entries WHERE session_id = p_sid;
    END IF;
    IF p_cut IS NOT NULL THEN
        UPDATE {s}.entries SET pos = NULL WHERE session_id = p_sid AND pos >= p_cut;
    END IF;
    IF cardinality(p_moved) > 0 THEN
        UPDATE {s}.entries e SET pos = m.at FROM unnest(p_moved, p_moved_pos) AS m(id, at)
            WHERE e.session_id = p_sid AND e.entry_id = m.id;
    END IF;
    IF cardinality(p_ids) > 0 THEN
        INSERT INTO {s}.entries (session_id, entry_id, pos, class, body, terms, groups, ts, lex)
            SELECT p_sid, r.id, r.at, r.class, r.body, c.j -> 't', c.j -> 'g', r.ts,
                r.lex::tsvector
            FROM unnest(p_ids, p_pos, p_classes, p_bodies, p_terms, p_ts, p_lex)
                AS r(id, at, class, body, terms, ts, lex),
                LATERAL (SELECT r.terms::jsonb AS j) c
            ON CONFLICT (session_id, entry_id)
            DO UPDATE SET pos = EXCLUDED.pos, class = EXCLUDED.class, body = EXCLUDED.body,
                terms = EXCLUDED.terms, groups = EXCLUDED.groups, ts = EXCLUDED.ts,
                lex = EXCLUDED.lex;
    END IF;
    IF p_row THEN
        UPDATE {s}.sessions SET leaf = p_leaf, path_len = p_len,
            projected = CASE WHEN p_current THEN version ELSE -1 END
            WHERE session_id = p_sid;
    END IF;
END $$;
"#,
    r#"
UPDATE {s}.entries e SET terms = NULL, groups = NULL, lex = NULL
    WHERE e.terms IS NOT NULL AND (SELECT sum((octet_length(t.key) + 8) * (1 + (SELECT count(*)
        FROM unnest('{2,3,4,6,8,12,16,24,32,48,64,96,128,192,256,384,512,768,1024}'::bigint[]) tier
        WHERE t.value::bigint >= tier))) FROM jsonb_each_text(e.terms) t) > 524288;
UPDATE {s}.entries e SET lex = e.lex || array_to_tsvector(ARRAY(
        SELECT '#' || tier || '#' || t.key FROM jsonb_each_text(e.terms) t,
            unnest('{2,3,4,6,8,12,16,24,32,48,64,96,128,192,256,384,512,768,1024}'::bigint[]) tier
        WHERE t.value::bigint >= tier))
    WHERE e.terms IS NOT NULL
        AND EXISTS (SELECT 1 FROM jsonb_each_text(e.terms) t WHERE t.value::bigint >= 2);
"#,
    r#"
ALTER INDEX {s}.entries_lex SET (gin_pending_list_limit = 256);
ALTER INDEX {s}.sessions_lex SET (gin_pending_list_limit = 256);
"#,
];

/// The pending list of each search index (GIN `fastupdate`), in kB: new rows' lexemes wait
/// there until it grows past this (or a vacuum comes), and every lookup of the index reads all
/// of it. PostgreSQL's default, 4 MB, made a common word's search after a bulk write 2–3× slower
/// until autovacuum emptied it (a lone word's tier probe looks up several tsqueries); 256 kB
/// keeps that read to a few pages and still merges many rows' lexemes at once.
pub const PENDING_LIST_KB: u32 = 256;

/// Whether `schema` may name our schema: lowercase ASCII letters, digits and `_`, not starting
/// with a digit, 1–63 bytes (so it needs no quoting and cannot carry SQL).
pub fn valid_schema_name(schema: &str) -> bool {
    let mut bytes = schema.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z' | b'_'))
        && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_'))
        && schema.len() <= 63
}

/// Every statement the store runs, with its schema filled in once.
#[derive(Debug)]
pub struct Sql {
    pub schema: String,
    /// `$1` sid, `$2` base, `$3` version: the session's head and the chunks a cache at (base,
    /// version) lacks (all of them when the base moved), in order, and whether the entry rows
    /// reflect the log. One statement, one snapshot.
    pub catch_up: String,
    /// `$1` sid → version, whether the entry rows reflect the log (no row: nothing).
    pub position: String,
    /// `$1` sid: makes sure the session's row exists, so that it can be locked.
    pub ensure_row: String,
    /// `$1` sid → base, version, chunks, whether the entry rows reflect the log (`projected =
    /// version`); the row locked until the transaction ends.
    pub lock_row: String,
    /// `$1` sid, `$2` lines → the new chunk's n.
    pub insert_chunk: String,
    /// `$1` sid, `$2` lines, `$3` meta, `$4` created_at, `$5` updated_at, `$6` leaf, `$7` path
    /// length, `$8` whether the entry rows are current, `$9`/`$10` the session's search terms and
    /// tsvector: the chunk appended and the row moved onto it → the chunk's n, the log's base.
    pub append_chunk: String,
    /// [`Sql::append_chunk`]'s `$1`–`$8`, then `$9` the version and `$10` the entry rows'
    /// currency the writer decided on, `$11`–`$14` the entry rows to insert or replace (ids,
    /// positions, classes, bodies), `$15`/`$16` the feed seqs for the outbox (`NULL`: no row),
    /// `$17` the instance, `$18` the feed's epoch, `$19`/`$22` the session's search terms and
    /// tsvector, `$20`/`$21`/`$23` the entry rows' terms, timestamps and tsvectors: the whole
    /// plain append in one statement, which
    /// locks the session's row only if it is still at `$9`/`$10` and writes nothing otherwise →
    /// the chunk's n, the log's base (no row: the session moved, nothing was written).
    pub append_alone: String,
    /// `$1` sid.
    pub delete_log: String,
    /// `$1` sid, `$2` base, `$3` version, `$4` chunks, `$5` meta, `$6` created_at, `$7` updated_at,
    /// `$8`/`$9` the session's search terms and tsvector.
    pub update_row: String,
    /// `$1` sid.
    pub delete_row: String,
    /// `$1` sid → meta.
    pub meta: String,
    /// → every session's id, in order.
    pub session_ids: String,
    /// → every id with a session row or an attachment, in order.
    pub stored_ids: String,
    /// → meta of every listed session.
    pub metas: String,
    /// One list page per order: `$1` key, `$2` sid (the position after which), `$3` limit.
    pub page_created_asc: String,
    pub page_created_desc: String,
    pub page_updated_desc: String,
    /// The first page per order: `$1` limit.
    pub first_created_asc: String,
    pub first_created_desc: String,
    pub first_updated_desc: String,
    /// `$1` sid, `$2` first seq, `$3` last seq, `$4` instance, `$5` the feed's epoch, `$6` the
    /// changes inline when the change set deleted its session (`NULL` otherwise).
    pub insert_outbox: String,
    /// `$1` erased session ids: their deletions' outbox rows keep the changes, not the metadata
    /// (`session::erase`).
    pub strip_ended_metadata: String,
    /// `$1` cursor, `$2` ids not seen yet → id, sid, first seq, last seq, instance, epoch, ended.
    pub follow: String,
    /// Outbox rows older than every reader needs.
    pub trim_outbox: String,
    /// → the newest outbox id (0 when empty).
    pub outbox_head: String,
    /// `$1` instance → the outbox id it had delivered up to.
    pub follower_cursor: String,
    /// `$1` instance, `$2` cursor.
    pub save_follower_cursor: String,
    /// [`Sql::save_follower_cursor`]'s `$1` instance and `$2` cursor, the instance's presence
    /// renewed with it → whether another instance followed lately.
    pub presence: String,
    /// `$1` sid → the session's lifecycle JSON (no row: empty).
    pub lifecycle: String,
    /// → session id and lifecycle JSON of every session that has one.
    pub lifecycles: String,
    /// `$1` sid, `$2` lifecycle JSON.
    pub put_lifecycle: String,
    /// `$1` sid.
    pub delete_lifecycle: String,
    /// `$1` sid, `$2` aid → meta, bytes.
    pub attachment: String,
    /// `$1` sid, `$2` aid → meta.
    pub attachment_meta: String,
    /// `$1` sid → meta of each attachment.
    pub attachments: String,
    /// `$1` sid, `$2` aid, `$3` meta, `$4` bytes.
    pub put_attachment: String,
    /// `$1` sid, `$2` aid → one row when it existed.
    pub delete_attachment: String,
    /// `$1` sid.
    pub delete_attachments: String,
    /// The entry rows' `project` (`entry_rows.rs`), its sixteen parameters in order.
    pub project: String,
    /// `$1` sid → its active leaf; no row when the entry rows are not current (or no session).
    pub rows_leaf: String,
    /// `$1` sid, `$2` entry id → the entry's JSON (`NULL`: no such entry); no row as above.
    pub rows_entry: String,
    /// `$1` sid, `$2` entry id or `NULL` → leaf, path length, the entry's position and class on
    /// the active path (`NULL`s: not on it); no row as above.
    pub rows_locate: String,
    /// `$1` sid, `$2` position, `$3` classes, `$4` limit → leaf, then position and JSON of
    /// the first `limit` active-path entries of the classes at or after the position (`NULL`s:
    /// none); no row as above.
    pub rows_after: String,
    /// As `rows_after`: the last `limit` before the position, newest first.
    pub rows_before: String,
}

impl Sql {
    /// The list page statement of `order`: the first page, or one after a position (`after`).
    pub fn list_page(&self, order: ListOrder, after: bool) -> &str {
        match (order, after) {
            (ListOrder::CreatedAsc, false) => &self.first_created_asc,
            (ListOrder::CreatedDesc, false) => &self.first_created_desc,
            (ListOrder::UpdatedDesc, false) => &self.first_updated_desc,
            (ListOrder::CreatedAsc, true) => &self.page_created_asc,
            (ListOrder::CreatedDesc, true) => &self.page_created_desc,
            (ListOrder::UpdatedDesc, true) => &self.page_updated_desc,
        }
    }

    pub fn new(schema: &str) -> Sql {
        let s = schema;
        let page = |cmp: &str, key: &str, dir: &str| {
            format!(
                "SELECT meta FROM {s}.sessions WHERE meta IS NOT NULL AND ({key}, session_id) \
                 {cmp} ($1, $2) ORDER BY {key} {dir}, session_id {dir} LIMIT $3"
            )
        };
        let first = |key: &str, dir: &str| {
            format!(
                "SELECT meta FROM {s}.sessions WHERE meta IS NOT NULL \
                 ORDER BY {key} {dir}, session_id {dir} LIMIT $1"
            )
        };
        // The session row moved onto chunk `c` ($3–$8: meta, its list keys, the entry rows'
        // leaf, path length and currency) → the chunk's n, the log's base.
        let move_row = |terms: u8, lex: u8| {
            format!(
                "UPDATE {s}.sessions r SET base = CASE WHEN r.base <= 0 THEN c.n ELSE r.base END, \
                 version = c.n, chunks = r.chunks + 1, meta = $3, created_at = $4, \
                 updated_at = $5, leaf = $6, path_len = $7, \
                 projected = CASE WHEN $8 THEN c.n ELSE -1 END, \
                 terms = ${terms}::text::jsonb -> 't', groups = ${terms}::text::jsonb -> 'g', \
                 lex = ${lex}::text::tsvector FROM c WHERE r.session_id = $1 RETURNING c.n, r.base"
            )
        };
        Sql {
            schema: s.into(),
            catch_up: format!(
                "SELECT s.base, s.version, s.chunks, l.lines, s.projected = s.version \
                 FROM {s}.sessions s \
                 LEFT JOIN {s}.log l ON l.session_id = s.session_id \
                 AND l.n > (CASE WHEN s.base = $2::bigint THEN $3::bigint ELSE -1::bigint END) \
                 WHERE s.session_id = $1 ORDER BY l.n"
            ),
            ensure_row: format!(
                "INSERT INTO {s}.sessions (session_id, base, version, chunks) VALUES ($1, 0, 0, 0) \
                 ON CONFLICT (session_id) DO NOTHING"
            ),
            lock_row: format!(
                "SELECT base, version, chunks, projected = version FROM {s}.sessions \
                 WHERE session_id = $1 FOR UPDATE"
            ),
            insert_chunk: format!(
                "INSERT INTO {s}.log (session_id, n, lines) VALUES ($1, nextval('{s}.log_n'), $2) \
                 RETURNING n"
            ),
            append_chunk: format!(
                "WITH c AS (INSERT INTO {s}.log (session_id, n, lines) \
                 VALUES ($1, nextval('{s}.log_n'), $2) RETURNING n) {}",
                move_row(9, 10)
            ),
            append_alone: format!(
                "WITH s AS (SELECT 1 FROM {s}.sessions WHERE session_id = $1 AND version = $9 \
                 AND (projected = version) = $10 FOR UPDATE), \
                 c AS (INSERT INTO {s}.log (session_id, n, lines) \
                 SELECT $1, nextval('{s}.log_n'), $2 FROM s RETURNING n), \
                 e AS (INSERT INTO {s}.entries \
                 (session_id, entry_id, pos, class, body, terms, groups, ts, lex) \
                 SELECT $1, r.id, r.at, r.class, r.body, j.j -> 't', j.j -> 'g', r.ts, \
                 r.lex::tsvector \
                 FROM c, unnest($11::bytea[], $12::bigint[], $13::smallint[], $14::text[], \
                 $20::text[], $21::bigint[], $23::text[]) AS r(id, at, class, body, terms, ts, lex), \
                 LATERAL (SELECT r.terms::jsonb AS j) j \
                 ON CONFLICT (session_id, entry_id) DO UPDATE SET pos = EXCLUDED.pos, \
                 class = EXCLUDED.class, body = EXCLUDED.body, terms = EXCLUDED.terms, \
                 groups = EXCLUDED.groups, ts = EXCLUDED.ts, lex = EXCLUDED.lex), \
                 o AS (INSERT INTO {s}.outbox (session_id, first_seq, last_seq, instance, epoch) \
                 SELECT $1, $15, $16, $17, $18 FROM c WHERE $15::bigint IS NOT NULL) {}",
                move_row(19, 22)
            ),
            position: format!(
                "SELECT version, projected = version FROM {s}.sessions WHERE session_id = $1"
            ),
            delete_log: format!("DELETE FROM {s}.log WHERE session_id = $1"),
            update_row: format!(
                "UPDATE {s}.sessions SET base = $2, version = $3, chunks = $4, meta = $5, \
                 created_at = $6, updated_at = $7, terms = $8::text::jsonb -> 't', \
                 groups = $8::text::jsonb -> 'g', lex = $9::text::tsvector WHERE session_id = $1"
            ),
            delete_row: format!("DELETE FROM {s}.sessions WHERE session_id = $1"),
            meta: format!("SELECT meta FROM {s}.sessions WHERE session_id = $1"),
            session_ids: format!("SELECT session_id FROM {s}.sessions ORDER BY session_id"),
            stored_ids: format!(
                "SELECT session_id FROM {s}.sessions UNION SELECT session_id FROM {s}.attachments \
                 ORDER BY 1"
            ),
            metas: format!("SELECT meta FROM {s}.sessions WHERE meta IS NOT NULL"),
            page_created_asc: page(">", "created_at", "ASC"),
            page_created_desc: page("<", "created_at", "DESC"),
            page_updated_desc: page("<", "updated_at", "DESC"),
            first_created_asc: first("created_at", "ASC"),
            first_created_desc: first("created_at", "DESC"),
            first_updated_desc: first("updated_at", "DESC"),
            insert_outbox: format!(
                "INSERT INTO {s}.outbox (session_id, first_seq, last_seq, instance, epoch, ended) \
                 VALUES ($1, $2, $3, $4, $5, $6)"
            ),
            strip_ended_metadata: format!(
                "UPDATE {s}.outbox SET ended = (ended::jsonb - 'metadata')::text \
                 WHERE session_id = ANY($1) AND ended IS NOT NULL"
            ),
            follow: format!(
                "SELECT id, session_id, first_seq, last_seq, instance, epoch, ended FROM {s}.outbox \
                 WHERE id > $1 OR id = ANY($2) ORDER BY id"
            ),
            trim_outbox: format!("DELETE FROM {s}.outbox WHERE at < now() - interval '1 hour'"),
            outbox_head: format!("SELECT coalesce(max(id), 0) FROM {s}.outbox"),
            follower_cursor: format!("SELECT cursor FROM {s}.followers WHERE instance = $1"),
            save_follower_cursor: format!(
                "INSERT INTO {s}.followers (instance, cursor) VALUES ($1, $2) \
                 ON CONFLICT (instance) DO UPDATE SET cursor = EXCLUDED.cursor, at = now()"
            ),
            presence: format!(
                "WITH beat AS (INSERT INTO {s}.followers (instance, cursor) VALUES ($1, $2) \
                 ON CONFLICT (instance) DO UPDATE SET cursor = EXCLUDED.cursor, at = now()) \
                 SELECT EXISTS (SELECT 1 FROM {s}.followers WHERE instance <> $1 \
                 AND at > now() - interval '{PRESENT_FOR_SECS} seconds')"
            ),
            attachment: format!(
                "SELECT meta, bytes FROM {s}.attachments WHERE session_id = $1 AND attachment_id = $2"
            ),
            attachment_meta: format!(
                "SELECT meta FROM {s}.attachments WHERE session_id = $1 AND attachment_id = $2"
            ),
            attachments: format!(
                "SELECT meta FROM {s}.attachments WHERE session_id = $1 ORDER BY attachment_id"
            ),
            put_attachment: format!(
                "INSERT INTO {s}.attachments (session_id, attachment_id, meta, bytes) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (session_id, attachment_id) \
                 DO UPDATE SET meta = EXCLUDED.meta, bytes = EXCLUDED.bytes"
            ),
            delete_attachment: format!(
                "DELETE FROM {s}.attachments WHERE session_id = $1 AND attachment_id = $2 \
                 RETURNING 1"
            ),
            delete_attachments: format!("DELETE FROM {s}.attachments WHERE session_id = $1"),
            lifecycle: format!("SELECT lifecycle FROM {s}.lifecycles WHERE session_id = $1"),
            lifecycles: format!("SELECT session_id, lifecycle FROM {s}.lifecycles"),
            put_lifecycle: format!(
                "INSERT INTO {s}.lifecycles (session_id, lifecycle) VALUES ($1, $2) \
                 ON CONFLICT (session_id) DO UPDATE SET lifecycle = EXCLUDED.lifecycle"
            ),
            delete_lifecycle: format!("DELETE FROM {s}.lifecycles WHERE session_id = $1"),
            project: format!(
                "SELECT {s}.project($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, \
                 $15, $16)"
            ),
            rows_leaf: format!(
                "SELECT leaf FROM {s}.sessions WHERE session_id = $1 AND projected = version"
            ),
            rows_entry: format!(
                "SELECT e.body FROM {s}.sessions s LEFT JOIN {s}.entries e \
                 ON e.session_id = s.session_id AND e.entry_id = $2 \
                 WHERE s.session_id = $1 AND s.projected = s.version"
            ),
            rows_locate: format!(
                "SELECT s.leaf, s.path_len, e.pos, e.class FROM {s}.sessions s \
                 LEFT JOIN {s}.entries e ON e.session_id = s.session_id \
                 AND e.entry_id = $2::bytea AND e.pos IS NOT NULL \
                 WHERE s.session_id = $1 AND s.projected = s.version"
            ),
            rows_after: rows_window(s, ">=", "ASC"),
            rows_before: rows_window(s, "<", "DESC"),
        }
    }
}

impl Sql {
    /// Prepares the statements of a page read on `client`, all in one round trip.
    pub async fn prepare_reads(
        &self,
        client: &impl deadpool_postgres::GenericClient,
    ) -> Result<(), StoreError> {
        tokio::try_join!(
            client.prepare_cached(&self.meta),
            client.prepare_cached(&self.rows_leaf),
            client.prepare_cached(&self.rows_entry),
            client.prepare_cached(&self.rows_locate),
            client.prepare_cached(&self.rows_after),
            client.prepare_cached(&self.rows_before)
        )
        .map_err(|e| db_error("prepare the reads", &e))?;
        Ok(())
    }
}

/// A window of the active path from the entry rows (`cmp` the position, `dir` the order). The
/// classes are a list, not a bit mask: the planner estimates `class = ANY(…)` from the column's
/// statistics, while a mask expression's default estimate made it sort a whole session's rows.
fn rows_window(s: &str, cmp: &str, dir: &str) -> String {
    format!(
        "SELECT s.leaf, e.pos, e.body FROM {s}.sessions s LEFT JOIN LATERAL \
         (SELECT pos, body FROM {s}.entries WHERE session_id = s.session_id AND pos {cmp} $2 \
         AND class = ANY($3::smallint[]) ORDER BY pos {dir} LIMIT $4) e ON true \
         WHERE s.session_id = $1 AND s.projected = s.version"
    )
}

/// Brings the schema to [`SCHEMA_VERSION`]: in one transaction holding an advisory lock on the
/// schema's name, so instances starting together migrate once and the others find it done.
/// Refuses a schema a newer build migrated further than this one knows.
pub async fn migrate(client: &mut Client, schema: &str) -> Result<i32, StoreError> {
    let fail = |e: tokio_postgres::Error| db_error("migrate", &e);
    let tx = client.transaction().await.map_err(fail)?;
    tx.execute("SELECT pg_advisory_xact_lock(hashtext('session-manager:' || $1))", &[&schema])
        .await
        .map_err(fail)?;
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {schema}; \
         CREATE TABLE IF NOT EXISTS {schema}.schema_version (version integer NOT NULL)"
    ))
    .await
    .map_err(fail)?;
    let found: Option<i32> = tx
        .query_one(&format!("SELECT max(version) FROM {schema}.schema_version"), &[])
        .await
        .map_err(fail)?
        .get(0);
    let found = found.unwrap_or(0);
    if found > SCHEMA_VERSION {
        return Err(StoreError::Unsupported(format!(
            "postgres: schema {schema} is at version {found}; this build knows versions up to \
             {SCHEMA_VERSION}: run a newer session-manager"
        )));
    }
    for (from, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let to = from as i32 + 1;
        let started = std::time::Instant::now();
        if found > 0 {
            // An upgrade: some steps rewrite every entry row (version 8), which takes a while.
            tracing::info!("postgres: schema {schema}: migrating from version {from} to {to}");
        }
        tx.batch_execute(&migration.replace("{s}", schema)).await.map_err(fail)?;
        if found > 0 {
            let secs = started.elapsed().as_secs_f64();
            tracing::info!("postgres: schema {schema}: at version {to} after {secs:.1} s");
        }
        tx.execute(&format!("INSERT INTO {schema}.schema_version (version) VALUES ($1)"), &[&to])
            .await
            .map_err(fail)?;
    }
    tx.commit().await.map_err(fail)?;
    Ok(SCHEMA_VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_plain_identifiers() {
        for ok in ["session_manager", "_x", "a1", &"a".repeat(63)] {
            assert!(valid_schema_name(ok), "{ok}");
        }
        for bad in ["", "1a", "A", "a-b", "a;drop", "a b", "\"a\"", &"a".repeat(64)] {
            assert!(!valid_schema_name(bad), "{bad}");
        }
    }

    #[test]
    fn the_tier_migration_knows_the_tiers_and_the_limit() {
        let tiers: Vec<String> = crate::search::terms::TIERS.iter().map(u64::to_string).collect();
        let migration = MIGRATIONS[7];
        assert_eq!(migration.matches(&format!("'{{{}}}'", tiers.join(","))).count(), 2);
        let limit = crate::search::terms::TERMS_MAX_BYTES.to_string();
        assert!(migration.contains(&format!("> {limit};")), "{limit}");
    }

    #[test]
    fn the_search_indexes_keep_short_pending_lists() {
        let setting = format!("SET (gin_pending_list_limit = {PENDING_LIST_KB});");
        for index in ["entries_lex", "sessions_lex"] {
            assert!(MIGRATIONS[8].contains(&format!("ALTER INDEX {{s}}.{index} {setting}")));
        }
    }

    #[test]
    fn one_migration_per_version() {
        assert_eq!(MIGRATIONS.len(), SCHEMA_VERSION as usize);
        assert!(MIGRATIONS.iter().all(|m| m.contains("{s}.")), "every table is in our schema");
    }
}
