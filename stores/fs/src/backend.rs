//! The fs store as the worker runs calls on it ([`session_core::Backend`]): reads it can serve
//! from memory and, with `fsync: group` or `never`, the hot appends are tried on the caller's
//! thread (`inline.rs`); with `fsync: group` a write's flush is waited for after the session lock
//! is released (`deferred.rs`, `flush.rs`), a write holds a [`Landing`](crate::Landing) until
//! its record is in the journal, and a read answers once what it saw is durable.

use serde_json::Value;
use session_core::backend::{Call, Ran, Waiting};
use session_core::catalog::{Attachments, Operation};
use session_core::{Backend, Durable, StoreError};

use crate::{Flushes, FsStore, SyncMode};

/// The writes the inline view may serve: each decides from reads, then applies one change set
/// of appends and plain records and reads nothing after it (the view never refuses once it
/// wrote). They are the hot path of a busy session (issue 16: no blocking-thread hand-off).
const INLINE_WRITES: [&str; 2] = ["session::append", "session::append-delta"];

impl Backend for FsStore {
    fn run(&self, op: &Operation, call: &mut Call<'_>) -> Ran {
        if op.effects.writes && self.config().sync == SyncMode::Group {
            let view = self.deferred();
            let result = call(&view);
            (result, durable(view.into_flushes()))
        } else {
            (call(self), None)
        }
    }

    /// Reads that need no attachment file IO, as the catalog declares, and with `fsync: group`
    /// or `never` the calls in `INLINE_WRITES`.
    fn may_try_here(&self, op: &Operation) -> bool {
        let writes_inline =
            self.config().sync != SyncMode::Always && INLINE_WRITES.contains(&op.id);
        op.effects.attachments == Attachments::None && (!op.effects.writes || writes_inline)
    }

    fn try_here(&self, op: &Operation, call: &mut Call<'_>) -> Option<Ran> {
        if op.effects.writes {
            self.inline_write(|store| call(store))
                .map(|(result, flushes)| (result, durable(flushes)))
        } else {
            self.inline(|store| call(store)).map(|result| (result, None))
        }
    }

    /// A search its index answers from few postings, with nothing waiting to be indexed.
    fn runs_here_alone(&self, op: &Operation, payload: &Value) -> bool {
        let Some(search) = self.search.as_ref().filter(|_| op.id == "session::search") else {
            return false;
        };
        let query = payload.get("query").and_then(Value::as_str).map(session_core::search::parse);
        matches!(query, Some(Ok(query)) if search.is_selective(&query).unwrap_or(false))
    }

    fn write_arriving(&self) -> Option<Box<dyn Send>> {
        self.landing().map(|landing| Box::new(landing) as Box<dyn Send>)
    }

    fn read_settles(&self, session_id: &str) -> Option<Box<dyn Durable>> {
        if self.config().sync != SyncMode::Group {
            return None;
        }
        FsStore::read_settles(self, session_id).and_then(durable)
    }

    fn after_failed_flush(&self) {
        self.clean_failed_flushes();
    }

    fn set_feed_retention(&self, retention: session_core::feed::Retention) {
        FsStore::set_feed_retention(self, retention);
    }

    fn flush_for_shutdown(&self) {
        self.flush_checkpoints();
        if let Err(e) = self.flush_catalog() {
            tracing::warn!("flushing the fs store catalog failed: {e}");
        }
        if let Err(e) = self.flush_journal() {
            tracing::warn!("emptying the fs store journal failed (the next start replays it): {e}");
        }
    }
}

/// Nothing to flush (`fsync: never`, or writes that appended nothing) is durable already.
fn durable(flushes: Flushes) -> Option<Box<dyn Durable>> {
    (!flushes.is_empty()).then(|| Box::new(flushes) as Box<dyn Durable>)
}

impl Durable for Flushes {
    fn wait_here(self: Box<Self>) -> Result<(), StoreError> {
        Flushes::wait_here(*self)
    }

    fn wait(self: Box<Self>) -> Waiting {
        Box::pin(Flushes::wait(*self))
    }
}
