//! `session::context` (extension, issue 38): what a model is given for the branch ending at a
//! leaf — the newest valid compaction on that branch (its summary stands for everything before
//! its first kept entry), then the message entries from there to the leaf, custom entries left
//! out; with a `token_budget`, the oldest whole turns dropped until the estimate fits. Newer
//! compaction records that are not valid are named with the reason.
//!
//! The branch is read newest first from the leaf, through the store's indexed path reads, only
//! back to the first kept entry of the compaction it applies: a read costs the context, not the
//! session. It reads further only to judge a record that is not valid (a first kept entry off
//! the path walks it) or a kept function result whose call is not kept (it looks for the call).

use alloc::string::String;
use alloc::vec::Vec;

use super::newest_first::NewestFirst;
use super::{stored_entry, stored_meta};
use crate::compaction::{
    check_separated, clean_cuts, message_tokens, off_path, record_of, results_without_call,
    text_tokens, CompactionData, MESSAGE_OVERHEAD_TOKENS,
};
use crate::error::{Result, SessionError};
use crate::path_index::EntryClasses;
use crate::store::Store;
use crate::view;
use crate::wire::{
    AgentMessage, ContextCompaction, ContextRequest, ContextResponse, DroppedTurns,
    IgnoredCompaction, SessionEntry,
};

/// Entries of the first window read back from the leaf.
const FIRST_WINDOW: usize = 256;

/// The compaction a context applies: its record's entry id, its data, and how many entries of
/// the branch (newest first) it keeps, its first kept entry included.
type Boundary = (String, CompactionData, usize);

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
    let len = store.path_locate(sid, &leaf, None)?.len;
    let mut path = NewestFirst::new(store, sid, &leaf, EntryClasses::ALL, len, FIRST_WINDOW);
    let (boundary, ignored) = newest_compaction(store, sid, &leaf, &mut path)?;
    answer.ignored = ignored;
    let kept = match &boundary {
        Some((_, _, kept)) => *kept,
        None => {
            path.load_all()?;
            path.loaded.len()
        }
    };
    let messages: Vec<&SessionEntry> = path.loaded[..kept]
        .iter()
        .rev()
        .map(|(_, e)| e)
        .filter(|e| e.message().is_some())
        .collect();
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

/// The newest valid compaction record of the branch `path` reads, and the newer records that
/// are not valid, with why.
fn newest_compaction(
    store: &dyn Store,
    sid: &str,
    leaf: &str,
    path: &mut NewestFirst<'_>,
) -> Result<(Option<Boundary>, Vec<IgnoredCompaction>)> {
    let mut ignored = Vec::new();
    let mut i = 0;
    while path.has(i)? {
        if let Some(record) = record_of(&path.loaded[i].1) {
            let entry_id = String::from(path.loaded[i].1.id());
            let checked = match record {
                Ok(data) => kept_by(store, sid, leaf, path, i, &data.first_kept_entry_id)?
                    .map(|kept| (data, kept)),
                Err(reason) => Err(reason),
            };
            match checked {
                Ok((data, kept)) => return Ok((Some((entry_id, data, kept)), ignored)),
                Err(reason) => ignored.push(IgnoredCompaction { entry_id, reason }),
            }
        }
        i += 1;
    }
    Ok((None, ignored))
}

/// How many entries (newest first) the compaction record at index `record` of `path` keeps,
/// when its first kept entry is on the path before it and the cut there keeps every function
/// call with its result ([`crate::compaction::cut_at`]'s rules); else why not.
fn kept_by(
    store: &dyn Store,
    sid: &str,
    leaf: &str,
    path: &mut NewestFirst<'_>,
    record: usize,
    first_kept: &str,
) -> Result<core::result::Result<usize, String>> {
    let record_at = path.loaded[record].0;
    let first_at = match store.path_locate(sid, leaf, Some(first_kept))?.at {
        Some((at, _)) if at < record_at => at,
        _ => return Ok(Err(off_path(first_kept))),
    };
    // Every class is loaded, so index and position count the same steps back from the leaf.
    let last = record + (record_at - first_at);
    path.has(last)?;
    let results = results_without_call(path.loaded[record + 1..=last].iter().rev().map(|(_, e)| e));
    if !results.is_empty() {
        path.load_all()?;
    }
    let before = path.loaded[last + 1..].iter().map(|(_, e)| e);
    Ok(check_separated(first_kept, &results, before).map(|()| last + 1))
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
    let clean = clean_cuts(messages);
    let turn_starts: Vec<usize> = (1..messages.len())
        .filter(|&i| matches!(messages[i].message(), Some(AgentMessage::User { .. })))
        .filter(|&i| clean[i])
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
