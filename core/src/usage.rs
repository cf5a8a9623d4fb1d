//! Usage totals (issue 38): the tokens, cost and messages by role of a session and of any branch,
//! kept current by [`crate::record::SessionState::apply`] so a read costs O(log n) for the active
//! branch — O(log n + its distance from the active path) for another — whatever the session's
//! size.
//!
//! The whole session's [`Tally`] gains each entry added and loses the one it replaces (an
//! `update-message` that changes `usage` subtracts the old). The active path keeps the running
//! tally at each of its assistant messages that carries `usage` ([`UsageIndex`]): a branch's
//! tokens are the last running tally before it leaves the active path plus its own entries past
//! that; its message counts come from the path index's class lists. Every sum is of integers
//! (the cost in billionths of a dollar), so the kept totals equal the totals a replay rebuilds.

use alloc::{collections::BTreeMap, string::String, vec::Vec};

use crate::path_index::EntryClass;
use crate::wire::{AgentMessage, MessageCounts, SessionEntry, Usage, UsageTotals};
use crate::{error::StoreError, path_index::PathIndex};

/// Billionths of a dollar per dollar.
const NANOS_PER_USD: f64 = 1e9;

/// Integer sums of usage and message counts (wrapping, so a sum less what it gained is exact).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Tally {
    /// `input`, `output`, `cache_read`, `cache_write`, `reasoning`.
    tokens: [u64; 5],
    /// Billionths of a dollar.
    cost_nanos: i64,
    /// User, assistant, function result, custom messages.
    messages: [u64; 4],
}

impl Tally {
    /// What `entry` adds: its usage and its message.
    pub fn of(entry: &SessionEntry) -> Tally {
        let mut tally = Tally::of_usage(usage(entry));
        if let Some(class) = message_class(EntryClass::of(entry)) {
            tally.messages[class] = 1;
        }
        tally
    }

    /// The tokens and cost of one `usage`.
    fn of_usage(usage: Option<&Usage>) -> Tally {
        let Some(u) = usage else { return Tally::default() };
        let n = |v: Option<u64>| v.unwrap_or(0);
        let cost = u.cost_usd.filter(|c| c.is_finite()).unwrap_or(0.0);
        Tally {
            tokens: [n(u.input), n(u.output), n(u.cache_read), n(u.cache_write), n(u.reasoning)],
            cost_nanos: round(cost * NANOS_PER_USD),
            messages: [0; 4],
        }
    }

    pub fn add(&mut self, other: &Tally) {
        self.zip(other, u64::wrapping_add);
        self.cost_nanos = self.cost_nanos.wrapping_add(other.cost_nanos);
    }

    pub fn sub(&mut self, other: &Tally) {
        self.zip(other, u64::wrapping_sub);
        self.cost_nanos = self.cost_nanos.wrapping_sub(other.cost_nanos);
    }

    fn zip(&mut self, other: &Tally, op: fn(u64, u64) -> u64) {
        for (a, b) in self.tokens.iter_mut().zip(other.tokens) {
            *a = op(*a, b);
        }
        for (a, b) in self.messages.iter_mut().zip(other.messages) {
            *a = op(*a, b);
        }
    }

    /// As the wire answers it.
    pub fn totals(&self) -> UsageTotals {
        let [input, output, cache_read, cache_write, reasoning] = self.tokens;
        let [user, assistant, function_result, custom] = self.messages;
        UsageTotals {
            input,
            output,
            cache_read,
            cache_write,
            reasoning,
            cost_usd: self.cost_nanos as f64 / NANOS_PER_USD,
            messages: MessageCounts { user, assistant, function_result, custom },
        }
    }
}

/// `x` to the nearest integer, halves away from zero (`f64::round` needs std); saturating.
fn round(x: f64) -> i64 {
    let half = if x < 0.0 { -0.5 } else { 0.5 };
    (x + half) as i64
}

/// The usage an entry carries (an assistant message's).
fn usage(entry: &SessionEntry) -> Option<&Usage> {
    match entry.message() {
        Some(AgentMessage::Assistant { usage, .. }) => usage.as_ref(),
        _ => None,
    }
}

/// The message-count slot of a class (`None`: a custom entry, not a message).
fn message_class(class: EntryClass) -> Option<usize> {
    (class as usize).checked_sub(1)
}

/// The whole session's tally and the active path's running tallies (module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageIndex {
    session: Tally,
    /// `(position, running tally of the path up to and including it)` of each assistant message
    /// on the active path that carries usage, in path order.
    running: Vec<(usize, Tally)>,
    /// Positions of the active path below this are reflected in `running`.
    synced: usize,
}

impl UsageIndex {
    /// The whole session's tally.
    pub fn session(&self) -> Tally {
        self.session
    }

    /// `entry` replaced `old` (`None`: it is new), at `position` on the active path if there.
    pub fn replaced(
        &mut self,
        old: Option<&SessionEntry>,
        entry: &SessionEntry,
        at: Option<usize>,
    ) {
        if let Some(old) = old {
            self.session.sub(&Tally::of(old));
            if let Some(at) = at.filter(|_| usage(old) != usage(entry)) {
                self.synced = self.synced.min(at);
            }
        }
        self.session.add(&Tally::of(entry));
    }

    /// Every entry was removed.
    pub fn cleared(&mut self) {
        *self = UsageIndex::default();
    }

    /// Brings the running tallies up to `path`, whose positions below `unchanged` are the ones
    /// it had at the last call.
    pub fn sync(
        &mut self,
        path: &PathIndex,
        unchanged: usize,
        entries: &BTreeMap<String, SessionEntry>,
    ) {
        let from = self.synced.min(unchanged);
        while self.running.last().is_some_and(|(at, _)| *at >= from) {
            self.running.pop();
        }
        let mut tally = self.running.last().map(|(_, t)| *t).unwrap_or_default();
        for at in path.positions_of(EntryClass::Assistant, from) {
            let entry = path.id_at(at).and_then(|id| entries.get(id));
            if let Some(used) = entry.and_then(usage) {
                tally.add(&Tally::of_usage(Some(used)));
                self.running.push((at, tally));
            }
        }
        self.synced = path.len();
    }

    /// The tokens of the first `len` entries of the active path.
    fn path_tokens(&self, len: usize) -> Tally {
        let kept = self.running.partition_point(|(at, _)| *at < len);
        kept.checked_sub(1).map(|i| self.running[i].1).unwrap_or_default()
    }
}

impl UsageIndex {
    /// The tallies of the branch root → `leaf` (empty without one) and of the whole session,
    /// `path` and `entries` being the state's ([`crate::record::SessionState::usage`]).
    pub fn tallies(
        &self,
        session_id: &str,
        leaf: Option<&str>,
        path: &PathIndex,
        entries: &BTreeMap<String, SessionEntry>,
    ) -> Result<(Tally, Tally), StoreError> {
        let Some(leaf) = leaf else { return Ok((Tally::default(), self.session)) };
        let view = path.view(leaf, entries).map_err(|b| b.error(session_id))?;
        let mut branch = self.path_tokens(view.shared_len());
        for (class, count) in view.class_counts().into_iter().enumerate() {
            if let Some(slot) = EntryClass::from_index(class as u8).and_then(message_class) {
                branch.messages[slot] = count as u64;
            }
        }
        for id in view.own_ids() {
            if let Some(used) = entries.get(id).and_then(usage) {
                branch.add(&Tally::of_usage(Some(used)));
            }
        }
        Ok((branch, self.session))
    }
}

/// The tallies of the branch `path` (root → leaf) and of `entries`, summed from scratch: what
/// stores without a [`SessionState`](crate::record::SessionState) answer, and the oracle of the kept ones.
pub fn summed<'a>(
    path: impl Iterator<Item = &'a SessionEntry>,
    entries: impl Iterator<Item = &'a SessionEntry>,
) -> (Tally, Tally) {
    (sum_of(path), sum_of(entries))
}

/// The tally of `entries`, summed.
fn sum_of<'a>(entries: impl Iterator<Item = &'a SessionEntry>) -> Tally {
    let mut tally = Tally::default();
    entries.for_each(|e| tally.add(&Tally::of(e)));
    tally
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{assistant_entry, custom_entry, message_entry};
    use crate::record::{Record, SessionState};
    use alloc::format;
    use proptest::prelude::*;

    /// Every branch's and the session's kept tallies equal the ones summed from scratch.
    fn check(state: &SessionState) -> Result<(), TestCaseError> {
        let mut leaves: Vec<Option<&str>> =
            state.entries.keys().map(|k| Some(k.as_str())).collect();
        leaves.push(None);
        let all = state.entries.values();
        for leaf in leaves {
            let Ok(kept) = state.usage("s", leaf) else { continue };
            let path = match leaf {
                Some(leaf) => crate::path::walk("s", leaf, |id| Ok(state.entries.get(id).cloned()))
                    .map_err(|e| TestCaseError::fail(format!("{e:?}")))?,
                None => Vec::new(),
            };
            prop_assert_eq!(kept, summed(path.iter(), all.clone()), "leaf {:?}", leaf);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Random entries (new and replacing, with and without usage), leaf moves and clears.
        #[test]
        fn kept_totals_equal_summed_totals(steps in prop::collection::vec((0u8..6, 0u8..12, 0u8..12, 0u64..1000), 1..60)) {
            let mut state = SessionState::default();
            let id = |n: u8| format!("e{n}");
            for (op, a, b, tokens) in steps {
                let parent = (b < a).then(|| id(b));
                let record = match op {
                    0 | 1 => {
                        let used = (op == 0).then_some(tokens);
                        Record::Entry { entry: assistant_entry(&id(a), parent.as_deref(), used) }
                    }
                    2 => Record::Entry { entry: message_entry(&id(a), parent.as_deref(), 1, "u") },
                    3 => Record::Entry { entry: custom_entry(&id(a), parent.as_deref(), 1) },
                    4 => Record::Leaf { entry_id: Some(id(a)) },
                    _ if tokens % 9 == 0 => { state.clear_entries(); continue; }
                    _ => Record::Append {
                        entry: assistant_entry(&id(a), parent.as_deref(), Some(tokens)),
                        meta: crate::conformance::sample_meta("s", 1),
                    },
                };
                state.apply(&record);
                check(&state)?;
            }
        }
    }
}
