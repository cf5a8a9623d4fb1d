//! `session::context` (extension, issue 38): what a model is given for the branch ending at a
//! leaf — the newest valid compaction on that branch (its summary stands for everything before
//! its first kept entry), then the message entries from there to the leaf, custom entries left
//! out; with a `token_budget`, the oldest whole turns dropped until the estimate fits. Newer
//! compaction records that are not valid are named with the reason.
//!
//! The branch is read through the store's indexed path reads: its custom entries newest first
//! from the leaf until a valid compaction record, then its messages from that record's first
//! kept entry to the leaf — a read costs the context, not the session. It reads more only to
//! judge a record that is not valid (a first kept entry far back, or off the path) or a kept
//! function result whose call is not kept (it reads the messages before the cut for the call).

use alloc::string::String;
use alloc::vec::Vec;

use super::newest_first::NewestFirst;
use super::{stored_entry, stored_meta};
use crate::compaction::{
    check_separated, clean_cuts, message_tokens, off_path, record_of, results_without_call,
    text_tokens, CompactionData, MESSAGE_OVERHEAD_TOKENS,
};
use crate::error::{Result, SessionError};
use crate::path::PathSelect;
use crate::path_index::{EntryClass, EntryClasses};
use crate::store::Store;
use crate::view;
use crate::wire::{
    AgentMessage, ContextCompaction, ContextRequest, ContextResponse, DroppedTurns,
    IgnoredCompaction, SessionEntry,
};

/// Custom entries of the first window read back from the leaf, looking for compaction records.
const CUSTOM_WINDOW: usize = 16;

/// The compaction a context applies: its record's entry id and its data.
type Boundary = (String, CompactionData);

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
    let (boundary, kept, ignored) = newest_compaction(store, sid, &leaf, len)?;
    answer.ignored = ignored;
    let kept = match kept {
        Some(kept) => kept,
        None => store.path_select(sid, &leaf, &forward(EntryClasses::MESSAGES, 0, len))?,
    };
    let messages: Vec<&SessionEntry> = kept.iter().map(|(_, e)| e).collect();
    let costs: Vec<u64> = messages.iter().filter_map(|e| e.message()).map(message_tokens).collect();
    let summary_tokens = boundary
        .as_ref()
        .map_or(0, |(_, data)| text_tokens(&data.summary) + MESSAGE_OVERHEAD_TOKENS);
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
    answer.compaction = boundary.map(|(entry_id, data)| ContextCompaction {
        entry_id,
        summary: data.summary,
        first_kept_entry_id: data.first_kept_entry_id,
        tokens_before: data.tokens_before,
        details: data.details,
    });
    Ok(answer)
}

/// The newest valid compaction record of the branch root → `leaf` (`len` entries) with the
/// message entries it keeps (from its first kept entry to the leaf), and the newer records
/// that are not valid, with why. Only custom entries are read until a record is found.
#[allow(clippy::type_complexity)]
fn newest_compaction(
    store: &dyn Store,
    sid: &str,
    leaf: &str,
    len: usize,
) -> Result<(Option<Boundary>, Option<Vec<(usize, SessionEntry)>>, Vec<IgnoredCompaction>)> {
    let customs = EntryClasses::of(&[EntryClass::CustomEntry]);
    let mut records = NewestFirst::new(store, sid, leaf, customs, len, CUSTOM_WINDOW);
    let mut ignored = Vec::new();
    let mut i = 0;
    while records.has(i)? {
        let (record_at, entry) = &records.loaded[i];
        if let Some(record) = record_of(entry) {
            let entry_id = String::from(entry.id());
            let checked = match record {
                Ok(data) => kept_by(store, sid, leaf, len, *record_at, &data.first_kept_entry_id)?
                    .map(|kept| (data, kept)),
                Err(reason) => Err(reason),
            };
            match checked {
                Ok((data, kept)) => return Ok((Some((entry_id, data)), Some(kept), ignored)),
                Err(reason) => ignored.push(IgnoredCompaction { entry_id, reason }),
            }
        }
        i += 1;
    }
    Ok((None, None, ignored))
}

/// The message entries (with their positions) from `first_kept` to the leaf, when a
/// compaction record at `record_at` may keep them: `first_kept` is on the path before it and
/// the cut there keeps every function call with its result ([`crate::compaction::cut_at`]'s
/// rules); else why not.
fn kept_by(
    store: &dyn Store,
    sid: &str,
    leaf: &str,
    len: usize,
    record_at: usize,
    first_kept: &str,
) -> Result<core::result::Result<Vec<(usize, SessionEntry)>, String>> {
    let first_at = match store.path_locate(sid, leaf, Some(first_kept))?.at {
        Some((at, _)) if at < record_at => at,
        _ => return Ok(Err(off_path(first_kept))),
    };
    let kept = store.path_select(sid, leaf, &forward(EntryClasses::MESSAGES, first_at, len))?;
    let before_record = kept.iter().take_while(|(at, _)| *at < record_at).map(|(_, e)| e);
    let results = results_without_call(before_record);
    if !results.is_empty() {
        let left = PathSelect {
            classes: EntryClasses::MESSAGES,
            from: first_at,
            backward: true,
            limit: first_at,
        };
        let left = store.path_select(sid, leaf, &left)?;
        if let Err(reason) = check_separated(first_kept, &results, left.iter().map(|(_, e)| e)) {
            return Ok(Err(reason));
        }
    }
    Ok(Ok(kept))
}

/// The entries of `classes` at positions `from..len`.
fn forward(classes: EntryClasses, from: usize, len: usize) -> PathSelect {
    PathSelect { classes, from, backward: false, limit: len.saturating_sub(from) }
}

/// Where the kept messages start under `budget`: at the first turn (a user message) from which
/// the estimate fits and no function result is cut from its call; never past the newest turn.
fn fit(
    messages: &[&SessionEntry],
    costs: &[u64],
    summary_tokens: u64,
    budget: u64,
) -> (usize, Option<DroppedTurns>) {
    // total[i]: the estimate when the messages from i on are kept (summary included).
    let mut total = alloc::vec![summary_tokens; costs.len() + 1];
    for i in (0..costs.len()).rev() {
        total[i] = total[i + 1] + costs[i];
    }
    let total = |from: usize| total[from];
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
