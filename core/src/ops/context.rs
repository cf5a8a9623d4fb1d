//! `session::context` (extension, issue 38): what a model is given for the branch ending at a
//! leaf — the newest valid compaction on that branch (its summary stands for everything before
//! its first kept entry), then the message entries from there to the leaf, custom entries left
//! out; with a `token_budget`, the oldest whole turns dropped until the estimate fits. Newer
//! compaction records that are not valid are named with the reason. (This version reads the
//! branch's whole path; reading from the boundary is the next step.)

use alloc::string::String;
use alloc::vec::Vec;

use super::{stored_entry, stored_meta};
use crate::compaction::MESSAGE_OVERHEAD_TOKENS;
use crate::compaction::{cut_at, message_tokens, record_of, text_tokens, CompactionData};
use crate::error::{Result, SessionError};
use crate::store::{Store, WHOLE_PATH};
use crate::view;
use crate::wire::{
    AgentMessage, ContextCompaction, ContextRequest, ContextResponse, DroppedTurns,
    IgnoredCompaction, SessionEntry,
};

pub fn decide(store: &dyn Store, req: ContextRequest) -> Result<ContextResponse> {
    let budget = match req.token_budget {
        Some(b) if b < 1 => {
            return Err(SessionError::invalid_request("token_budget must be at least 1"))
        }
        Some(b) => Some(b as u64),
        None => None,
    };
    let sid = &req.session_id;
    stored_meta(store, sid)?;
    let leaf = match &req.leaf {
        Some(leaf) => Some(String::from(stored_entry(store, sid, leaf)?.id())),
        None => store.get_active_leaf(sid)?,
    };
    let mut answer =
        ContextResponse { session_id: sid.clone(), leaf: leaf.clone(), ..Default::default() };
    let Some(leaf) = leaf else { return Ok(answer) };
    let path: Vec<SessionEntry> =
        store.path_select(sid, &leaf, &WHOLE_PATH)?.into_iter().map(|(_, e)| e).collect();
    let (boundary, ignored) = newest_compaction(&path);
    answer.ignored = ignored;
    let start = boundary.as_ref().map_or(0, |(_, _, cut)| *cut);
    let messages: Vec<&SessionEntry> =
        path[start..].iter().filter(|e| e.message().is_some()).collect();
    let costs: Vec<u64> = messages.iter().filter_map(|e| e.message()).map(message_tokens).collect();
    let summary_tokens = boundary
        .as_ref()
        .map_or(0, |(_, data, _)| text_tokens(&data.summary) + MESSAGE_OVERHEAD_TOKENS);
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
    answer.messages = messages[keep_from..].iter().map(|e| view::message_item(e, images)).collect();
    answer.compaction = boundary.map(|(entry_id, data, _)| ContextCompaction {
        entry_id,
        summary: data.summary,
        first_kept_entry_id: data.first_kept_entry_id,
        tokens_before: data.tokens_before,
        details: data.details,
    });
    Ok(answer)
}

/// The newest valid compaction record of `path` (its entry id, data and where its first kept
/// entry is), and the newer records that are not valid, with why.
fn newest_compaction(
    path: &[SessionEntry],
) -> (Option<(String, CompactionData, usize)>, Vec<IgnoredCompaction>) {
    let mut ignored = Vec::new();
    for at in (0..path.len()).rev() {
        let Some(record) = record_of(&path[at]) else { continue };
        let checked = record
            .and_then(|data| cut_at(&path[..at], &data.first_kept_entry_id).map(|cut| (data, cut)));
        let entry_id = String::from(path[at].id());
        match checked {
            Ok((data, cut)) => return (Some((entry_id, data, cut)), ignored),
            Err(reason) => ignored.push(IgnoredCompaction { entry_id, reason }),
        }
    }
    (None, ignored)
}

/// Where the kept messages start under `budget`: at the first turn (a user message) from which
/// the estimate fits and no function result is cut from its call; never past the newest turn.
fn fit(
    messages: &[&SessionEntry],
    costs: &[u64],
    summary_tokens: u64,
    budget: u64,
) -> (usize, Option<DroppedTurns>) {
    let total = |from: usize| summary_tokens + costs[from..].iter().sum::<u64>();
    if total(0) <= budget {
        return (0, None);
    }
    let owned: Vec<SessionEntry> = messages.iter().map(|e| (*e).clone()).collect();
    let turn_starts: Vec<usize> = (1..messages.len())
        .filter(|&i| matches!(messages[i].message(), Some(AgentMessage::User { .. })))
        .filter(|&i| cut_at(&owned, owned[i].id()).is_ok())
        .collect();
    let mut cut = 0;
    for &start in &turn_starts {
        if total(cut) <= budget {
            break;
        }
        cut = start;
    }
    if cut == 0 {
        return (0, Some(dropped(messages, costs, 0, 0, total(0) > budget)));
    }
    let turns = 1 + turn_starts.iter().filter(|&&s| s < cut).count() as u64;
    (cut, Some(dropped(messages, costs, cut, turns, total(cut) > budget)))
}

fn dropped(
    messages: &[&SessionEntry],
    costs: &[u64],
    cut: usize,
    turns: u64,
    over_budget: bool,
) -> DroppedTurns {
    DroppedTurns {
        turns,
        messages: cut as u64,
        tokens: costs[..cut].iter().sum(),
        first_kept_entry_id: messages.get(cut).map(|e| String::from(e.id())).unwrap_or_default(),
        over_budget,
    }
}
