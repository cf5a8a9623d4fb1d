//! Shared fixture of the fuzz targets: a small seeded store (two sessions, a branch, a fork, an
//! attachment, a draft), a full dump of a `MemStore` for before/after comparisons, and the checks
//! every target makes on what the core answers.

use serde_json::{json, Value};
use session_core::record::SessionState;
use session_core::wire::AttachmentMeta;
use std::sync::OnceLock;

use session_core::{catalog, jsonl, ChangeSet, Env, Limits, ManualClock, MemStore, Outcome};
use session_core::{Clock as _, IdGen as _, SeqIds, SessionError, Store as _, Write};

/// The session the fixture builds (its fork is `s_001`).
pub const SESSION: &str = "s1";

/// Small list limits and attachments, so paging and the size check are reached quickly.
const FIXTURE_LIMITS: Limits = Limits {
    default_list_limit: 3,
    max_list_limit: 5,
    max_attachment_bytes: 64,
    feed_retention: 4,
    feed_retention_bytes: session_core::feed::DEFAULT_RETENTION_BYTES,
    trash_retention_secs: session_core::lifecycle::DEFAULT_TRASH_RETENTION_SECS,
};

/// How many ids of each kind a `SeqIds` has handed out.
#[derive(Debug, Clone, Copy)]
struct Counters {
    sessions: usize,
    entries: usize,
    attachments: usize,
}

impl Counters {
    /// Reads the counters by drawing the next id of each kind (the generator is spent after).
    fn drain(ids: &SeqIds) -> Counters {
        let used = |next: String| next[2..].parse::<usize>().expect("a sequential id") - 1;
        Counters {
            sessions: used(ids.session_id()),
            entries: used(ids.entry_id()),
            attachments: used(ids.attachment_id()),
        }
    }

    /// Moves a fresh generator to the same place.
    fn advance(&self, ids: &SeqIds) {
        (0..self.sessions).for_each(|_| drop(ids.session_id()));
        (0..self.entries).for_each(|_| drop(ids.entry_id()));
        (0..self.attachments).for_each(|_| drop(ids.attachment_id()));
    }
}

/// A seeded in-memory store with the deterministic clock and ids of the BDD suite.
#[derive(Debug)]
pub struct Fixture {
    pub store: MemStore,
    pub clock: ManualClock,
    pub ids: SeqIds,
    pub limits: Limits,
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

fn text(role: &str, t: &str) -> Value {
    json!({"role": role, "content": [{"type": "text", "text": t}], "timestamp": 1})
}

impl Fixture {
    /// The fixture, copied from one built once per process (building it by calls costs more than
    /// most fuzz inputs).
    pub fn new() -> Self {
        static TEMPLATE: OnceLock<(Dump, Counters, i64)> = OnceLock::new();
        let (sessions, counters, now) = TEMPLATE.get_or_init(|| {
            let built = Fixture::build();
            let counters = Counters::drain(&built.ids);
            (dump(&built.store), counters, built.clock.now_ms())
        });
        let f = Fixture {
            store: MemStore::new(),
            clock: ManualClock::new(),
            ids: SeqIds::new(),
            limits: FIXTURE_LIMITS,
        };
        for (sid, state, attachments) in sessions {
            f.store.import_state(sid, state.clone());
            for (meta, bytes) in attachments {
                let put = Write::PutAttachment { meta: meta.clone(), bytes: bytes.clone() };
                f.store.apply(&ChangeSet::new(sid.clone()).with(put)).expect("mem store applies");
            }
        }
        counters.advance(&f.ids);
        f.clock.set(*now);
        f
    }

    /// `s1`: user e_001 → assistant e_002 (a function call) → result e_003 → custom entry e_004,
    /// a sibling branch e_005 under e_001, an attachment a_001 referenced by e_006 (under e_005) and
    /// parked in the draft, the leaf moved back to e_004; `s_001`: a fork of `s1` at e_002.
    pub fn build() -> Self {
        let limits = FIXTURE_LIMITS;
        let f = Fixture {
            store: MemStore::new(),
            clock: ManualClock::new(),
            ids: SeqIds::new(),
            limits,
        };
        let assistant = json!({"role": "assistant", "stop_reason": "function_call", "model": "m",
            "provider": "p", "timestamp": 2, "content": [{"type": "function_call", "id": "c1",
            "function_id": "tool", "arguments": {"q": [1, {"r": null}]}}]});
        let result = json!({"role": "function_result", "function_call_id": "c1",
            "function_id": "tool", "content": [], "details": {"raw": "x"}, "timestamp": 3});
        let setup = [
            (
                "session::ensure",
                json!({"session_id": SESSION, "title": "t", "metadata": {"owner": "u1"}}),
            ),
            ("session::append", json!({"session_id": SESSION, "message": text("user", "hi")})),
            ("session::append", json!({"session_id": SESSION, "message": assistant})),
            ("session::append", json!({"session_id": SESSION, "message": result})),
            (
                "session::append",
                json!({"session_id": SESSION, "custom": {"custom_type": "note", "data": 1}}),
            ),
            (
                "session::append",
                json!({"session_id": SESSION, "parent_id": "e_001", "message": text("user", "branch")}),
            ),
            (
                "session::put-attachment",
                json!({"session_id": SESSION, "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}),
            ),
            (
                "session::append",
                json!({"session_id": SESSION, "message": {"role": "user", "timestamp": 4,
                "content": [{"type": "file", "attachment_id": "a_001", "name": "a.txt", "mime": "text/plain", "size": 5}]}}),
            ),
            (
                "session::set-draft",
                json!({"session_id": SESSION, "draft": "draft", "attachment_ids": ["a_001"]}),
            ),
            ("session::fork", json!({"session_id": SESSION, "entry_id": "e_002"})),
            ("session::set-active-leaf", json!({"session_id": SESSION, "entry_id": "e_004"})),
        ];
        for (id, payload) in setup {
            if let Err(e) = f.call(id, payload) {
                panic!("seed call {id} failed: {e}");
            }
            f.clock.advance(1000);
        }
        f
    }

    pub fn env(&self) -> Env<'_> {
        Env { clock: &self.clock, ids: &self.ids, limits: self.limits }
    }

    /// Runs a catalog function (unknown ids answer `session/invalid_request`).
    pub fn call(&self, id: &str, payload: Value) -> Result<Outcome<Value>, SessionError> {
        catalog::call(&self.store, &self.env(), id, payload)
    }
}

/// Everything a `MemStore` holds: per session, its state and its attachments.
pub type Dump = Vec<(String, SessionState, Vec<(AttachmentMeta, Vec<u8>)>)>;

/// A full dump of the store, sessions and attachments in id order.
/// The function a `dispatch` input line's first byte picks: the catalog's functions, seed then
/// extensions (so a new extension never shifts the seeds of the others); past the end, an unknown
/// id.
pub fn function_at(pick: u8) -> &'static str {
    catalog::all_operations().nth(usize::from(pick)).map_or("session::no-such-function", |op| op.id)
}

/// The first byte of a `dispatch` line that picks function `id` ([`function_at`]'s inverse).
pub fn pick_of(id: &str) -> u8 {
    let index = catalog::all_operations().position(|op| op.id == id).expect("a catalog id");
    u8::try_from(index).expect("fewer than 256 functions")
}

pub fn dump(store: &MemStore) -> Dump {
    let mut ids = store.session_ids();
    for meta in store.list_metas().unwrap_or_default() {
        ids.push(meta.session_id);
    }
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .map(|sid| {
            let mut metas = store.list_attachments(&sid).expect("mem store lists");
            metas.sort_by(|a, b| a.attachment_id.cmp(&b.attachment_id));
            let attachments = metas
                .into_iter()
                .map(|m| {
                    store.get_attachment(&sid, &m.attachment_id).expect("get").expect("listed")
                })
                .collect();
            let state = store.session_state(&sid);
            (sid, state, attachments)
        })
        .collect()
}

/// Every error a caller sees: a known `session/*` code and a wire message `"<code>: <text>"`.
pub fn check_error(e: &SessionError) {
    let message = e.to_string();
    assert!(message.starts_with("session/"), "error without a session/ code: {message}");
    assert!(message.starts_with(&format!("{}: ", e.code.as_str())), "message: {message}");
}

/// Replays the snapshot of every stored session and checks it rebuilds the same state.
pub fn check_snapshots_replay(store: &MemStore) {
    for sid in store.session_ids() {
        let state = store.session_state(&sid);
        let bytes = store.export_jsonl(&sid).expect("a stored session exports");
        let (again, stats) = jsonl::replay(&bytes);
        assert_eq!(stats.skipped, 0, "snapshot of {sid:?} has lines replay skips");
        assert_eq!(again, state, "snapshot of {sid:?} replays to another state");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copied_fixture_equals_the_built_one() {
        let (built, copied) = (Fixture::build(), Fixture::new());
        assert!(dump(&built.store) == dump(&copied.store));
        assert_eq!(built.clock.now_ms(), copied.clock.now_ms());
        assert_eq!(built.ids.entry_id(), copied.ids.entry_id());
        assert_eq!(built.ids.session_id(), copied.ids.session_id());
        assert_eq!(built.ids.attachment_id(), copied.ids.attachment_id());
    }
}
