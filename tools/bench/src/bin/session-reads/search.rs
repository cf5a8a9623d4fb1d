//! The search phase of session-reads (`--search`, issue 39's acceptance 2): a corpus of sessions
//! of [`PER_SESSION`] messages (~500 bytes of text each) grown to each `--entries` total, then
//! `session::search` — a selective word (in one entry of 10,000), a common word (in nearly every
//! entry) at `limit: 20`, a phrase and a prefix — each next to a no-op registered with the
//! search's schemas answering the same reply size.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use super::{in_flight, measure_against, settle, text, Bench, Row, SCHEMA_NOOPS};

/// Messages per session of the corpus.
pub(crate) const PER_SESSION: usize = 50;
/// The selective word: in every entry whose number is 7 modulo 10,000.
const RARE: &str = "zirconium";
const IN_FLIGHT: usize = 16;

/// Message `i` of the corpus: ~500 bytes of the shared words, [`RARE`] in one of 10,000.
fn message(i: usize) -> Value {
    let mut words = text(i, 480 + i * 37 % 64);
    if i % 10_000 == 7 {
        words.push_str(" zirconium");
    }
    let ts = 1_700_000_000_000_i64 + i as i64;
    match i % 2 {
        0 => json!({"role": "user", "content": [{"type": "text", "text": words}], "timestamp": ts}),
        _ => json!({"role": "assistant", "content": [{"type": "text", "text": words}],
            "stop_reason": "end", "model": "model-1", "provider": "provider-1", "timestamp": ts}),
    }
}

/// Grows the corpus from `from` to `to` entries (`IN_FLIGHT` sessions filled at a time).
async fn fill(b: &Arc<Bench>, from: usize, to: usize) {
    in_flight(b, from / PER_SESSION, to / PER_SESSION, IN_FLIGHT, |b, s| async move {
        let sid = format!("search-{s}");
        b.must("session::ensure", json!({"session_id": sid, "title": format!("corpus {s}")})).await;
        let first = s * PER_SESSION;
        let messages: Vec<Value> = (first..first + PER_SESSION).map(message).collect();
        let payload = json!({"session_id": sid, "messages": messages});
        // Not idempotent: a lost answer is read back before it is sent again.
        if b.once("session::append-many", payload.clone()).await.is_err() {
            let meta = b.must("session::get", json!({"session_id": sid})).await;
            if meta["meta"]["message_count"].as_u64() != Some(PER_SESSION as u64) {
                b.must("session::append-many", payload).await;
            }
        }
    })
    .await;
}

/// The corpus grown to each of `totals` (ascending), the searches measured at each.
pub(crate) async fn phase(
    b: &Arc<Bench>,
    totals: &[usize],
    held: usize,
    samples: usize,
    pid: Option<u32>,
    only: Option<&str>,
) -> Vec<Row> {
    let noop = SCHEMA_NOOPS.iter().find(|(id, _)| *id == "session::search").expect("a no-op").1;
    let (mut rows, mut held) = (Vec::new(), held);
    for &total in totals {
        let started = Instant::now();
        fill(b, held, total).await;
        held = held.max(total);
        eprintln!(
            "session-reads: corpus of {total} entries in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        settle(pid).await;
        let asked = Instant::now();
        let rare = b.must("session::search", json!({"query": RARE, "limit": 100})).await;
        let found = rare["hits"].as_array().map_or(0, Vec::len);
        // Untimed by the table: the first search (during a rebuild, it scans what is unindexed).
        let ms = asked.elapsed().as_secs_f64() * 1000.0;
        eprintln!("session-reads: first search at {total} entries: {found} hits in {ms:.1} ms");
        assert_eq!(found, total.div_ceil(10_000).min(100), "every {RARE} entry is found");
        let calls = [
            (
                format!("selective word ({found} hits, limit 100)"),
                json!({"query": RARE, "limit": 100}),
            ),
            ("common word, limit 20".into(), json!({"query": "session", "limit": 20})),
            (
                "phrase \"worker reply\", limit 20".into(),
                json!({"query": "\"worker reply\"", "limit": 20}),
            ),
            ("prefix curs*, limit 20".into(), json!({"query": "curs*", "limit": 20})),
        ];
        for (call, payload) in calls {
            if only.is_some_and(|only| !call.starts_with(only)) {
                continue;
            }
            let stats = measure_against(b, "session::search", payload, samples, noop).await;
            rows.push(Row { call: format!("session::search {call}"), size: total, stats });
        }
    }
    rows
}
