//! `BridgeStore`: the `session_core::Store` of a bridged instance. Every store operation is one
//! call of the main's `session::store::*` protocol (contract §5.6–§5.7); nothing is cached. Any
//! failure becomes a `StoreError` naming the protocol function
//! (`bridge session::store::get-meta failed: …`), which callers see as retryable
//! `session/storage`.
//!
//! Atomicity: a change set with several writes (append-many, fork, update-message, delete) goes
//! to the main as one `session::store::apply` call (our extension), which the main applies all or
//! nothing. A main that does not serve it (v1.0.32, or ours with `--seed-only`) answers
//! `function_not_found`; the bridge then checks that the main serves the seed's protocol (a main
//! of ours that is down answers `function_not_found` for everything: the change set fails,
//! retryable, and nothing is sent), falls back to the seed's protocol, one call per write in
//! the change set's order, stopping at the first failure, and asks again after
//! [`EXTENSION_RETRY_AFTER`]. That fallback is NOT all-or-nothing: the writes before a failure stay on
//! the main. The operations order their writes so the session meta comes last (put last on
//! create/fork/append-many/update, deleted last on delete), which keeps a partly applied change
//! set retryable. A single-write change set (create, set-*, append's commit) always uses the
//! seed's call and is as atomic as the main makes it.
//!
//! Reads of a path window (`Store::path_locate` / `path_select`, every `session::messages` page)
//! are one `session::store::path-locate` / `path-select` call answered by the main's index
//! (issue 12); a main that does not serve them gets the trait's walk, one `get-entry` per entry,
//! and is asked again after [`EXTENSION_RETRY_AFTER`]. A `session::list` page is likewise one
//! `session::store::list-page` answered by the main's meta order; a seed main gets one
//! `list-metas`, sorted and filtered here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use session_core::lifecycle::Lifecycle;
use session_core::meta_order::{self, ListQuery};
use session_core::path::{self, PathSpot};
use session_core::usage::Tally;
use session_core::wire::api_store::*;
use session_core::wire::store_calls::*;
use session_core::wire::{
    ApplyRequest, AttachmentMeta, FeedPage, SessionEntry, SessionMeta, StoreChangesRequest,
    StoreLifecyclesRequest, StoreListPageRequest, StorePathLocateRequest, StorePathSelectRequest,
    StoreUsageRequest,
};
use session_core::{Applied, ChangeSet, ErrorCode, Store, StoreError, Write};

use super::{Transport, TransportError};

/// Prefix of every protocol function id.
pub const PROTOCOL: &str = "session::store::";

/// How long the bridge uses the seed's calls after the main answered that it does not serve an
/// extension (`session::store::apply`, the path windows, list pages); the function may appear: a main
/// upgraded or restarted.
pub const EXTENSION_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The store of a bridged instance.
#[derive(Clone)]
pub struct BridgeStore {
    transport: Arc<dyn Transport>,
    /// When the main last said it does not serve each extension it was asked for.
    missing_since: Arc<Mutex<HashMap<&'static str, Instant>>>,
}

impl std::fmt::Debug for BridgeStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BridgeStore")
    }
}

/// The main answered `function` with something unusable (undecodable, `ok: false`).
fn unusable(function: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Remote { function: function.to_string(), code: None, message: detail.to_string() }
}

/// A failed call of `function`: the main's error keeps its `session/*` code.
fn failed(function: &str, e: TransportError) -> StoreError {
    let function = function.to_string();
    match e {
        TransportError::Remote { code, message } => {
            StoreError::Remote { function, code: ErrorCode::parse(&code), message }
        }
        TransportError::Unavailable(detail) => StoreError::Unavailable { function, detail },
    }
}

impl BridgeStore {
    pub fn new(transport: Arc<dyn Transport>) -> Self {
        BridgeStore { transport, missing_since: Arc::default() }
    }

    /// One protocol call, typed by its [`StoreCall`] definition (the one the main serves).
    fn call<C: StoreCall>(&self, request: Req<C>) -> Result<Resp<C>, StoreError> {
        let reply = self.send::<C>(request)?.map_err(|e| failed(C::ID, e))?;
        decode::<C>(reply)
    }

    /// [`Self::call`] of an extension a seed main may not serve: `None` when the engine says
    /// nobody registered it.
    fn call_if_served<C: StoreCall>(&self, request: Req<C>) -> Result<Option<Resp<C>>, StoreError> {
        match self.send::<C>(request)? {
            Ok(reply) => decode::<C>(reply).map(Some),
            Err(TransportError::Remote { code, .. }) if code == FUNCTION_NOT_FOUND => Ok(None),
            Err(e) => Err(failed(C::ID, e)),
        }
    }

    /// The request encoded and sent; the transport's answer as it came.
    fn send<C: StoreCall>(
        &self,
        request: Req<C>,
    ) -> Result<Result<serde_json::Value, TransportError>, StoreError> {
        let payload = serde_json::to_value(request)
            .map_err(|e| StoreError::Internal(format!("{}: unencodable request: {e}", C::ID)))?;
        Ok(self.transport.call(C::ID, payload))
    }

    /// A write answering `{ok: true}`.
    fn ok<C: StoreCall<Response = OkResponse>>(&self, request: Req<C>) -> Result<(), StoreError> {
        if self.call::<C>(request)?.ok {
            Ok(())
        } else {
            Err(unusable(C::ID, "the main answered ok: false"))
        }
    }

    /// One write of a change set of session `sid`.
    fn write(&self, sid: &str, write: &Write, applied: &mut Applied) -> Result<(), StoreError> {
        match write {
            Write::PutMeta(meta) => self.ok::<PutMeta>(PutMetaRequest { meta: meta.clone() }),
            Write::PutEntry(entry) => self.ok::<PutEntry>(PutEntryRequest {
                session_id: sid.to_string(),
                entry: entry.clone(),
            }),
            Write::SetActiveLeaf(id) => self.ok::<SetActiveLeaf>(EntryIdRequest {
                session_id: sid.to_string(),
                entry_id: id.clone(),
            }),
            Write::CommitAppend { entry, parent_explicit } => {
                let reply = self.call::<CommitAppend>(CommitAppendRequest {
                    session_id: sid.to_string(),
                    entry: entry.clone(),
                    parent_explicit: *parent_explicit,
                })?;
                applied.commit = Some(reply.into());
                Ok(())
            }
            Write::DeleteEntries => self.ok::<DeleteEntries>(session(sid)),
            Write::DeleteActiveLeaf => self.ok::<DeleteActiveLeaf>(session(sid)),
            Write::DeleteMeta => self.ok::<DeleteMeta>(session(sid)),
            Write::PutAttachment { meta, bytes } => {
                self.ok::<PutAttachment>(PutAttachmentRequest::new(meta.clone(), bytes))
            }
            Write::DeleteAttachment(id) => {
                let reply = self.call::<DeleteAttachment>(AttachmentIdRequest {
                    session_id: sid.to_string(),
                    attachment_id: id.clone(),
                })?;
                applied.attachments_deleted.push(reply.deleted);
                Ok(())
            }
            Write::DeleteAttachments => self.ok::<DeleteAttachments>(session(sid)),
            // A seed main keeps no feed: the changes go unrecorded (its `session::changes`
            // says so).
            Write::Feed { .. } => Ok(()),
            Write::AppendDelta { .. } => Err(StoreError::Unsupported(format!(
                "session::append-delta needs a main that serves {} (a seed main does not); \
                 use session::update-message",
                Apply::ID
            ))),
            Write::Trash { .. } | Write::Restore | Write::SetExpiry(_) => {
                Err(StoreError::Unsupported(format!(
                    "trash, restore and expiry need a main that serves {} (a seed main does not)",
                    Apply::ID
                )))
            }
        }
    }
}

impl BridgeStore {
    /// [`Self::call_if_served`] of an extension the seed's calls can stand in for: `None` (and
    /// no call for [`EXTENSION_RETRY_AFTER`]) once the main said it does not serve it.
    fn extension<C: StoreCall>(
        &self,
        request: impl FnOnce() -> Req<C>,
        fallback: &str,
    ) -> Result<Option<Resp<C>>, StoreError> {
        let missing = || self.missing_since.lock().unwrap_or_else(|p| p.into_inner());
        if missing().get(C::ID).is_some_and(|at| at.elapsed() < EXTENSION_RETRY_AFTER) {
            return Ok(None);
        }
        let response = self.call_if_served::<C>(request())?;
        if response.is_none() {
            if !self.serves_seed_protocol()? {
                return Err(StoreError::Unavailable {
                    function: C::ID.to_string(),
                    detail: "the main serves no session::store::* function (down or restarting)"
                        .to_string(),
                });
            }
            tracing::info!("bridge: the main does not serve {}; {fallback}", C::ID);
            missing().insert(C::ID, Instant::now());
        }
        Ok(response)
    }

    /// Whether the main serves the seed's protocol, asked after it answered `function_not_found`
    /// for an extension: a seed main does (any answer of `get-meta` but `function_not_found`); a
    /// main of ours that is down or restarting does not (the engine unregistered all of its
    /// functions), and falling back then would make its change sets non-atomic for
    /// [`EXTENSION_RETRY_AFTER`]. (A main registering its functions as it comes up can, for
    /// the few milliseconds between the seed's and the extensions' registrations, still look
    /// like a seed main.)
    fn serves_seed_protocol(&self) -> Result<bool, StoreError> {
        match self.send::<GetMeta>(session(PROBE_SESSION))? {
            Err(TransportError::Remote { code, .. }) if code == FUNCTION_NOT_FOUND => Ok(false),
            Err(TransportError::Unavailable(detail)) => {
                Err(StoreError::Unavailable { function: GetMeta::ID.to_string(), detail })
            }
            Ok(_) | Err(TransportError::Remote { .. }) => Ok(true),
        }
    }
}

/// The session id [`BridgeStore::serves_seed_protocol`] asks `get-meta` for (any answer will do).
const PROBE_SESSION: &str = "session-manager-bridge-probe";

/// The main's reply to `C`, decoded.
fn decode<C: StoreCall>(reply: serde_json::Value) -> Result<Resp<C>, StoreError> {
    serde_json::from_value(reply).map_err(|e| unusable(C::ID, format!("undecodable reply: {e}")))
}

impl BridgeStore {
    /// `session::store::lifecycles` of the main; unsupported when it does not serve it.
    fn lifecycles(&self, session_id: Option<&str>) -> Result<Vec<(String, Lifecycle)>, StoreError> {
        let request = StoreLifecyclesRequest { session_id: session_id.map(String::from) };
        match self.call_if_served::<Lifecycles>(request)? {
            Some(found) => {
                Ok(found.lifecycles.into_iter().map(|l| (l.session_id, l.lifecycle)).collect())
            }
            None => Err(StoreError::Unsupported(format!(
                "trash and expiry need a main that serves {} (a seed main does not)",
                Lifecycles::ID
            ))),
        }
    }
}

/// What a bridge does without the path windows.
const WALKS: &str = "paths are walked one session::store::get-entry per entry";
/// What a bridge does without list pages.
const SORTS: &str = "list pages sort every session::store::list-metas";

/// The engine's code for a call of a function nobody registered.
pub const FUNCTION_NOT_FOUND: &str = "function_not_found";

fn session(session_id: &str) -> SessionIdRequest {
    SessionIdRequest { session_id: session_id.to_string() }
}

/// A bridged call blocks on the main's answer; the main made its writes durable before it
/// answered.
impl session_core::Backend for BridgeStore {
    fn run(
        &self,
        _op: &session_core::catalog::Operation,
        call: &mut session_core::backend::Call<'_>,
    ) -> session_core::backend::Ran {
        (call(self), None)
    }
}

impl Store for BridgeStore {
    fn get_meta(&self, session_id: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.call::<GetMeta>(session(session_id))
    }

    fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
        Ok(self.call::<ListMetas>(ListMetasRequest {})?.metas)
    }

    fn get_entry(
        &self,
        session_id: &str,
        entry_id: &str,
    ) -> Result<Option<SessionEntry>, StoreError> {
        let request =
            EntryIdRequest { session_id: session_id.to_string(), entry_id: entry_id.to_string() };
        self.call::<GetEntry>(request)
    }

    fn list_entries(&self, session_id: &str) -> Result<Vec<SessionEntry>, StoreError> {
        Ok(self.call::<ListEntries>(session(session_id))?.entries)
    }

    fn get_active_leaf(&self, session_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self.call::<GetActiveLeaf>(session(session_id))?.entry_id)
    }

    fn get_attachment(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
        let request = AttachmentIdRequest {
            session_id: session_id.to_string(),
            attachment_id: attachment_id.to_string(),
        };
        let Some(stored) = self.call::<GetAttachment>(request)? else {
            return Ok(None);
        };
        let bytes = stored
            .bytes()
            .map_err(|e| unusable(GetAttachment::ID, format!("undecodable reply: {e}")))?;
        Ok(Some((stored.meta, bytes)))
    }

    /// Through `list-attachments`, so the bytes do not cross the wire (the protocol has no
    /// metadata-only read of one attachment).
    fn get_attachment_meta(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> Result<Option<AttachmentMeta>, StoreError> {
        let all = self.list_attachments(session_id)?;
        Ok(all.into_iter().find(|m| m.attachment_id == attachment_id))
    }

    fn list_attachments(&self, session_id: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
        Ok(self.call::<ListAttachments>(session(session_id))?.attachments)
    }

    /// The main's feed; a seed main does not serve `session::store::changes`.
    fn changes(
        &self,
        session_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<FeedPage, StoreError> {
        let request = StoreChangesRequest { session_id: session_id.into(), after_seq, limit };
        self.call_if_served::<Changes>(request)?.ok_or_else(|| {
            StoreError::Unsupported(format!(
                "the bridge's main does not serve {} (a seed main keeps no change feed)",
                Changes::ID
            ))
        })
    }

    /// The main's lifecycle of the session (`session::store::lifecycles`); a seed main keeps
    /// none (unsupported).
    fn lifecycle(&self, session_id: &str) -> Result<Lifecycle, StoreError> {
        let one = self.lifecycles(Some(session_id))?.into_iter().next();
        Ok(one.map(|(_, lifecycle)| lifecycle).unwrap_or_default())
    }

    fn list_lifecycles(&self) -> Result<Vec<(String, Lifecycle)>, StoreError> {
        self.lifecycles(None)
    }

    /// The main's kept totals in one `session::store::usage`; summed from its reads when the
    /// main does not serve it (a seed main).
    fn usage(&self, session_id: &str, leaf: Option<&str>) -> Result<(Tally, Tally), StoreError> {
        let request =
            StoreUsageRequest { session_id: session_id.into(), leaf: leaf.map(String::from) };
        match self.call_if_served::<UsageTallies>(request)? {
            Some(kept) => Ok((kept.branch, kept.session)),
            None => session_core::store::summed_usage(self, session_id, leaf),
        }
    }

    /// The main's index in one `session::store::path-locate`; a walk of `get-entry` calls when
    /// the main does not serve it (a seed main).
    fn path_locate(
        &self,
        session_id: &str,
        leaf: &str,
        entry_id: Option<&str>,
    ) -> Result<PathSpot, StoreError> {
        let request = || StorePathLocateRequest {
            session_id: session_id.into(),
            leaf: leaf.into(),
            entry_id: entry_id.map(String::from),
        };
        match self.extension::<PathLocate>(request, WALKS)? {
            Some(spot) => Ok(spot.into()),
            None => {
                path::walked_locate(session_id, leaf, entry_id, |id| self.get_entry(session_id, id))
            }
        }
    }

    /// The main's index in one `session::store::path-select`; a walk of `get-entry` calls when
    /// the main does not serve it (a seed main).
    fn path_select(
        &self,
        session_id: &str,
        leaf: &str,
        query: &path::PathSelect,
    ) -> Result<Vec<(usize, SessionEntry)>, StoreError> {
        let request = || StorePathSelectRequest::new(session_id, leaf, query);
        match self.extension::<PathSelect>(request, WALKS)? {
            Some(window) => Ok(window.into()),
            None => {
                path::walked_select(session_id, leaf, query, |id| self.get_entry(session_id, id))
            }
        }
    }

    /// The main's meta order in one `session::store::list-page`; every meta, sorted here, when
    /// the main does not serve it (a seed main).
    fn list_page(&self, query: &ListQuery<'_>) -> Result<Vec<SessionMeta>, StoreError> {
        let request = || StoreListPageRequest::new(query);
        match self.extension::<ListPage>(request, SORTS)? {
            Some(page) => Ok(page.sessions),
            None => Ok(meta_order::sorted_page(self.list_metas()?, query)),
        }
    }

    /// Several writes: one atomic `session::store::apply` when the main serves it; otherwise (and
    /// for a single write) one seed call per write, in order, stopping at the first failure (see
    /// the module docs).
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        // Several writes, or one the seed's protocol cannot carry (the feed, a delta, the
        // lifecycle).
        let needs_apply = changes.writes.len() > 1
            || changes.writes.iter().any(|w| {
                matches!(
                    w,
                    Write::Feed { .. }
                        | Write::AppendDelta { .. }
                        | Write::Trash { .. }
                        | Write::Restore
                        | Write::SetExpiry(_)
                )
            });
        if needs_apply {
            let request = || ApplyRequest::new(changes);
            let fallback = "multi-write change sets go one call per write";
            if let Some(applied) = self.extension::<Apply>(request, fallback)? {
                return Ok(applied.into());
            }
        }
        let mut applied = Applied::default();
        for write in &changes.writes {
            self.write(&changes.session_id, write, &mut applied)?;
        }
        Ok(applied)
    }
}
