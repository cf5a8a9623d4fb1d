//! The operation catalog: every function id (41) and trigger type (7) listed once, with its
//! description, metadata flags and request/response types. Host registration, the wasm and BDD
//! dispatchers and the schema golden test all read this one list.

use alloc::format;
use serde::de::value::MapDeserializer;
use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;

use crate::env::Env;
use crate::error::{Result, SessionError};
use crate::ops::{self, store_protocol as sp, Outcome};
use crate::store::Store;
use crate::wire::api_store as proto;
use crate::wire::*;

/// What a function is, which decides its metadata flags and whether it takes the session lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// Public mutation: `{internal, trace_hidden}`; serialized per session.
    Mutation,
    /// Public read: `{trace_hidden}`; takes no lock.
    Read,
    /// Internal `session::store::*` protocol: `{internal, trace_hidden}`; served in fs mode only.
    StoreProtocol,
    /// Host-level operator function (config status / reload): `{internal, trace_hidden}`.
    Operator,
}

/// Registration metadata flags of a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags {
    pub internal: bool,
    pub trace_hidden: bool,
}

impl OpKind {
    pub fn flags(self) -> Flags {
        Flags { internal: self != OpKind::Read, trace_hidden: true }
    }
}

impl Flags {
    /// The metadata object registered with the engine.
    pub fn to_json(self) -> Value {
        let mut map = Object::new();
        if self.internal {
            map.insert("internal".into(), Value::Bool(true));
        }
        if self.trace_hidden {
            map.insert("trace_hidden".into(), Value::Bool(true));
        }
        Value::Object(map)
    }
}

/// Which session a call must hold the lock of while it runs (contract §0.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKey {
    /// None: reads, `session::create` (its id is new) and the operator functions.
    None,
    /// The request's `session_id`.
    SessionId,
    /// The request's `session_id`, else its `meta.session_id` (the store protocol's writes).
    SessionIdOrMeta,
}

/// What a function touches of a session's attachments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attachments {
    /// Nothing.
    None,
    /// Attachment metadata or files, but no bytes in the request (get, list, delete).
    Files,
    /// The request carries the bytes (base64): its size budget follows `max_attachment_bytes`.
    BytesInRequest,
}

/// What a call does, declared once per function in the catalog; hosts read these instead of
/// guessing from the function id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effects {
    /// Whether it may change stored state.
    pub writes: bool,
    pub lock: LockKey,
    pub attachments: Attachments,
}

impl Effects {
    /// The size budget of a request to a function with these effects:
    /// [`MAX_REQUEST_BYTES`](crate::limits::MAX_REQUEST_BYTES), or for one that carries
    /// attachment bytes (the two `put-attachment` functions) enough for `max_attachment_bytes` in
    /// base64 plus 64 KiB.
    pub fn request_budget(self, limits: &crate::env::Limits) -> usize {
        let max = crate::limits::MAX_REQUEST_BYTES;
        if self.attachments != Attachments::BytesInRequest {
            return max;
        }
        let bytes = usize::try_from(limits.max_attachment_bytes).unwrap_or(usize::MAX);
        let base64 = bytes.div_ceil(3).saturating_mul(4);
        max.max(base64.saturating_add(64 << 10))
    }

    /// A read of sessions or entries.
    pub const READ: Effects =
        Effects { writes: false, lock: LockKey::None, attachments: Attachments::None };
    /// A read of attachment metadata or bytes (file IO).
    pub const READ_FILES: Effects = Effects { attachments: Attachments::Files, ..Effects::READ };
    /// A write of one named session, under its lock.
    pub const WRITE: Effects =
        Effects { writes: true, lock: LockKey::SessionId, attachments: Attachments::None };
    /// A write of one named session's attachment files, under its lock.
    pub const WRITE_FILES: Effects = Effects { attachments: Attachments::Files, ..Effects::WRITE };
    /// A write that carries attachment bytes, under the session's lock.
    pub const WRITE_BYTES: Effects =
        Effects { attachments: Attachments::BytesInRequest, ..Effects::WRITE };
    /// A write of a session nobody can name yet (`session::create`): no lock.
    pub const CREATE: Effects = Effects { lock: LockKey::None, ..Effects::WRITE };
    /// A store-protocol write: locks `session_id`, else `meta.session_id`.
    pub const STORE_WRITE: Effects = Effects { lock: LockKey::SessionIdOrMeta, ..Effects::WRITE };
    /// A store-protocol write of attachment files.
    pub const STORE_WRITE_FILES: Effects =
        Effects { attachments: Attachments::Files, ..Effects::STORE_WRITE };
    /// A store-protocol write that carries attachment bytes.
    pub const STORE_WRITE_BYTES: Effects =
        Effects { attachments: Attachments::BytesInRequest, ..Effects::STORE_WRITE };
    /// `session::erase`: deletes many sessions (each under its store's own lock) and their
    /// attachment files.
    pub const ERASE: Effects =
        Effects { lock: LockKey::None, attachments: Attachments::Files, ..Effects::WRITE };
    /// `session::sweep`: removes the sessions that are due, each under its store's own lock.
    pub const SWEEP: Effects = Effects::ERASE;
    /// Served by the host and changes its state (the configuration reload), no session lock.
    pub const HOST_WRITE: Effects = Effects { lock: LockKey::None, ..Effects::WRITE };
}

/// One function of the catalog.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    pub id: &'static str,
    pub kind: OpKind,
    /// What a call does: writes, the lock it takes, attachment bytes.
    pub effects: Effects,
    pub description: &'static str,
    /// Rust names of the request and response types (schema titles).
    pub request_type: &'static str,
    pub response_type: &'static str,
    #[cfg(feature = "schema")]
    pub request_schema: fn() -> Value,
    #[cfg(feature = "schema")]
    pub response_schema: fn() -> Value,
}

/// One trigger type of the catalog.
#[derive(Debug, Clone, Copy)]
pub struct TriggerType {
    pub id: &'static str,
    pub description: &'static str,
    pub config_type: &'static str,
    #[cfg(feature = "schema")]
    pub config_schema: fn() -> Value,
}

/// The draft-07 root schema of `T`, exactly as iii-sdk 0.24 derives it (trigger types register
/// theirs that way, from the type).
#[cfg(feature = "schema")]
pub fn derived_schema_of<T: schemars::JsonSchema>() -> Value {
    let root =
        schemars::gen::SchemaSettings::draft07().into_generator().into_root_schema_for::<T>();
    serde_json::to_value(root).unwrap_or(Value::Null)
}

/// The schema a function registers: [`derived_schema_of`] with every integral number written as
/// an integer, as the reference writes it (schemars writes `"minimum": 0.0`, the reference `0`),
/// so a registration equals the reference to the letter.
#[cfg(feature = "schema")]
pub fn schema_of<T: schemars::JsonSchema>() -> Value {
    let mut schema = derived_schema_of::<T>();
    integral_numbers_as_integers(&mut schema);
    schema
}

/// Rewrites `0.0` as `0` (any float with no fraction that an `i64` holds exactly), in place.
#[cfg(feature = "schema")]
fn integral_numbers_as_integers(value: &mut Value) {
    /// 2^53: past it an `f64` no longer holds every integer.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() == 0.0 && f.abs() <= EXACT {
                *n = serde_json::Number::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers_as_integers),
        Value::Object(map) => map.values_mut().for_each(integral_numbers_as_integers),
        _ => {}
    }
}

/// Decodes a request; `null` counts as `{}`. Requests are JSON objects: anything else (serde
/// would fill a struct from an array by position) and every shape error is
/// `session/invalid_request`, and so is a request past the [`limits`](crate::limits) (depth,
/// [`MAX_REQUEST_BYTES`](crate::limits::MAX_REQUEST_BYTES), id length), checked before serde.
pub fn decode_request<T: DeserializeOwned>(payload: Value) -> Result<T> {
    decode_request_within(payload, crate::limits::MAX_REQUEST_BYTES)
}

/// [`decode_request`] with a size budget of `max_bytes` ([`Effects::request_budget`]).
pub fn decode_request_within<T: DeserializeOwned>(payload: Value, max_bytes: usize) -> Result<T> {
    let Value::Object(fields) = checked_object(payload, max_bytes)? else {
        return Err(SessionError::bad_request_shape("expected a JSON object"));
    };
    // Read as a map only: `serde_json::from_value` would also link each request type's decoder
    // for the array form of a struct, which no caller sends (the browser bundle's size).
    T::deserialize(MapDeserializer::<_, serde_json::Error>::new(fields.into_iter()))
        .map_err(SessionError::bad_request_shape)
}

/// The part of [`decode_request_within`] that does not depend on the request type (written once,
/// not once per request type): the limits, then `null` as `{}` and anything but an object refused.
fn checked_object(payload: Value, max_bytes: usize) -> Result<Value> {
    Ok(match crate::limits::check(payload, max_bytes)? {
        Value::Null => Value::Object(Object::new()),
        object @ Value::Object(_) => object,
        other => {
            return Err(SessionError::bad_request_shape(format!(
                "expected a JSON object, got {}",
                json_kind(&other)
            )))
        }
    })
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A row's outcome as the wire answer, typed by the row's response type `R`: a typed outcome is
/// encoded here, one the operation already encoded ([`ops::Encoded`]) passes through.
trait IntoWire<R> {
    fn into_wire(self) -> Result<Outcome<Value>>;
}

impl<R: Serialize> IntoWire<R> for Outcome<R> {
    fn into_wire(self) -> Result<Outcome<Value>> {
        ops::encode(self)
    }
}

impl<R> IntoWire<R> for ops::Encoded<R> {
    fn into_wire(self) -> Result<Outcome<Value>> {
        Ok(self.0)
    }
}

fn host_only<R>(id: &str) -> Result<Outcome<R>> {
    Err(SessionError::invalid_request(format!("{id} is served by the host, not the core")))
}

macro_rules! operations {
    ($( $(#[$cfg:meta])? $id:literal, $kind:ident / $effects:ident, $Req:ty => $Resp:ty,
        $desc:literal, |$s:ident, $e:ident, $r:ident| $body:expr; )*) => {
        &[$(
            $(#[$cfg])?
            Operation {
                id: $id,
                kind: OpKind::$kind,
                effects: Effects::$effects,
                description: $desc,
                request_type: stringify!($Req),
                response_type: stringify!($Resp),
                #[cfg(feature = "schema")]
                request_schema: schema_of::<$Req>,
                #[cfg(feature = "schema")]
                response_schema: schema_of::<$Resp>,
            },
        )*]
    };
}

/// One dispatch: the request decoded within its budget, decided, applied and encoded.
macro_rules! run {
    ($store:ident, $env:ident, $payload:ident, $effects:ident, $Req:ty => $Resp:ty,
        |$s:ident, $e:ident, $r:ident| $body:expr) => {
        (|| {
            let budget = Effects::$effects.request_budget(&$env.limits);
            let $r: $Req = decode_request_within($payload, budget)?;
            let ($s, $e) = ($store, $env);
            let outcome = $body?;
            IntoWire::<$Resp>::into_wire(outcome)
        })()
    };
}

macro_rules! catalog {
    (seed { $( $id:literal, $kind:ident / $effects:ident, $Req:ty => $Resp:ty, $desc:literal,
        |$s:ident, $e:ident, $r:ident| $body:expr; )* }
     extensions { $( $xid:literal, $xkind:ident / $xeffects:ident, $XReq:ty => $XResp:ty,
        $xdesc:literal, |$xs:ident, $xe:ident, $xr:ident| $xbody:expr; )* }
     store_windows { $( $wid:literal, $wkind:ident / $weffects:ident, $WReq:ty => $WResp:ty,
        $wdesc:literal, |$ws:ident, $we:ident, $wr:ident| $wbody:expr; )* }
     durable { $( $did:literal, $dkind:ident / $deffects:ident, $DReq:ty => $DResp:ty,
        $ddesc:literal, |$ds:ident, $de:ident, $dr:ident| $dbody:expr; )* }
     formats { $( $fid:literal, $fkind:ident / $feffects:ident, $FReq:ty => $FResp:ty,
        $fdesc:literal, |$fs:ident, $fe:ident, $fr:ident| $fbody:expr; )* }) => {
        /// The seed's functions (v1.0.32's 41), in registration order: ids, schemas and
        /// descriptions exactly the reference's (`spec/agent-api-reference.json`).
        pub const OPERATIONS: &[Operation] = operations! { $(
            $id, $kind / $effects, $Req => $Resp, $desc, |$s, $e, $r| $body;
        )* };

        /// Our additive functions, listed apart from the seed's: each has its own golden
        /// registration file under `spec/extensions/`, and a worker registers them unless it
        /// runs seed-only. The store protocol's extensions (a whole change set, feed pages, path
        /// windows, list pages) are here only with feature `store-windows` (a bridge's main
        /// serves them; the browser build leaves them out), and erasure only with feature
        /// `durable` (what it erases beyond a delete is what a durable store keeps elsewhere; the
        /// browser's in-memory workspace has none of it), and import / export of other agents'
        /// files only with feature `formats` (the npm package's main entry leaves them out).
        pub const EXTENSIONS: &[Operation] = operations! {
            $( $xid, $xkind / $xeffects, $XReq => $XResp, $xdesc, |$xs, $xe, $xr| $xbody; )*
            $( #[cfg(feature = "store-windows")]
               $wid, $wkind / $weffects, $WReq => $WResp, $wdesc, |$ws, $we, $wr| $wbody; )*
            $( #[cfg(feature = "durable")]
               $did, $dkind / $deffects, $DReq => $DResp, $ddesc, |$ds, $de, $dr| $dbody; )*
            $( #[cfg(feature = "formats")]
               $fid, $fkind / $feffects, $FReq => $FResp, $fdesc, |$fs, $fe, $fr| $fbody; )*
        };

        /// Runs function `id` (seed or extension) on a JSON payload: decode, decide, apply,
        /// encode. `None` when the id is not in the catalog. Events in the outcome are for the
        /// host to publish.
        #[allow(unused_variables)]
        pub fn dispatch(
            store: &dyn Store,
            env: &Env<'_>,
            id: &str,
            payload: Value,
        ) -> Option<Result<Outcome<Value>>> {
            match id {
                $( $id => Some(run!(store, env, payload, $effects, $Req => $Resp,
                    |$s, $e, $r| $body)), )*
                $( $xid => Some(run!(store, env, payload, $xeffects, $XReq => $XResp,
                    |$xs, $xe, $xr| $xbody)), )*
                $( #[cfg(feature = "store-windows")]
                   $wid => Some(run!(store, env, payload, $weffects, $WReq => $WResp,
                    |$ws, $we, $wr| $wbody)), )*
                $( #[cfg(feature = "durable")]
                   $did => Some(run!(store, env, payload, $deffects, $DReq => $DResp,
                    |$ds, $de, $dr| $dbody)), )*
                $( #[cfg(feature = "formats")]
                   $fid => Some(run!(store, env, payload, $feffects, $FReq => $FResp,
                    |$fs, $fe, $fr| $fbody)), )*
                _ => None,
            }
        }
    };
}

catalog! {
seed {
    "session::create", Mutation / CREATE, CreateRequest => CreateResponse,
        "Create a session at status idle; fires session::created.",
        |s, e, r| ops::create::decide(s, e, r)?.execute(s, e);
    "session::ensure", Mutation / WRITE, EnsureRequest => EnsureResponse,
        "Idempotently ensure a session with a given id exists; fires session::created only when it creates.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::ensure::decide(v, e, r.clone())) };
    "session::get", Read / READ, GetRequest => Option<GetResponse>,
        "Read one session's metadata (null when unknown).",
        |s, e, r| ops::get::decide(s, r).map(Outcome::silent);
    "session::list", Read / READ, ListRequest => ListResponse,
        "List sessions with pagination, ordering, and status/metadata filters.",
        |s, e, r| ops::list::decide(s, e, r).map(Outcome::silent);
    "session::set-meta", Mutation / WRITE, SetMetaRequest => SetMetaResponse,
        "Update a session's title/description/metadata; fires session::meta-updated.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::set_meta::decide(v, e, r.clone())) };
    "session::set-status", Mutation / WRITE, SetStatusRequest => SetStatusResponse,
        "Set status idle/working/done/error; fires session::status-changed (no-op when unchanged).",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::set_status::decide(v, e, r.clone())) };
    "session::set-draft", Mutation / WRITE, SetDraftRequest => SetDraftResponse,
        "Park (or clear) the session's unsent composer input — text and attachment ids; event-silent, read back on SessionMeta.draft / draft_attachments.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, _| ops::set_draft::decide(v, r.clone())) };
    "session::delete", Mutation / WRITE_FILES, DeleteRequest => DeleteResponse,
        "Delete a session and its entries; fires session::deleted.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::delete::decide(v, e, r.clone())) };
    "session::append", Mutation / WRITE, AppendRequest => AppendResponse,
        "Append one entry (idempotent on entry_id); fires session::message-added.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::append::decide(v, e, r.clone())) };
    "session::append-many", Mutation / WRITE, AppendManyRequest => AppendManyResponse,
        "Append several message entries in order; fires session::message-added per entry.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::append_many::decide(v, e, r.clone())) };
    "session::update-message", Mutation / WRITE, UpdateMessageRequest => UpdateMessageResponse,
        "Replace a message entry's content (optimistic concurrency via expected_revision); fires session::message-updated.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::update_message::decide(v, e, r.clone())) };
    "session::get-message", Read / READ, GetMessageRequest => Option<GetMessageResponse>,
        "Read a single entry by id (null when unknown).",
        |s, e, r| ops::get_message::decide(s, r).map(Outcome::silent);
    "session::messages", Read / READ, MessagesRequest => MessagesResponse,
        "Load the active path as messages with entry ids, oldest first; pagination and role filtering.",
        |s, e, r| ops::messages::decide(s, e, r).map(Outcome::silent);
    "session::messages-range", Read / READ, MessagesRangeRequest => MessagesRangeResponse,
        "Full entries for a span (from/to) or list (entry_ids) of the active path — how a reader fetches the calls a collapsed run left out.",
        |s, e, r| ops::messages_range::decide(s, e, r).map(Outcome::silent);
    "session::messages-tail", Read / READ, MessagesTailRequest => MessagesTailResponse,
        "Newest page of the active path, walking backwards in block-aligned pages (a tool run never splits) with activity runs collapsed to placeholders; the reader a chat UI opens a session with.",
        |s, e, r| ops::messages_tail::decide(s, e, r).map(Outcome::silent);
    "session::fork", Mutation / WRITE, ForkRequest => ForkResponse,
        "Copy history up to an entry into a new session (copy-on-fork); fires session::created.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::fork::decide(v, e, r.clone())) };
    "session::set-active-leaf", Mutation / WRITE, SetActiveLeafRequest => SetActiveLeafResponse,
        "Move the active path to end at a given entry (branch switch).",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, _| ops::set_active_leaf::decide(v, r.clone())) };
    "session::put-attachment", Mutation / WRITE_BYTES, PutAttachmentRequest => PutAttachmentResponse,
        "Store an attachment's original bytes (base64) for a session and return the `file` content block that references it; event-silent.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::attachments::put(v, e, r.clone())) };
    "session::get-attachment", Read / READ_FILES, GetAttachmentRequest => Option<GetAttachmentResponse>,
        "Read one stored attachment's metadata and bytes (null when unknown).",
        |s, e, r| ops::attachments::get(s, r).map(Outcome::silent);
    "session::list-attachments", Read / READ_FILES, ListAttachmentsRequest => ListAttachmentsResponse,
        "List the metadata of every attachment stored for a session.",
        |s, e, r| ops::attachments::list(s, r).map(Outcome::silent);
    "session::delete-attachment", Mutation / WRITE_FILES, DeleteAttachmentRequest => DeleteAttachmentResponse,
        "Delete one stored attachment no transcript entry references (e.g. a chip removed from the composer); also drops it from the draft. Event-silent.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, _| ops::attachments::delete(v, r.clone())) };
    "session::config-status", Operator / READ, ConfigStatusRequest => ReloadStatus,
        "Report the last configuration hot-reload outcome: last_outcome (applied|rejected), last_error, and rejected_reloads (count since boot). A rejected outcome or non-zero count means a stored config was refused and the active storage adapter diverged from the central store. Takes no arguments.",
        |s, e, r| host_only::<ReloadStatus>("session::config-status");
    "session::on-config-change", Operator / HOST_WRITE, OnConfigChangeEvent => OnConfigChangeResponse,
        "Internal: hot-reload session-manager from the authoritative configuration when it changes — rebuilds the storage adapter and event plumbing on an adapter change (replaying current state to subscribers) and swaps the list limits otherwise.",
        |s, e, r| host_only::<OnConfigChangeResponse>("session::on-config-change");
    "session::store::commit-append", StoreProtocol / STORE_WRITE, proto::CommitAppendRequest => proto::CommitAppendResponse,
        "Internal store protocol: atomically commit one session append.",
        |s, e, r| sp::commit_append(s, r).map(Outcome::silent);
    "session::store::delete-active-leaf", StoreProtocol / STORE_WRITE, proto::SessionIdRequest => proto::OkResponse,
        "Internal store protocol: clear a session's active leaf pointer.",
        |s, e, r| sp::delete_active_leaf(s, r).map(Outcome::silent);
    "session::store::delete-attachment", StoreProtocol / STORE_WRITE_FILES, proto::AttachmentIdRequest => proto::DeletedResponse,
        "Internal store protocol: delete one attachment (deleted: false when unknown).",
        |s, e, r| sp::delete_attachment(s, r).map(Outcome::silent);
    "session::store::delete-attachments", StoreProtocol / STORE_WRITE_FILES, proto::SessionIdRequest => proto::OkResponse,
        "Internal store protocol: delete every attachment of a session.",
        |s, e, r| sp::delete_attachments(s, r).map(Outcome::silent);
    "session::store::delete-entries", StoreProtocol / STORE_WRITE, proto::SessionIdRequest => proto::OkResponse,
        "Internal store protocol: delete every entry of a session.",
        |s, e, r| sp::delete_entries(s, r).map(Outcome::silent);
    "session::store::delete-meta", StoreProtocol / STORE_WRITE, proto::SessionIdRequest => proto::OkResponse,
        "Internal store protocol: delete one SessionMeta.",
        |s, e, r| sp::delete_meta(s, r).map(Outcome::silent);
    "session::store::get-active-leaf", StoreProtocol / READ, proto::SessionIdRequest => proto::ActiveLeafResponse,
        "Internal store protocol: read a session's active leaf pointer.",
        |s, e, r| sp::get_active_leaf(s, r).map(Outcome::silent);
    "session::store::get-attachment", StoreProtocol / READ_FILES, proto::AttachmentIdRequest => Option<proto::StoredAttachment>,
        "Internal store protocol: read one attachment (metadata + base64 bytes; null when unknown).",
        |s, e, r| sp::get_attachment(s, r).map(Outcome::silent);
    "session::store::get-entry", StoreProtocol / READ, proto::EntryIdRequest => Option<SessionEntry>,
        "Internal store protocol: read one SessionEntry (null when unknown).",
        |s, e, r| sp::get_entry(s, r).map(Outcome::silent);
    "session::store::get-meta", StoreProtocol / READ, proto::SessionIdRequest => Option<SessionMeta>,
        "Internal store protocol: read one SessionMeta (null when unknown).",
        |s, e, r| sp::get_meta(s, r).map(Outcome::silent);
    "session::store::list-attachments", StoreProtocol / READ_FILES, proto::SessionIdRequest => proto::ListAttachmentsResponse,
        "Internal store protocol: list every attachment's metadata of a session.",
        |s, e, r| sp::list_attachments(s, r).map(Outcome::silent);
    "session::store::list-entries", StoreProtocol / READ, proto::SessionIdRequest => proto::ListEntriesResponse,
        "Internal store protocol: list every entry of a session.",
        |s, e, r| sp::list_entries(s, r).map(Outcome::silent);
    "session::store::list-metas", StoreProtocol / READ, proto::ListMetasRequest => proto::ListMetasResponse,
        "Internal store protocol: list every SessionMeta.",
        |s, e, r| sp::list_metas(s, r).map(Outcome::silent);
    "session::store::publish-events", StoreProtocol / READ, proto::PublishEventsRequest => proto::PublishEventsResponse,
        "Internal store protocol: ingest a bridged instance's event envelopes and fan them out to local subscribers and every attached bridge.",
        |s, e, r| Ok::<_, SessionError>(sp::publish_events(r));
    "session::store::put-attachment", StoreProtocol / STORE_WRITE_BYTES, proto::PutAttachmentRequest => proto::OkResponse,
        "Internal store protocol: write one attachment (metadata + base64 bytes).",
        |s, e, r| sp::put_attachment(s, r).map(Outcome::silent);
    "session::store::put-entry", StoreProtocol / STORE_WRITE, proto::PutEntryRequest => proto::OkResponse,
        "Internal store protocol: write one SessionEntry.",
        |s, e, r| sp::put_entry(s, r).map(Outcome::silent);
    "session::store::put-meta", StoreProtocol / STORE_WRITE, proto::PutMetaRequest => proto::OkResponse,
        "Internal store protocol: write one SessionMeta.",
        |s, e, r| sp::put_meta(s, r).map(Outcome::silent);
    "session::store::set-active-leaf", StoreProtocol / STORE_WRITE, proto::EntryIdRequest => proto::OkResponse,
        "Internal store protocol: move a session's active leaf pointer.",
        |s, e, r| sp::set_active_leaf(s, r).map(Outcome::silent);
}
extensions {
    "session::changes", Read / READ, ChangesRequest => ChangesResponse,
        "A session's change feed after a seq, in seq order: every event its mutations fired, each with the session's next seq (no gaps, never reused). truncated: true means the changes after after_seq are no longer kept; reload and resume at latest_seq.",
        |s, e, r| ops::changes::decide(s, e, r).map(Outcome::silent);
    "session::append-delta", Mutation / WRITE, AppendDeltaRequest => AppendDeltaResponse,
        "Append streamed text (or thinking) to a message's last text (thinking) block in O(delta); fires session::message-updated with the full message and records a compact session::message-delta change.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::append_delta::decide(v, e, r.clone())) };
    "session::trash", Mutation / WRITE, TrashRequest => TrashResponse,
        "Move a session to the trash: it keeps everything it holds but no read or list sees it until session::restore; purged after trash_retention_secs. Fires session::deleted.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::trash::trash(v, e, r.clone())) };
    "session::restore", Mutation / WRITE, RestoreRequest => RestoreResponse,
        "Bring a trashed session back exactly as it was; fires session::created (the feed starts a new epoch).",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, _| ops::trash::restore(v, r.clone())) };
    "session::list-trash", Read / READ, ListTrashRequest => ListTrashResponse,
        "List the sessions in the trash, newest trashed first, with when each is purged; metadata filter as session::list.",
        |s, e, r| ops::trash::list(s, e, r).map(Outcome::silent);
    "session::set-expiry", Mutation / WRITE, SetExpiryRequest => SetExpiryResponse,
        "Set (or clear with null) when a session is deleted: expires_at in milliseconds since the epoch. Swept by the worker in the background and at start; event-silent until the sweep fires session::deleted.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, _| ops::expiry::set(v, r.clone())) };
    "session::lifecycle", Read / READ, LifecycleRequest => Option<LifecycleResponse>,
        "Read a session's lifecycle: expires_at, and trashed_at / purge_at while it is in the trash (null when unknown).",
        |s, e, r| ops::expiry::read(s, e, r).map(Outcome::silent);
    "session::sweep", Mutation / SWEEP, SweepRequest => SweepResponse,
        "Delete every session whose expires_at has passed and purge every session trashed longer than trash_retention_secs (the worker runs this itself every second); answers how many of each.",
        |s, e, r| ops::sweep::run(s, e, r);
    "session::compact", Mutation / WRITE, CompactRequest => AppendResponse,
        "Append a compaction record (a custom entry of type compaction: summary, first_kept_entry_id, tokens_before?, details?) after checking that the first kept entry is on its path and that the cut keeps every function call with its result; otherwise as session::append.",
        |s, e, r| { let sid = r.session_id.clone(); ops::transact(s, e, &sid, |v, e| ops::compact::decide(v, e, r.clone())) };
    "session::context", Read / READ, ContextRequest => ContextResponse,
        "What a model is given for the branch ending at leaf (default: the active leaf): the newest valid compaction on that branch, then its message entries from the first kept one, with a token estimate; with token_budget the oldest whole turns are dropped until it fits.",
        |s, e, r| ops::context::decide(s, r).map(Outcome::silent);
    "session::usage", Read / READ, UsageRequest => UsageResponse,
        "Token, cost and message totals of the branch ending at leaf (default: the active leaf) and of the whole session: input, output, cache_read, cache_write, reasoning and cost_usd summed from assistant messages' usage, messages counted by role; kept as entries are written, so a read does not grow with the session.",
        |s, e, r| ops::usage::decide(s, r).map(Outcome::silent);
    "session::search", Read / READ, SearchRequest => SearchResponse,
        "Full-text search across sessions: words (all must match), \"exact phrases\" and prefix* in messages' text, thinking, function calls (id, function id, arguments) and results, custom entries and session titles and descriptions; case and accents folded, CJK found by any substring of two or more characters, code identifiers and paths whole and by their parts. Filters: metadata (subset match, as session::list), kinds, roles, session_ids, branch (all or active), since, until. Hits best first, paged with a cursor.",
        |s, e, r| ops::search::decide(s, e, r).map(Outcome::silent);
}
store_windows {
    "session::store::apply", StoreProtocol / STORE_WRITE_BYTES, ApplyRequest => ApplyResponse,
        "Internal store protocol (extension): apply one session's whole change set atomically, so a bridged multi-write mutation lands all or nothing.",
        |s, e, r| sp::apply(s, r).map(Outcome::silent);
    "session::store::changes", StoreProtocol / READ, StoreChangesRequest => FeedPage,
        "Internal store protocol (extension): one page of a session's change feed after a seq.",
        |s, e, r| sp::changes(s, r).map(Outcome::silent);
    "session::store::path-locate", StoreProtocol / READ, StorePathLocateRequest => StorePathSpot,
        "Internal store protocol (extension): the length of a session's path root → leaf and where an entry is on it, from the main's index in one call.",
        |s, e, r| sp::path_locate(s, r).map(Outcome::silent);
    "session::store::path-select", StoreProtocol / READ, StorePathSelectRequest => StorePathWindow,
        "Internal store protocol (extension): one window of a session's path root → leaf (entries of some classes from a position, forward or backward), from the main's index in one call.",
        |s, e, r| sp::path_select(s, r).map(Outcome::silent);
    "session::store::list-page", StoreProtocol / READ, StoreListPageRequest => StoreListPage,
        "Internal store protocol (extension): one ordered, filtered page of session metas (status, kinds, metadata) after a position, from the main's meta order in one call.",
        |s, e, r| sp::list_page(s, r).map(Outcome::silent);
    "session::store::lifecycles", StoreProtocol / READ, StoreLifecyclesRequest => StoreLifecycles,
        "Internal store protocol (extension): the lifecycle (trash, expiry) of one session, or of every session that has one.",
        |s, e, r| sp::lifecycles(s, r).map(Outcome::silent);
    "session::store::usage", StoreProtocol / READ, StoreUsageRequest => StoreUsage,
        "Internal store protocol (extension): the usage tallies (integers) of a session's branch root → leaf and of the whole session, from the totals the main keeps.",
        |s, e, r| sp::usage(s, r).map(Outcome::silent);
}
durable {
    "session::erase", Mutation / ERASE, EraseRequest => EraseResponse,
        "Erase every trace of a session, or of every session whose metadata matches a filter (subset match, as session::list; all: true for an empty filter): entries, attachments, feed, and the store's journal and indexes. Fires session::deleted per session; answers how many sessions and bytes were erased.",
        |s, e, r| ops::erase::run(s, e, r);
}
formats {
    "session::import", Mutation / CREATE, ImportRequest => ImportResponse,
        "Import one file of another agent's format (format: pi, claude-code, openai or ui-message; data: the file's text) as one session, its id the file's (pi, Claude Code) or the file name's stem: every entry and branch, compactions as compaction records, the active leaf. Importing the same file again answers unchanged and writes nothing; a stored session of that id with other content is left alone (exists) unless replace. Fires session::created (after session::deleted for a replaced one).",
        |s, e, r| ops::import::run(s, e, r);
    "session::export", Read / READ, ExportRequest => ExportResponse,
        "Write one session in another agent's format (pi, claude-code: every branch, the active leaf last; openai, ui-message: the active branch): the file's text and a file name for it. Entries imported from that format come back as they were read.",
        |s, e, r| ops::export::decide(s, e, r).map(Outcome::silent);
}
}

/// [`dispatch`] for a caller that may name any function: an id outside the catalog is
/// `session/invalid_request` (hosts register only catalog ids, so only direct callers see it).
pub fn call(store: &dyn Store, env: &Env<'_>, id: &str, payload: Value) -> Result<Outcome<Value>> {
    dispatch(store, env, id, payload).unwrap_or_else(|| {
        Err(SessionError::invalid_request(format!("unknown function {}", clip(id))))
    })
}

/// At most 128 bytes of `text` (cut at a char boundary), for echoing caller input in errors.
pub(crate) fn clip(text: &str) -> &str {
    let mut end = text.len().min(128);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Every function a worker may register: the seed's, then the extensions.
pub fn all_operations() -> impl Iterator<Item = &'static Operation> {
    OPERATIONS.iter().chain(EXTENSIONS)
}

/// Looks a function (seed or extension) up by id.
pub fn operation(id: &str) -> Option<&'static Operation> {
    all_operations().find(|op| op.id == id)
}

macro_rules! trigger_list {
    ($( $id:expr, $Config:ty, $desc:literal; )*) => {
        &[$(
            TriggerType {
                id: $id,
                description: $desc,
                config_type: stringify!($Config),
                #[cfg(feature = "schema")]
                config_schema: derived_schema_of::<$Config>,
            },
        )*]
    };
}

macro_rules! triggers {
    (seed { $( $id:expr, $Config:ty, $desc:literal; )* }
     extensions { $( $xid:expr, $XConfig:ty, $xdesc:literal; )* }) => {
        /// The seed's trigger types, in registration order (the six public ones, then the bridge
        /// feed): ids, descriptions and config schemas exactly the reference's.
        pub const TRIGGER_TYPES: &[TriggerType] = trigger_list! { $( $id, $Config, $desc; )* };

        /// Our additive trigger types, listed apart from the seed's (each with its golden file
        /// under `spec/extensions/`); a worker registers them unless it runs seed-only.
        pub const EXTENSION_TRIGGER_TYPES: &[TriggerType] =
            trigger_list! { $( $xid, $XConfig, $xdesc; )* };

        /// Calls `visitor` once per trigger type with its config type, the seed's in
        /// [`TRIGGER_TYPES`] order, then (unless `seed_only`) the extensions: how a host registers
        /// each trigger type with a typed config schema without naming the types itself.
        #[cfg(feature = "schema")]
        pub fn visit_trigger_types(visitor: &mut impl TriggerConfigVisitor, seed_only: bool) {
            let mut types = TRIGGER_TYPES.iter();
            $( if let Some(trigger) = types.next() {
                visitor.visit::<$Config>(trigger);
            } )*
            if seed_only {
                return;
            }
            let mut types = EXTENSION_TRIGGER_TYPES.iter();
            $( if let Some(trigger) = types.next() {
                visitor.visit::<$XConfig>(trigger);
            } )*
        }
    };
}

/// Every trigger type a worker may register: the seed's, then the extensions.
pub fn all_trigger_types() -> impl Iterator<Item = &'static TriggerType> {
    TRIGGER_TYPES.iter().chain(EXTENSION_TRIGGER_TYPES)
}

/// Does something with one trigger type and its binding-config type ([`visit_trigger_types`]).
#[cfg(feature = "schema")]
pub trait TriggerConfigVisitor {
    fn visit<C>(&mut self, trigger: &'static TriggerType)
    where
        C: schemars::JsonSchema + Serialize + DeserializeOwned + 'static;
}

triggers! {
seed {
    crate::events::CREATED, CreatedBindingConfig,
        "A new session exists (via session::create or session::fork).";
    crate::events::MESSAGE_ADDED, MessageBindingConfig,
        "A message entry was appended to a session.";
    crate::events::MESSAGE_UPDATED, MessageBindingConfig,
        "A message entry's content changed (e.g. streaming deltas).";
    crate::events::STATUS_CHANGED, SessionBindingConfig,
        "A session's status changed (idle/working/done/error).";
    crate::events::META_UPDATED, SessionBindingConfig,
        "A session's title/description/metadata changed.";
    crate::events::DELETED, SessionBindingConfig,
        "A session and its entries were removed.";
    crate::events::STORE_EVENTS, StoreEventsBindingConfig,
        "Internal: event-envelope feed for bridged session-manager instances. Not for direct consumption — bind the six public session::* types instead.";
}
extensions {
    crate::feed::CHANGED, ChangedBindingConfig,
        "Every change of a session with its seq (no gaps per session): fill a jump with session::changes.";
}
}

#[cfg(all(test, feature = "schema"))]
mod schema_number_tests {
    use super::*;

    fn floats(value: &Value, path: &str, out: &mut alloc::vec::Vec<alloc::string::String>) {
        match value {
            Value::Number(n) if n.is_f64() => out.push(format!("{path}={n}")),
            Value::Array(items) => {
                items.iter().enumerate().for_each(|(i, v)| floats(v, &format!("{path}/{i}"), out))
            }
            Value::Object(map) => {
                map.iter().for_each(|(k, v)| floats(v, &format!("{path}/{k}"), out))
            }
            _ => {}
        }
    }

    /// schemars writes `minimum: 0.0`; what a function registers writes `0`, like the reference.
    #[test]
    fn registered_schemas_write_integral_numbers_as_integers() {
        let derived = derived_schema_of::<AppendRequest>().to_string();
        assert!(derived.contains("\"minimum\":0.0"), "schemars no longer writes 0.0: {derived}");
        let mut found = alloc::vec::Vec::new();
        for op in all_operations() {
            floats(&(op.request_schema)(), &format!("{} request", op.id), &mut found);
            floats(&(op.response_schema)(), &format!("{} response", op.id), &mut found);
        }
        for trigger in all_trigger_types() {
            floats(&(trigger.config_schema)(), &format!("{} config", trigger.id), &mut found);
        }
        assert!(found.is_empty(), "float numbers in registered schemas: {found:?}");
    }
}

#[cfg(test)]
mod effects_tests {
    use super::*;

    /// The declared effects agree with the kinds: reads never write or lock, public mutations
    /// lock their session (but `create` and `erase`), store writes lock `session_id` or `meta.session_id`,
    /// and only the two `put-attachment` functions carry bytes.
    #[test]
    fn effects_agree_with_kinds() {
        for op in all_operations() {
            let fx = op.effects;
            match op.kind {
                OpKind::Read => assert!(!fx.writes && fx.lock == LockKey::None, "{}", op.id),
                OpKind::Mutation => {
                    // `create` names no session yet; `erase` deletes many, each in its own
                    // transaction under its store's lock.
                    let unlocked =
                        ["session::create", "session::erase", "session::sweep", "session::import"];
                    let lock =
                        if unlocked.contains(&op.id) { LockKey::None } else { LockKey::SessionId };
                    assert!(fx.writes && fx.lock == lock, "{}", op.id);
                }
                OpKind::StoreProtocol => {
                    let lock = if fx.writes { LockKey::SessionIdOrMeta } else { LockKey::None };
                    assert_eq!(fx.lock, lock, "{}", op.id);
                }
                OpKind::Operator => assert_eq!(fx.lock, LockKey::None, "{}", op.id),
            }
            let bytes = fx.attachments == Attachments::BytesInRequest;
            let carries = op.id.ends_with("::put-attachment") || op.id == "session::store::apply";
            assert_eq!(bytes, carries, "{}", op.id);
            if op.id.contains("attachment") {
                assert_ne!(fx.attachments, Attachments::None, "{}", op.id);
            }
        }
    }
}
