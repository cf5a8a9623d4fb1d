//! Fuzz target `jsonl_replay`: arbitrary bytes as a session log. Replay never panics and counts
//! sanely; the replayed state's snapshot replays to the same state with no skipped line and
//! re-encodes byte for byte; the tail repair (a torn line or an incomplete trailing group) never
//! changes the replayed state; `last_meta` finds the meta a full replay ends with, and
//! `last_meta_in_tail` of any suffix says that or nothing; and the `MemStore` import / export path
//! agrees with all that.
#![no_main]

use libfuzzer_sys::fuzz_target;
use session_core::jsonl::{self, TailRepair};
use session_core::MemStore;

fuzz_target!(|data: &[u8]| {
    let (state, stats) = jsonl::replay(data);
    assert!(stats.skipped <= stats.lines);

    let snapshot = jsonl::encode_snapshot(&state);
    let (again, again_stats) = jsonl::replay(&snapshot);
    assert_eq!(again_stats.skipped, 0, "a snapshot line was skipped");
    assert!(again == state, "the snapshot replays to another state");
    assert_eq!(jsonl::encode_snapshot(&again), snapshot, "snapshot is not stable");

    match jsonl::tail_repair(data) {
        TailRepair::None => {}
        TailRepair::Newline => {
            let mut fixed = data.to_vec();
            fixed.push(b'\n');
            assert!(jsonl::replay(&fixed).0 == state, "adding the newline changed the state");
        }
        TailRepair::Truncate(len) => {
            assert!(len <= data.len());
            assert!(jsonl::replay(&data[..len]).0 == state, "the cut changed the state");
        }
    }
    assert_eq!(jsonl::last_meta(data), state.meta, "last_meta disagrees with the replay");
    if let Some(cut) = data.iter().position(|b| *b == b'\n') {
        let decided = jsonl::last_meta_in_tail(&data[cut + 1..]);
        assert!(decided.is_none() || decided == state.meta, "last_meta_in_tail decided wrong");
    }
    let (with_repair, repair_stats, repair) = jsonl::replay_with_repair(data);
    assert!(with_repair == state && repair_stats == stats && repair == jsonl::tail_repair(data));

    let store = MemStore::new();
    let imported = store.load_jsonl("s_fuzz.jsonl", data).expect("the file name names a session");
    assert_eq!((imported.lines, imported.skipped), (stats.lines, stats.skipped));
    assert!(store.session_state(&imported.session_id) == state);
    match store.export_jsonl(&imported.session_id) {
        Some(exported) => assert_eq!(exported, snapshot),
        None => assert!(state.is_empty(), "a non-empty state was not stored"),
    }
});
