//! The `begin`-marker framing of session-core's codec on random logs (the `jsonl_replay` fuzz
//! target's properties, run in `cargo test`): logs of records, markers with any count, old `group`
//! lines, garbage and blank lines, cut at any byte. Replay and the tail repair agree, the repair
//! never changes the state, an append after it replays with nothing of the cut part left,
//! `last_meta` equals the replayed meta and `last_meta_in_tail` of any suffix says that or
//! nothing. `PROPTEST_CASES` overrides the default of 256 cases.

use proptest::prelude::*;
use serde_json::json;
use session_core::conformance::{message_entry, sample_meta};
use session_core::jsonl::{self, TailRepair};

fn line_strategy() -> impl Strategy<Value = String> {
    let id = proptest::sample::select(vec!["e0", "e1", "e2"]);
    prop_oneof![
        3 => (0i64..5).prop_map(|at| json!({"type": "meta", "meta": sample_meta("s", at)}).to_string()),
        3 => (id.clone(), proptest::option::of(id.clone())).prop_map(|(e, p)| {
            json!({"type": "entry", "entry": message_entry(e, p, 1, "x")}).to_string()
        }),
        2 => id.clone().prop_map(|e| json!({"type": "leaf", "entry_id": e}).to_string()),
        1 => (id.clone(), 0i64..5).prop_map(|(e, at)| {
            json!({"type": "append", "entry": message_entry(e, None, 1, "y"),
                "meta": sample_meta("s", at)}).to_string()
        }),
        1 => id.clone().prop_map(|e| json!({"type": "commit", "entry_id": e}).to_string()),
        1 => Just(r#"{"type":"settle"}"#.to_string()),
        4 => (0usize..4).prop_map(|n| format!(r#"{{"type":"begin","lines":{n}}}"#)),
        1 => (0i64..5).prop_map(|at| {
            json!({"type": "group", "records": [{"type": "meta", "meta": sample_meta("s", at)}]})
                .to_string()
        }),
        1 => Just("not json".to_string()),
        1 => Just("  ".to_string()),
    ]
}

fn log_strategy() -> impl Strategy<Value = Vec<u8>> {
    (proptest::collection::vec(line_strategy(), 0..14), 0u16..=1000).prop_map(|(lines, at)| {
        let mut bytes = lines.join("\n").into_bytes();
        bytes.push(b'\n');
        let cut = bytes.len() * usize::from(at) / 1000;
        bytes.truncate(cut);
        bytes
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn replay_repair_and_last_meta_agree(bytes in log_strategy()) {
        let (state, stats, repair) = jsonl::replay_with_repair(&bytes);
        prop_assert_eq!((&state, stats), (&jsonl::replay(&bytes).0, jsonl::replay(&bytes).1));
        prop_assert_eq!(repair, jsonl::tail_repair(&bytes));
        prop_assert_eq!(jsonl::last_meta(&bytes), state.meta.clone());
        for (at, _) in bytes.iter().enumerate().filter(|(_, b)| **b == b'\n') {
            let decided = jsonl::last_meta_in_tail(&bytes[at + 1..]);
            prop_assert!(decided.is_none() || decided == state.meta, "suffix at {}", at + 1);
        }
        let mut repaired = bytes.clone();
        match repair {
            TailRepair::None => {}
            TailRepair::Newline => repaired.push(b'\n'),
            TailRepair::Truncate(at) => repaired.truncate(at),
        }
        prop_assert_eq!(&jsonl::replay(&repaired).0, &state, "the repair changed the state");
        prop_assert_eq!(jsonl::tail_repair(&repaired), TailRepair::None);
        // What the repair keeps is what replay applied: an appended record lands right after it.
        let next = json!({"type": "meta", "meta": sample_meta("s", 9)}).to_string() + "\n";
        repaired.extend_from_slice(next.as_bytes());
        let mut want = state.clone();
        want.apply(&serde_json::from_str(&next).expect("record"));
        prop_assert_eq!(jsonl::replay(&repaired).0, want);
        let snapshot = jsonl::encode_snapshot(&state);
        let (again, again_stats) = jsonl::replay(&snapshot);
        prop_assert_eq!((again, again_stats.skipped), (state, 0));
    }
}
