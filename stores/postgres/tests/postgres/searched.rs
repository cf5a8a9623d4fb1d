//! Search through postgres's index (issue 39): a write through one instance is found through
//! another as soon as it is acknowledged, and a deleted session no longer; the index covers
//! what this build wrote (no row is left unindexed); rows an older build wrote (no terms) are
//! read instead and give the same hits; rows of schema version 7 (terms, no tier lexemes) get
//! their tiers from the migration; and the core's seeded search model test against the scan,
//! through two instances.

use serde_json::{json, Value};
use session_core::conformance::search_agrees_with_scan;
use session_core::search::index::Wanted;
use session_core::wire::SearchKind;
use session_core::{Env, Limits, ManualClock, SeqIds};
use session_store_postgres::PgStore;

use super::{admin, call, fresh_config, make_two};

fn message(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
}

fn hits(answer: &Value) -> Vec<String> {
    answer["hits"]
        .as_array()
        .map(|hits| {
            let id = |h: &Value, key: &str| h[key].as_str().unwrap_or("-").to_string();
            hits.iter().map(|h| format!("{}/{}", id(h, "session_id"), id(h, "entry_id"))).collect()
        })
        .unwrap_or_default()
}

pub fn writes_are_found_through_another_instance(url: &str) -> Result<(), String> {
    let config = fresh_config(url);
    let (a, b) = (PgStore::open(&config)?, PgStore::open(&config)?);
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let search = |q: &str| call(&b, &env, "session::search", json!({"query": q})).map(|a| hits(&a));
    call(&a, &env, "session::ensure", json!({"session_id": "s", "title": "Zebra notes"}))?;
    for (i, text) in ["the quokka parser", "snake_case quokka", "nothing here"].iter().enumerate() {
        let append =
            json!({"session_id": "s", "entry_id": format!("e{i}"), "message": message(text)});
        call(&a, &env, "session::append", append)?;
        let found = search("quokka")?;
        let want = (0..=i.min(1)).count();
        if found.len() != want {
            return Err(format!("after append {i}: {found:?}"));
        }
    }
    if search("zebra")? != ["s/-"] {
        return Err(format!("the title: {:?}", search("zebra")?));
    }
    let query = session_core::search::parse("quokka").map_err(|e| e.to_string())?;
    let kinds = [SearchKind::Message, SearchKind::Session];
    let wanted =
        Wanted { kinds: &kinds, roles: None, since: None, until: None, keep: None, after: None };
    let found = b.search_find(&query, &wanted).map_err(|e| e.to_string())?;
    if found.candidates.len() != 2 || !found.unindexed.is_empty() || !found.exact {
        return Err(format!("the index does not cover the writes: {found:?}"));
    }
    call(&a, &env, "session::delete", json!({"session_id": "s"}))?;
    match search("quokka")?.as_slice() {
        [] => Ok(()),
        left => Err(format!("a deleted session is found: {left:?}")),
    }
}

pub fn rows_without_terms_are_read(url: &str) -> Result<(), String> {
    let config = fresh_config(url);
    let store = PgStore::open(&config)?;
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    for (sid, title) in [("s1", "parser one"), ("s2", "other")] {
        call(&store, &env, "session::ensure", json!({"session_id": sid, "title": title}))?;
        for (i, text) in ["parser parser", "the parser", "none"].iter().enumerate() {
            let append =
                json!({"session_id": sid, "entry_id": format!("e{i}"), "message": message(text)});
            call(&store, &env, "session::append", append)?;
        }
    }
    let request = json!({"query": "parser", "limit": 2});
    let pages = |store: &PgStore| -> Result<Vec<Value>, String> {
        session_core::conformance::search_pages(store, &env, "parser", 2, false)
    };
    let before = pages(&store)?;
    if hits(&call(&store, &env, "session::search", request.clone())?).len() != 2 {
        return Err(format!("no hits: {before:?}"));
    }
    // What a build before schema version 7 left: rows without terms.
    let s = &config.schema;
    admin(
        url,
        &format!("UPDATE {s}.entries SET terms = NULL, lex = NULL WHERE session_id = 's1'::bytea"),
    )?;
    admin(url, &format!("UPDATE {s}.sessions SET terms = NULL, lex = NULL"))?;
    let after = pages(&PgStore::open(&config)?)?;
    if after != before {
        return Err(format!("with rows unindexed: {after:?}, indexed: {before:?}"));
    }
    Ok(())
}

/// What schema version 7 wrote (lexemes without tiers) is migrated to the same pages.
pub fn version_7_rows_get_their_tiers(url: &str) -> Result<(), String> {
    let config = fresh_config(url);
    let store = PgStore::open(&config)?;
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    call(&store, &env, "session::ensure", json!({"session_id": "s", "title": "t"}))?;
    let texts = ["tick tick tick tick tick", "tick", "tick tick tick", "tick tick", "tock"];
    for (i, text) in texts.iter().enumerate() {
        let append =
            json!({"session_id": "s", "entry_id": format!("e{i}"), "message": message(text)});
        call(&store, &env, "session::append", append)?;
    }
    let pages =
        |store: &PgStore| session_core::conformance::search_pages(store, &env, "tick", 1, false);
    let before = pages(&store)?;
    drop(store);
    let s = &config.schema;
    let tiers =
        |url| admin(url, &format!("SELECT count(*) FROM {s}.entries WHERE lex @@ '''#2#tick'''"));
    if tiers(url)? != ["3"] {
        return Err(format!("tier lexemes written: {:?}", tiers(url)?));
    }
    admin(
        url,
        &format!(
            "UPDATE {s}.entries SET lex = array_to_tsvector(ARRAY(SELECT jsonb_object_keys(terms))); \
             DELETE FROM {s}.schema_version WHERE version >= 8"
        ),
    )?;
    if tiers(url)? != ["0"] {
        return Err("the rows were not put back to version 7".into());
    }
    let after = pages(&PgStore::open(&config)?)?;
    if tiers(url)? != ["3"] || after != before {
        return Err(format!(
            "migrated: {:?} tiered, pages {after:?}, before {before:?}",
            tiers(url)?
        ));
    }
    Ok(())
}

/// Both search indexes keep a short pending list (`schema::PENDING_LIST_KB`), which every lookup
/// reads whole.
pub fn the_pending_lists_stay_short(url: &str) -> Result<(), String> {
    let config = fresh_config(url);
    drop(PgStore::open(&config)?);
    let s = &config.schema;
    let limits = admin(
        url,
        &format!(
            "SELECT c.relname || ' ' || array_to_string(c.reloptions, ',') FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = '{s}' AND c.relname IN ('entries_lex', 'sessions_lex') \
             ORDER BY c.relname"
        ),
    )?;
    let kb = session_store_postgres::PENDING_LIST_KB;
    let wanted: Vec<String> = ["entries_lex", "sessions_lex"]
        .iter()
        .map(|index| format!("{index} gin_pending_list_limit={kb}"))
        .collect();
    match limits == wanted {
        true => Ok(()),
        false => Err(format!("index options {limits:?}, wanted {wanted:?}")),
    }
}

pub fn the_index_answers_as_the_scan(url: &str) -> Result<(), String> {
    for seed in 0..24 {
        let store = make_two(url);
        search_agrees_with_scan(&*store, &|| Ok(()), seed)?;
    }
    Ok(())
}
