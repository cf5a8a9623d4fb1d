//! The search model test (issue 39): one seeded script of appends (branches included), edits,
//! retitles, trashes and deletes over four sessions, run on a backend and on the memory store
//! (whose search is the scan, the oracle); then every query of the script — words, prefixes,
//! phrases, both branch modes, pages of one to three hits — must answer the same pages on both.
//! `settle` runs where the script says (an index that catches up later takes the writes there,
//! so some searches find them indexed and some unindexed). Backends run it over many seeds.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{json, Value};

use super::context_model::call;
use super::context_rng::Rng;
use crate::env::{Env, Limits, ManualClock, SeqIds};
use crate::mem_store::MemStore;
use crate::store::Store;

/// What the script's texts and queries are made of: stems and their derivations, identifiers,
/// paths, CJK, folded letters.
const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "parser",
    "parse",
    "fs/mod.rs",
    "camelCase",
    "snake_case",
    "東京都",
    "京都",
    "Straße",
    "café",
    "CAFE",
    "alphabet",
];

const SESSIONS: usize = 4;

/// A word, one of the first four half the time (so phrases of them recur, with pages of hits).
fn word(rng: &mut Rng) -> &'static str {
    let from = if rng.chance(50) { &WORDS[..4] } else { WORDS };
    rng.pick(from).unwrap_or("alpha")
}

fn text(rng: &mut Rng) -> String {
    let words: Vec<&str> = (0..2 + rng.below(6)).map(|_| word(rng)).collect();
    words.join(" ")
}

fn query(rng: &mut Rng) -> String {
    let items: Vec<String> = (0..1 + rng.below(2))
        .map(|_| {
            let (a, b) = (word(rng), word(rng));
            match rng.below(3) {
                0 => a.to_string(),
                1 => format!("{}*", a.get(..3).unwrap_or(a)),
                _ => format!("\"{a} {b}\""),
            }
        })
        .collect();
    items.join(" ")
}

/// Every page of `query`'s hits (`limit` a page, the active branch only with `active`).
pub fn search_pages(
    store: &dyn Store,
    env: &Env<'_>,
    query: &str,
    limit: usize,
    active: bool,
) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut req = json!({"query": query, "limit": limit, "cursor": cursor});
        if active {
            req["branch"] = json!("active");
        }
        let page = call(store, env, "session::search", req).map_err(|e| format!("{query}: {e}"))?;
        cursor = page["next_cursor"].clone();
        out.push(page);
        if cursor.is_null() || out.len() > 64 {
            return Ok(out);
        }
    }
}

/// Runs the script of `seed` on `store` (fresh) and on the scan; `Err` names the first write
/// or query page they answer differently.
pub fn search_agrees_with_scan(
    store: &dyn Store,
    settle: &dyn Fn() -> Result<(), String>,
    seed: u64,
) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let mem = MemStore::new();
    let clocks = [ManualClock::new(), ManualClock::new()];
    let ids = [SeqIds::new(), SeqIds::new()];
    let envs = [
        Env { clock: &clocks[0], ids: &ids[0], limits: Limits::default() },
        Env { clock: &clocks[1], ids: &ids[1], limits: Limits::default() },
    ];
    let stores: [&dyn Store; 2] = [&mem, store];
    let mut appended: Vec<Vec<String>> = vec![Vec::new(); SESSIONS];
    for step in 0..10 + rng.below(50) {
        let session = rng.below(SESSIONS);
        let sid = format!("s{session}");
        let (id, payload) = match rng.below(13) {
            0..=5 => {
                let ensure = json!({"session_id": sid, "title": format!("t{session}")});
                for (store, env) in stores.iter().zip(&envs) {
                    let _ = call(*store, env, "session::ensure", ensure.clone());
                }
                let mine = &mut appended[session];
                let eid = format!("e{step}");
                let mut req = json!({"session_id": sid, "entry_id": eid,
                    "message": {"role": "user", "timestamp": step,
                        "content": [{"type": "text", "text": text(&mut rng)}]}});
                if let Some(parent) = mine.len().checked_sub(1 + rng.below(3)) {
                    req["parent_id"] = json!(mine[parent]);
                }
                mine.push(eid);
                ("session::append", req)
            }
            6 | 7 => {
                let Some(eid) = rng.pick(&appended[session]) else { continue };
                let content = json!([{"type": "text", "text": text(&mut rng)}]);
                let req = json!({"session_id": sid, "entry_id": eid, "content": content});
                ("session::update-message", req)
            }
            8 => ("session::set-meta", json!({"session_id": sid, "title": text(&mut rng)})),
            9 => ("session::trash", json!({"session_id": sid})),
            10 => {
                appended[session].clear();
                ("session::delete", json!({"session_id": sid}))
            }
            _ => {
                settle()?;
                continue;
            }
        };
        let answers: Vec<Result<(), String>> = stores
            .iter()
            .zip(&envs)
            .map(|(store, env)| {
                call(*store, env, id, payload.clone())
                    .map(|_| ())
                    .map_err(|e| format!("{:?}", e.code))
            })
            .collect();
        if answers[0] != answers[1] {
            return Err(format!(
                "seed {seed}: {id} {payload}: scan {:?}, store {:?}",
                answers[0], answers[1]
            ));
        }
    }
    for _ in 0..4 + rng.below(8) {
        let (query, limit, active) = (query(&mut rng), 1 + rng.below(3), rng.chance(50));
        let want = search_pages(&mem, &envs[0], &query, limit, active)?;
        let got = search_pages(store, &envs[1], &query, limit, active)?;
        if got != want {
            return Err(format!(
                "seed {seed}: {query:?} (limit {limit}, active {active}): the scan answers \
                 {want:?}, the store {got:?}"
            ));
        }
    }
    Ok(())
}
