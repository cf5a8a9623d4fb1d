//! The oracle of `session::context` (issue 38): its answer computed the plain way — every entry
//! of the session read, the branch's whole path walked leaf → root, then the rules of
//! [`crate::compaction`] applied — for the model test to compare the operation's answer with
//! while the operation learns to read from the compaction boundary only.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::compaction::{cut_at, message_tokens, record_of, text_tokens, MESSAGE_OVERHEAD_TOKENS};
use crate::error::SessionError;
use crate::store::Store;
use crate::view::message_item;
use crate::wire::{
    AgentMessage, ContextCompaction, ContextRequest, ContextResponse, DroppedTurns,
    IgnoredCompaction, SessionEntry,
};

/// What `session::context` answers to `req`: the same answer, or an error of the same code.
pub fn context_oracle(
    store: &dyn Store,
    req: &ContextRequest,
) -> Result<ContextResponse, SessionError> {
    let budget = match req.token_budget {
        Some(b) if b < 1 => {
            return Err(SessionError::invalid_request("token_budget must be at least 1"))
        }
        b => b.map(|b| b as u64),
    };
    let sid = req.session_id.as_str();
    if store.get_meta(sid)?.is_none() {
        return Err(SessionError::session_not_found(sid));
    }
    let entries: BTreeMap<String, SessionEntry> =
        store.list_entries(sid)?.into_iter().map(|e| (String::from(e.id()), e)).collect();
    let leaf = match &req.leaf {
        Some(leaf) if !entries.contains_key(leaf) => {
            return Err(SessionError::entry_not_found(sid, leaf))
        }
        Some(leaf) => Some(leaf.clone()),
        None => store.get_active_leaf(sid)?,
    };
    let mut answer =
        ContextResponse { session_id: sid.into(), leaf: leaf.clone(), ..Default::default() };
    let Some(leaf) = leaf else { return Ok(answer) };
    let path = crate::path::walk(sid, &leaf, |id| Ok(entries.get(id).cloned()))?;

    // The newest valid compaction record, and every record newer than it, with why not.
    let mut start = 0;
    let mut summary_tokens = 0;
    for at in (0..path.len()).rev() {
        let Some(record) = record_of(&path[at]) else { continue };
        let entry_id = String::from(path[at].id());
        let checked = record
            .and_then(|data| cut_at(&path[..at], &data.first_kept_entry_id).map(|cut| (data, cut)));
        match checked {
            Ok((data, cut)) => {
                start = cut;
                summary_tokens = text_tokens(&data.summary) + MESSAGE_OVERHEAD_TOKENS;
                answer.compaction = Some(ContextCompaction {
                    entry_id,
                    summary: data.summary,
                    first_kept_entry_id: data.first_kept_entry_id,
                    tokens_before: data.tokens_before,
                    details: data.details,
                });
                break;
            }
            Err(reason) => answer.ignored.push(IgnoredCompaction { entry_id, reason }),
        }
    }

    let messages: Vec<SessionEntry> =
        path[start..].iter().filter(|e| e.message().is_some()).cloned().collect();
    let costs: Vec<u64> = messages.iter().filter_map(|e| e.message()).map(message_tokens).collect();
    let keep_from = match budget {
        Some(budget) => {
            let (keep_from, dropped) = fit(&messages, &costs, summary_tokens, budget);
            answer.dropped = dropped;
            keep_from
        }
        None => 0,
    };
    answer.tokens = summary_tokens + costs[keep_from..].iter().sum::<u64>();
    let images = req.include_image_data.unwrap_or(true);
    answer.messages = messages[keep_from..].iter().map(|e| message_item(e, images)).collect();
    Ok(answer)
}

/// Where the kept messages start under `budget`, and what was dropped: nothing when everything
/// fits; else at the oldest turn start (a user message after the first message, not cutting a
/// function call from its result) from which the rest fits, or the newest such start when none
/// does (`over_budget`); no start at all keeps everything, over budget.
fn fit(
    messages: &[SessionEntry],
    costs: &[u64],
    summary_tokens: u64,
    budget: u64,
) -> (usize, Option<DroppedTurns>) {
    let total = |from: usize| summary_tokens + costs[from..].iter().sum::<u64>();
    if total(0) <= budget {
        return (0, None);
    }
    let starts: Vec<usize> = (1..messages.len())
        .filter(|&i| matches!(messages[i].message(), Some(AgentMessage::User { .. })))
        .filter(|&i| cut_at(messages, messages[i].id()).is_ok())
        .collect();
    let chosen = starts.iter().position(|&s| total(s) <= budget).or(starts.len().checked_sub(1));
    let (cut, turns) = match chosen {
        Some(k) => (starts[k], k as u64 + 1),
        None => (0, 0),
    };
    let dropped = DroppedTurns {
        turns,
        messages: cut as u64,
        tokens: costs[..cut].iter().sum(),
        first_kept_entry_id: messages.get(cut).map_or_else(String::new, |e| e.id().into()),
        over_budget: total(cut) > budget,
    };
    (cut, Some(dropped))
}
