//! The random sessions of the `session::context` model test (issue 38): from a seed, a script
//! of calls through the catalog — user and assistant messages, function calls and their results
//! (some orphans), custom entries, compaction records appended valid and not, compactions (some
//! refused, which must write nothing), forks inside the session, leaf moves, deltas and message
//! updates — and what the script knows of the tree it built. The messages themselves are
//! `context_messages`'.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{json, Value};

use crate::catalog::dispatch;
use crate::env::Env;
use crate::error::{ErrorCode, SessionError};
use crate::store::Store;

pub use super::context_rng::Rng;

/// Calls `id` through the catalog, as a host would.
pub fn call(
    store: &dyn Store,
    env: &Env<'_>,
    id: &str,
    payload: Value,
) -> Result<Value, SessionError> {
    match dispatch(store, env, id, payload) {
        Some(answer) => answer.map(|outcome| outcome.response),
        None => Err(SessionError::invalid_request(format!("{id} is not in the catalog"))),
    }
}

/// A session the script built, and what it knows of it.
pub struct ModelSession<'a> {
    store: &'a dyn Store,
    env: &'a Env<'a>,
    pub rng: Rng,
    pub session_id: String,
    /// Every entry, in the order it was appended.
    pub entry_ids: Vec<String>,
    parents: BTreeMap<String, Option<String>>,
    pub active_leaf: Option<String>,
    messages: Vec<String>,
    assistants: Vec<String>,
    pub(super) calls: Vec<String>,
    /// The call ids results answered (orphans' included), for calls made after their result.
    pub(super) answered: Vec<String>,
    /// Every function result entry, and the call id it answers.
    results: BTreeMap<String, String>,
    pub(super) serial: u64,
}

impl core::fmt::Debug for ModelSession<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ModelSession")
            .field("session_id", &self.session_id)
            .field("entry_ids", &self.entry_ids)
            .field("active_leaf", &self.active_leaf)
            .finish_non_exhaustive()
    }
}

impl<'a> ModelSession<'a> {
    /// A new session on `store`, then `ops` random steps on it.
    pub fn build(
        store: &'a dyn Store,
        env: &'a Env<'a>,
        seed: u64,
        ops: usize,
    ) -> Result<Self, String> {
        let created = call(store, env, "session::create", json!({ "title": "context model" }))
            .map_err(|e| format!("session::create: {e}"))?;
        let session_id = created["session_id"].as_str().ok_or("create: no session_id")?.into();
        let mut session = ModelSession {
            store,
            env,
            rng: Rng::new(seed),
            session_id,
            entry_ids: Vec::new(),
            parents: BTreeMap::new(),
            active_leaf: None,
            messages: Vec::new(),
            assistants: Vec::new(),
            calls: Vec::new(),
            answered: Vec::new(),
            results: BTreeMap::new(),
            serial: 0,
        };
        for step in 0..ops {
            session.step().map_err(|e| format!("step {step}: {e}"))?;
        }
        Ok(session)
    }

    /// The entries nothing was appended to.
    pub fn tips(&self) -> Vec<String> {
        let parents: BTreeSet<&str> = self.parents.values().flatten().map(String::as_str).collect();
        self.entry_ids.iter().filter(|id| !parents.contains(id.as_str())).cloned().collect()
    }

    fn step(&mut self) -> Result<(), String> {
        match self.rng.below(100) {
            0..=19 => {
                let message = self.user_message();
                self.append_message(message)
            }
            20..=36 => {
                let message = self.assistant_message();
                self.append_message(message)
            }
            37..=49 => {
                let message = self.result_message();
                self.append_message(message)
            }
            50..=52 => {
                let message = json!({ "role": "custom", "custom_type": "notice",
                    "content": self.text_blocks(), "timestamp": self.next_serial() });
                self.append_message(message)
            }
            53..=56 => {
                let custom = json!({ "custom_type": "note", "data": { "n": self.next_serial() } });
                self.append(json!({ "custom": custom }))
            }
            57..=65 => self.compact(),
            66..=72 => self.append_compaction_record(),
            73..=78 => self.set_active_leaf(),
            79..=86 => self.append_delta(),
            87..=94 => self.update_message(),
            _ => self.replay(),
        }
    }

    /// Now and then an explicit parent among the existing entries: a fork inside the session.
    fn explicit_parent(&mut self) -> Option<String> {
        match self.rng.chance(15) {
            true => self.rng.pick(&self.entry_ids),
            false => None,
        }
    }

    /// The path root → `leaf` (empty for none), from the parents the script saw answered.
    fn path(&self, leaf: Option<&str>) -> Vec<String> {
        let mut path = Vec::new();
        let mut next = leaf.map(String::from);
        while let Some(id) = next {
            next = self.parents.get(&id).cloned().flatten();
            path.push(id);
        }
        path.reverse();
        path
    }

    fn append_message(&mut self, message: Value) -> Result<(), String> {
        let is_assistant = message["role"] == "assistant";
        let answers = message["function_call_id"].as_str().map(String::from);
        let mut payload = json!({ "message": message });
        if self.rng.chance(20) {
            payload["origin"] = json!({ "turn_id": format!("t{}", self.next_serial()) });
        }
        let before = self.entry_ids.len();
        self.append(payload)?;
        if self.entry_ids.len() > before {
            let id = self.entry_ids[before].clone();
            if is_assistant {
                self.assistants.push(id.clone());
            }
            if let Some(call_id) = answers {
                self.results.insert(id.clone(), call_id);
            }
            self.messages.push(id);
        }
        Ok(())
    }

    /// `session::append` of `payload` (its message or custom), maybe on an explicit parent.
    fn append(&mut self, mut payload: Value) -> Result<(), String> {
        payload["session_id"] = json!(self.session_id);
        if let Some(parent) = self.explicit_parent() {
            payload["parent_id"] = json!(parent);
        }
        let answer = self.must("session::append", payload)?;
        self.landed(&answer)
    }

    /// Records the entry an append answered, unless it existed (a replay, which moves nothing).
    fn landed(&mut self, answer: &Value) -> Result<(), String> {
        let id = answer["entry_id"].as_str().ok_or("the answer has no entry_id")?;
        if !self.parents.contains_key(id) {
            self.parents.insert(id.into(), answer["parent_id"].as_str().map(String::from));
            self.entry_ids.push(id.into());
            self.active_leaf = Some(id.into());
        }
        Ok(())
    }

    fn must(&self, id: &str, payload: Value) -> Result<Value, String> {
        let shown = payload.to_string();
        call(self.store, self.env, id, payload).map_err(|e| format!("{id} {shown}: {e}"))
    }

    /// A first kept entry for a compaction on `path`: mostly one of it (the cut may still
    /// separate a call from its result), else any entry (maybe off the branch) or none at all.
    fn first_kept(&mut self, path: &[String]) -> String {
        let chosen = match self.rng.below(10) {
            0..=7 => self.rng.pick(path),
            8 => self.rng.pick(&self.entry_ids),
            _ => None,
        };
        chosen.unwrap_or_else(|| "nope".into())
    }

    /// `session::compact`, valid or refused; a refusal must leave the session as it was.
    fn compact(&mut self) -> Result<(), String> {
        let parent = self.explicit_parent();
        let path = self.path(parent.as_deref().or(self.active_leaf.as_deref()));
        let mut payload = json!({ "session_id": self.session_id, "summary": self.text(),
            "first_kept_entry_id": self.first_kept(&path) });
        if let Some(parent) = parent {
            payload["parent_id"] = json!(parent);
        }
        if self.rng.chance(50) {
            payload["tokens_before"] = json!(self.rng.below(5000));
        }
        if self.rng.chance(20) {
            payload["details"] = json!({ "files": [self.text()] });
        }
        if self.rng.chance(5) {
            // A replayed entry id answers as append does, whatever the rest says.
            payload["entry_id"] = json!(self.rng.pick(&self.entry_ids));
        }
        let before = self.held()?;
        let shown = payload.to_string();
        match call(self.store, self.env, "session::compact", payload) {
            Ok(answer) => self.landed(&answer),
            Err(e) if e.code == ErrorCode::InvalidRequest => {
                let after = self.held()?;
                match after == before {
                    true => Ok(()),
                    false => Err(format!(
                        "session::compact {shown} was refused ({e}) but wrote: entries and leaf \
                         {before:?} before, {after:?} after"
                    )),
                }
            }
            Err(e) => Err(format!("session::compact {shown}: {e}")),
        }
    }

    /// How many entries the session holds and its active leaf, as the store reads them.
    fn held(&self) -> Result<(usize, Option<String>), String> {
        let sid = self.session_id.as_str();
        let entries = self.store.list_entries(sid).map_err(|e| format!("list_entries: {e}"))?;
        let leaf = self.store.get_active_leaf(sid).map_err(|e| format!("leaf: {e}"))?;
        Ok((entries.len(), leaf))
    }

    /// A compaction record appended with plain `session::append`, unchecked: valid, cutting a
    /// call from its result, off the branch, naming itself, or with data of the wrong shape.
    fn append_compaction_record(&mut self) -> Result<(), String> {
        let parent = self.explicit_parent();
        let path = self.path(parent.as_deref().or(self.active_leaf.as_deref()));
        let own_id = format!("x{}", self.next_serial());
        let summary = self.text();
        let data = match self.rng.below(12) {
            0..=7 => json!({ "summary": summary, "first_kept_entry_id": self.first_kept(&path),
                "tokens_before": self.rng.below(900) }),
            8 => json!({ "summary": summary, "first_kept_entry_id": own_id }),
            9 => json!({ "note": 1 }),
            10 => json!({ "summary": 5, "first_kept_entry_id": self.first_kept(&path) }),
            _ => json!({ "summary": summary, "first_kept_entry_id": self.first_kept(&path),
                "details": { "why": "hand-made" } }),
        };
        let mut payload = json!({ "session_id": self.session_id, "entry_id": own_id,
            "custom": { "custom_type": "compaction", "data": data } });
        if let Some(parent) = parent {
            payload["parent_id"] = json!(parent);
        }
        let answer = self.must("session::append", payload)?;
        self.landed(&answer)
    }

    fn set_active_leaf(&mut self) -> Result<(), String> {
        let Some(entry_id) = self.rng.pick(&self.entry_ids) else { return Ok(()) };
        let payload = json!({ "session_id": self.session_id, "entry_id": entry_id });
        self.must("session::set-active-leaf", payload)?;
        self.active_leaf = Some(entry_id);
        Ok(())
    }

    /// Streamed text or thinking onto an assistant message (now and then any message).
    fn append_delta(&mut self) -> Result<(), String> {
        let target = match self.rng.chance(80) {
            true => self.rng.pick(&self.assistants),
            false => self.rng.pick(&self.messages),
        };
        let Some(entry_id) = target else { return Ok(()) };
        let field = if self.rng.chance(70) { "text" } else { "thinking" };
        let mut payload = json!({ "session_id": self.session_id, "entry_id": entry_id });
        payload[field] = json!(self.text());
        self.must("session::append-delta", payload).map(drop)
    }

    /// New content for an assistant message (its calls may go or come, which changes which cuts
    /// are valid), with its final usage; or new content for any message.
    fn update_message(&mut self) -> Result<(), String> {
        if self.rng.chance(25) {
            return self.split_by_update();
        }
        let payload = match self.rng.chance(75) {
            true => {
                let Some(entry_id) = self.rng.pick(&self.assistants) else { return Ok(()) };
                let (content, _) = self.assistant_content();
                let mut payload = json!({ "session_id": self.session_id, "entry_id": entry_id,
                    "content": content });
                if let Some(usage) = self.usage() {
                    payload["usage"] = usage;
                }
                payload
            }
            false => {
                let Some(entry_id) = self.rng.pick(&self.messages) else { return Ok(()) };
                json!({ "session_id": self.session_id, "entry_id": entry_id,
                    "content": self.text_blocks() })
            }
        };
        self.must("session::update-message", payload).map(drop)
    }

    /// An update making an assistant message on the active path call what a later result on
    /// that path answers: a compaction that cuts between them is no longer valid.
    fn split_by_update(&mut self) -> Result<(), String> {
        let path = self.path(self.active_leaf.as_deref());
        let results: Vec<(usize, String)> = (path.iter().enumerate())
            .filter_map(|(at, id)| Some((at, self.results.get(id)?.clone())))
            .collect();
        let Some((at, call_id)) = self.rng.pick(&results) else { return Ok(()) };
        let assistants: Vec<String> =
            path[..at].iter().filter(|id| self.assistants.contains(id)).cloned().collect();
        let Some(entry_id) = self.rng.pick(&assistants) else { return Ok(()) };
        let content = json!([{ "type": "text", "text": self.text() },
            { "type": "function_call", "id": call_id, "function_id": "tool", "arguments": {} }]);
        let payload = json!({ "session_id": self.session_id, "entry_id": entry_id,
            "content": content });
        self.must("session::update-message", payload).map(drop)
    }

    /// An append naming an existing entry id: a no-op that answers that entry.
    fn replay(&mut self) -> Result<(), String> {
        let Some(entry_id) = self.rng.pick(&self.entry_ids) else { return Ok(()) };
        let message = self.user_message();
        let payload =
            json!({ "session_id": self.session_id, "entry_id": entry_id, "message": message });
        let answer = self.must("session::append", payload)?;
        self.landed(&answer)
    }
}
