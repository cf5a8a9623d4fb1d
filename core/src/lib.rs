//! session-core: every session semantic of session-manager, deterministic and `no_std`.
//!
//! A session is a metadata record, a tree of entries linked by `parent_id`, an active-leaf pointer
//! and an attachment store. This crate owns the wire types ([`wire`]), the public operations
//! ([`ops`]), the events they fire ([`events`], [`filter`]), typed errors ([`error`]), the storage
//! boundary ([`store`], [`record`], [`mem_store`]) and the one catalog of functions and trigger
//! types ([`catalog`]). It does no IO, reads no clock and draws no randomness: the host passes
//! time, ids and limits in ([`env`](mod@env)), applies the change set an operation decides, then publishes
//! the events (decide → apply → publish).
//!
//! # Invariants
//!
//! Each is pinned by a test named in brackets (BDD scenarios live in `tests/features`).
//!
//! 1. **The parent chain is the order.** Reads walk leaf → root and reverse; timestamps never
//!    order anything. [`branching.feature`: "appending with an explicit parent branches"]
//! 2. **Every committed append moves the leaf; an idempotent replay never does** (nor bumps
//!    `message_count`, nor fires). [`append.feature`: "replaying an entry_id is a silent no-op"]
//! 3. **`message_count` counts `kind:"message"` entries only.** [`append.feature`: "custom
//!    entries are not counted"]
//! 4. **Revisions start at 0 and grow by exactly 1 per successful update; fork resets them.**
//!    [`update_message.feature`, `fork.feature`]
//! 5. **Entry timestamps never change after creation** (updates and forks keep them).
//!    [`update_message.feature`: "update keeps the entry timestamp"]
//! 6. **A fork is independent of its source**: fresh ids, no shared state afterwards.
//!    [`fork.feature`: "source and fork are independent afterwards"]
//! 7. **Delete removes meta, entries, leaf and attachments; a re-created id starts empty.**
//!    [`delete.feature`: "re-ensuring a deleted id starts empty"]
//! 8. **Events go out only for writes that landed**: [`ops::Plan::execute`] applies the change
//!    set before it hands back any event. (`tests.rs`: `events_need_a_landed_write`)
//! 9. **Every error's wire message starts with its code.** (`tests.rs`: `messages_start_with_code`)
//! 10. **One state machine for every store**: [`record::SessionState::apply`] is what replay,
//!     write-through caches and [`MemStore`] all run, so replaying the records a store wrote
//!     rebuilds the state it acknowledged. (`tests.rs`: `snapshot_replays_to_same_state`)

#![cfg_attr(not(feature = "std"), no_std)]
#![deny(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]

extern crate alloc;

pub mod backend;
pub mod blocks;
pub mod catalog;
pub mod compaction;
#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "conformance")]
pub mod crosscheck;
pub mod cursor;
pub mod env;
pub mod error;
pub mod events;
pub mod feed;
pub mod filter;
#[cfg(feature = "formats")]
pub mod formats;
pub mod jsonl;
pub mod lifecycle;
pub mod limits;
pub mod mem_store;
pub mod meta_order;
pub mod ops;
mod order;
pub mod path;
pub mod path_index;
pub mod record;
pub mod replica;
pub mod resync;
pub mod search;
pub mod simulate;
pub mod state_view;
pub mod store;
pub mod subscriptions;
pub mod tagged;
pub mod transfer;
pub mod usage;
pub mod view;
pub mod wire;

pub use backend::{Backend, Durable, EventSink};
pub use env::{Clock, Env, IdGen, Limits, ManualClock, RandomIds, Redraw, SeqIds};
pub use error::{ErrorCode, SessionError, StoreError};
pub use events::{Emitted, SessionEvent};
pub use mem_store::MemStore;
pub use ops::{Outcome, Plan};
pub use store::{Applied, ChangeSet, SessionView, Store, Write};

#[cfg(test)]
mod fuzz_regressions;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
