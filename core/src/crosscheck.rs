//! The cross-host check (feature `conformance`): a deterministic generator of operation sequences
//! over every public function, and the transcript their outcomes make (responses, errors and
//! events as JSON, one line per call) reduced to a digest. Every host runs the same sequences with
//! `SeqIds` + `ManualClock` through its own binding and must produce the same digest, which the
//! native test pins in `core/tests/fixtures/crosscheck.txt`. `no_std`.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::catalog::{OpKind, OPERATIONS};
use crate::env::{Env, Limits, ManualClock, SeqIds};
use crate::store::Store;
use crate::wire::EventEnvelope;

/// Sequences every host runs.
pub const SEQUENCES: u64 = 200;
/// Calls per sequence.
pub const CALLS: usize = 30;

/// What one call produced, as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    /// The response, or `(code, wire message)`.
    pub result: Result<Value, (String, String)>,
    /// Event envelopes (`trigger_type`, `payload`, `session_metadata?`), in order.
    pub events: Vec<Value>,
}

/// A host under test: a fresh deterministic store per sequence.
pub trait Host {
    /// Starts over: empty store, clock at `ManualClock::START_MS`, ids from 1.
    fn reset(&mut self);
    /// Moves the clock forward.
    fn advance(&mut self, ms: i64);
    /// Runs one function.
    fn call(&mut self, function_id: &str, request: Value) -> CallOutput;
}

/// Limits every host uses (small pages, so paging paths run).
pub const LIMITS: Limits = Limits {
    default_list_limit: 3,
    max_list_limit: 5,
    max_attachment_bytes: 64,
    feed_retention: 4,
    feed_retention_bytes: crate::feed::DEFAULT_RETENTION_BYTES,
    trash_retention_secs: crate::lifecycle::DEFAULT_TRASH_RETENTION_SECS,
};

/// The reference host: a store from `make` driven through [`crate::catalog::dispatch`].
pub struct CoreHost<'a> {
    make: &'a dyn Fn() -> alloc::boxed::Box<dyn Store>,
    store: alloc::boxed::Box<dyn Store>,
    clock: ManualClock,
    ids: SeqIds,
}

impl core::fmt::Debug for CoreHost<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CoreHost").finish_non_exhaustive()
    }
}

impl<'a> CoreHost<'a> {
    pub fn new(make: &'a dyn Fn() -> alloc::boxed::Box<dyn Store>) -> Self {
        CoreHost { store: make(), make, clock: ManualClock::new(), ids: SeqIds::new() }
    }
}

impl Host for CoreHost<'_> {
    fn reset(&mut self) {
        self.store = (self.make)();
        self.clock = ManualClock::new();
        self.ids = SeqIds::new();
    }
    fn advance(&mut self, ms: i64) {
        self.clock.advance(ms);
    }
    fn call(&mut self, function_id: &str, request: Value) -> CallOutput {
        let env = Env { clock: &self.clock, ids: &self.ids, limits: LIMITS };
        match crate::catalog::dispatch(&*self.store, &env, function_id, request) {
            None => CallOutput {
                result: Err(("unknown".into(), function_id.into())),
                events: Vec::new(),
            },
            Some(Err(e)) => CallOutput {
                result: Err((e.code.as_str().into(), e.message())),
                events: Vec::new(),
            },
            Some(Ok(outcome)) => CallOutput {
                events: outcome
                    .events
                    .iter()
                    .map(|e| {
                        // The seed's envelope: the feed change (seq) is checked by the feed's own
                        // tests, and every host digests the same fields.
                        let envelope = EventEnvelope { change: None, ..e.to_envelope() };
                        serde_json::to_value(envelope).unwrap_or(Value::Null)
                    })
                    .collect(),
                result: Ok(outcome.response),
            },
        }
    }
}

/// The outcome of a run: the digest and how often each function answered / failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub sequences: u64,
    pub calls: usize,
    pub sha256: String,
    /// function id → (successes, errors).
    pub coverage: BTreeMap<String, (usize, usize)>,
}

impl Report {
    /// The fixture text: one `key=value` line each for sequences, calls and the digest.
    pub fn summary(&self) -> String {
        format!("sequences={}\ncalls={}\nsha256={}\n", self.sequences, self.calls, self.sha256)
    }

    /// Public functions never called successfully (empty when coverage is complete).
    pub fn uncovered(&self) -> Vec<&'static str> {
        public_functions()
            .filter(|id| self.coverage.get(*id).is_none_or(|(ok, _)| *ok == 0))
            .collect()
    }
}

/// The public `session::*` functions a host serves with the core (mutations and reads).
pub fn public_functions() -> impl Iterator<Item = &'static str> {
    OPERATIONS
        .iter()
        .filter(|op| matches!(op.kind, OpKind::Mutation | OpKind::Read))
        .map(|op| op.id)
}

/// Runs every sequence on `host`; `on_line` sees each transcript line (for debugging diffs).
pub fn run(host: &mut dyn Host, on_line: &mut dyn FnMut(&str)) -> Report {
    let mut hasher = Sha256::new();
    let mut calls = 0;
    let mut coverage: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for seq in 0..SEQUENCES {
        host.reset();
        let mut gen = Generator::new(seq);
        for _ in 0..CALLS {
            host.advance(gen.below(3) as i64);
            let (function_id, request) = gen.next_call();
            let out = host.call(function_id, request.clone());
            gen.observe(function_id, &out);
            let counts = coverage.entry(function_id.into()).or_default();
            let outcome = match &out.result {
                Ok(response) => {
                    counts.0 += 1;
                    json!({ "response": response })
                }
                Err((code, message)) => {
                    counts.1 += 1;
                    json!({ "error": { "code": code, "message": message } })
                }
            };
            let line = json!({ "seq": seq, "call": function_id, "request": request,
                               "outcome": outcome, "events": out.events })
            .to_string();
            on_line(&line);
            hasher.update(line.as_bytes());
            hasher.update(b"\n");
            calls += 1;
        }
    }
    let sha256 = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Report { sequences: SEQUENCES, calls, sha256, coverage }
}

/// The generator of one sequence: a xorshift PRNG plus what earlier answers revealed (sessions,
/// entries, attachments, cursors), so most calls hit real ids and some hit wrong ones.
#[derive(Debug)]
pub struct Generator {
    state: u64,
    sessions: Vec<String>,
    entries: Vec<(String, String)>,
    attachments: Vec<(String, String)>,
    cursor: Option<String>,
    /// [`public_functions`], in catalog order (the first creates).
    functions: Vec<&'static str>,
}

/// 78 bytes of base64: over [`LIMITS`]'s attachment cap.
const BIG: &str = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVpBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWkFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFla";

impl Generator {
    pub fn new(seed: u64) -> Self {
        let state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
        Generator {
            state: state.max(1),
            sessions: Vec::new(),
            entries: Vec::new(),
            attachments: Vec::new(),
            cursor: None,
            functions: public_functions().collect(),
        }
    }

    fn next(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn one_of(&mut self, items: &[&'static str]) -> &'static str {
        items[self.below(items.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> Option<T> {
        (!items.is_empty()).then(|| items[self.below(items.len() as u64) as usize].clone())
    }

    fn session(&mut self) -> String {
        let sessions = self.sessions.clone();
        match self.pick(&sessions) {
            Some(s) if !self.chance(8) => s,
            _ => format!("s_{:03}", 1 + self.below(4)),
        }
    }

    fn entry_of(&mut self, sid: &str) -> String {
        let own: Vec<String> =
            self.entries.iter().filter(|(s, _)| s == sid).map(|(_, e)| e.clone()).collect();
        match self.pick(&own) {
            Some(e) if !self.chance(8) => e,
            _ => format!("e_{:03}", 1 + self.below(12)),
        }
    }

    fn attachment_of(&mut self, sid: &str) -> String {
        let own: Vec<String> =
            self.attachments.iter().filter(|(s, _)| s == sid).map(|(_, a)| a.clone()).collect();
        match self.pick(&own) {
            Some(a) if !self.chance(10) => a,
            _ => format!("a_{:03}", 1 + self.below(3)),
        }
    }

    fn text(&mut self) -> String {
        const WORDS: [&str; 6] = ["alpha", "beta", "é ünïcode", "line\nbreak", "", "quote\"s"];
        WORDS[self.below(WORDS.len() as u64) as usize].to_string()
    }

    fn blocks(&mut self, sid: &str) -> Value {
        let mut blocks = Vec::new();
        for _ in 0..1 + self.below(3) {
            blocks.push(match self.below(7) {
                0 => json!({ "type": "thinking", "text": self.text() }),
                1 => json!({ "type": "function_call", "id": format!("c{}", self.below(4)),
                             "function_id": if self.chance(30) { "agent_trigger" } else { "tool::x" },
                             "arguments": { "function": "f", "description": "d", "payload": [1, 2] } }),
                2 => {
                    let aid = self.attachment_of(sid);
                    json!({ "type": "image", "mime": "image/png", "data": "iVBORw0K", "attachment_id": aid })
                }
                3 => json!({ "type": "file", "attachment_id": self.attachment_of(sid), "name": "n.txt",
                             "mime": "text/plain", "size": 3 }),
                _ => json!({ "type": "text", "text": self.text() }),
            });
        }
        Value::Array(blocks)
    }

    fn message(&mut self, sid: &str) -> Value {
        let content = self.blocks(sid);
        match self.below(5) {
            0 => json!({ "role": "user", "content": content, "timestamp": 5 }),
            1 | 2 => {
                json!({ "role": "assistant", "content": content, "stop_reason": "function_call",
                             "model": "m", "provider": "p", "timestamp": 6,
                             "usage": { "input": 3, "cost_usd": 0.25 } })
            }
            3 => {
                json!({ "role": "function_result", "function_call_id": format!("c{}", self.below(4)),
                         "function_id": "tool::x", "content": content, "details": { "k": 1 }, "timestamp": 7 })
            }
            _ => {
                json!({ "role": "custom", "custom_type": if self.chance(50) { "trigger_fired" } else { "note" },
                         "content": content, "timestamp": 8 })
            }
        }
    }

    /// The next call of the sequence (the first one always creates a session).
    pub fn next_call(&mut self) -> (&'static str, Value) {
        let function_id = if self.sessions.is_empty() && !self.chance(10) {
            self.functions[0]
        } else {
            let pick = self.below(self.functions.len() as u64) as usize;
            self.functions[pick]
        };
        let sid = self.session();
        let request = match function_id {
            "session::create" => {
                json!({ "title": self.text(), "metadata": { "team": self.below(2) },
                                         "kind": if self.chance(30) { "e2e" } else { "user" } })
            }
            "session::ensure" => json!({ "session_id": sid, "title": "ensured" }),
            "session::get" | "session::list-attachments" | "session::delete" => {
                json!({ "session_id": sid })
            }
            "session::list" => {
                let mut req = json!({ "order": self.one_of(&["created_asc", "created_desc", "updated_desc"]) });
                if self.chance(40) {
                    req["cursor"] = json!(self.cursor.clone());
                }
                if self.chance(30) {
                    req["metadata"] = json!({ "team": self.below(2) });
                }
                if self.chance(20) {
                    req["status"] = json!("working");
                }
                if self.chance(20) {
                    req["limit"] = json!(self.below(7));
                }
                req
            }
            "session::set-meta" => {
                json!({ "session_id": sid, "title": self.text(), "metadata": { "team": self.below(2) } })
            }
            "session::set-status" => json!({ "session_id": sid,
                "status": self.one_of(&["idle", "working", "done", "error", "waiting"]), "reason": self.text() }),
            "session::set-draft" => {
                let aid = self.attachment_of(&sid);
                if self.chance(50) {
                    json!({ "session_id": sid, "draft": self.text(), "attachment_ids": [aid] })
                } else {
                    json!({ "session_id": sid, "draft": self.text() })
                }
            }
            "session::append" => {
                let mut req = if self.chance(20) {
                    json!({ "session_id": sid, "custom": { "custom_type": "compaction", "data": { "n": 1 } } })
                } else {
                    json!({ "session_id": sid, "message": self.message(&sid) })
                };
                if self.chance(25) {
                    req["parent_id"] = json!(self.entry_of(&sid));
                }
                if self.chance(20) {
                    req["entry_id"] = json!(if self.chance(50) {
                        self.entry_of(&sid)
                    } else {
                        "e_fire_x".into()
                    });
                }
                if self.chance(30) {
                    req["origin"] = json!({ "notification": self.chance(50) });
                }
                req
            }
            "session::append-many" => {
                let messages: Vec<Value> = (0..self.below(4)).map(|_| self.message(&sid)).collect();
                json!({ "session_id": sid, "messages": messages })
            }
            "session::update-message" => {
                let mut req = json!({ "session_id": sid, "entry_id": self.entry_of(&sid), "content": self.blocks(&sid) });
                if self.chance(30) {
                    req["expected_revision"] = json!(self.below(2));
                }
                if self.chance(20) {
                    req["details"] = json!({ "d": 2 });
                }
                if self.chance(20) {
                    req["usage"] = json!({ "output": 9 });
                }
                req
            }
            "session::get-message" => json!({ "session_id": sid, "entry_id": self.entry_of(&sid),
                                              "include_image_data": self.chance(50) }),
            "session::messages" => {
                let mut req = json!({ "session_id": sid, "include_custom": self.chance(50) });
                if self.chance(30) {
                    req["cursor"] = json!(self.cursor.clone());
                }
                if self.chance(20) {
                    req["roles"] = json!(["assistant"]);
                }
                if self.chance(20) {
                    req["after_entry_id"] = json!(self.entry_of(&sid));
                }
                if self.chance(20) {
                    req["from_entry_id"] = json!(self.entry_of(&sid));
                }
                req
            }
            "session::messages-range" => {
                let mut req = if self.chance(50) {
                    json!({ "session_id": sid, "from_entry_id": self.entry_of(&sid), "to_entry_id": self.entry_of(&sid) })
                } else {
                    let ids: Vec<String> =
                        (0..self.below(4)).map(|_| self.entry_of(&sid)).collect();
                    json!({ "session_id": sid, "entry_ids": ids })
                };
                if self.chance(30) {
                    req["limit"] = json!(1 + self.below(3));
                }
                if self.chance(20) {
                    req["cursor"] = json!(self.cursor.clone());
                }
                req
            }
            "session::messages-tail" => {
                let mut req = json!({ "session_id": sid, "limit": 1 + self.below(4),
                                      "include_custom": !self.chance(20), "include_image_data": self.chance(50) });
                if self.chance(30) {
                    req["before_entry_id"] = json!(self.entry_of(&sid));
                }
                if self.chance(20) {
                    req["until_entry_id"] = json!(self.entry_of(&sid));
                }
                req
            }
            "session::fork" => {
                json!({ "session_id": sid, "entry_id": self.entry_of(&sid), "title": "fork" })
            }
            "session::set-active-leaf" => {
                json!({ "session_id": sid, "entry_id": self.entry_of(&sid) })
            }
            "session::put-attachment" => json!({ "session_id": sid, "name": " a.png ", "mime": "",
                "data": self.one_of(&["aGVsbG8=", "", "!!", BIG]) }),
            "session::get-attachment" => {
                json!({ "session_id": sid, "attachment_id": self.attachment_of(&sid),
                                                 "include_data": self.chance(50) })
            }
            "session::delete-attachment" => {
                json!({ "session_id": sid, "attachment_id": self.attachment_of(&sid) })
            }
            _ => Value::Null,
        };
        (function_id, request)
    }

    /// Learns ids and cursors from an answer.
    pub fn observe(&mut self, function_id: &str, out: &CallOutput) {
        let Ok(response) = &out.result else { return };
        if let Some(cursor) = response.get("next_cursor").and_then(Value::as_str) {
            self.cursor = Some(cursor.into());
        }
        if let Some(sid) = response.get("session_id").and_then(Value::as_str) {
            if !self.sessions.iter().any(|s| s == sid) {
                self.sessions.push(sid.into());
            }
        }
        for event in &out.events {
            let payload = &event["payload"];
            if let (Some(sid), Some(eid)) =
                (payload["session_id"].as_str(), payload["entry_id"].as_str())
            {
                self.entries.push((sid.into(), eid.into()));
            }
        }
        if function_id == "session::put-attachment" {
            let meta = &response["attachment"];
            if let (Some(sid), Some(aid)) =
                (meta["session_id"].as_str(), meta["attachment_id"].as_str())
            {
                self.attachments.push((sid.into(), aid.into()));
            }
        }
    }
}
