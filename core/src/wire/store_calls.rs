//! The `session::store::*` protocol as typed calls: one definition per function (id, request,
//! response), which the main's handlers (`ops::store_protocol`, through the catalog) and a
//! bridge's client (`BridgeStore`) both use, so neither side writes the protocol's JSON by hand.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::api_store::*;
use super::{
    ApplyRequest, ApplyResponse, FeedPage, SessionEntry, SessionMeta, StoreChangesRequest,
    StoreLifecycles, StoreLifecyclesRequest, StoreListPage, StoreListPageRequest,
    StorePathLocateRequest, StorePathSelectRequest, StorePathSpot, StorePathWindow, StoreUsage,
    StoreUsageRequest,
};

/// One function of the store protocol.
pub trait StoreCall {
    /// The function id (`session::store::<name>`).
    const ID: &'static str;
    type Request: Serialize + DeserializeOwned;
    type Response: Serialize + DeserializeOwned;
}

/// The request type of call `C`.
pub type Req<C> = <C as StoreCall>::Request;
/// The response type of call `C`.
pub type Resp<C> = <C as StoreCall>::Response;

macro_rules! store_calls {
    ($( $Call:ident, $id:literal, $Req:ty => $Resp:ty; )*) => {
        $(
            #[doc = concat!("`", $id, "`")]
            #[derive(Debug, Clone, Copy)]
            pub struct $Call;
            impl StoreCall for $Call {
                const ID: &'static str = $id;
                type Request = $Req;
                type Response = $Resp;
            }
        )*
        /// Every store-protocol function id defined here.
        pub const STORE_CALL_IDS: &[&str] = &[$($id),*];
    };
}

store_calls! {
    CommitAppend, "session::store::commit-append", CommitAppendRequest => CommitAppendResponse;
    DeleteActiveLeaf, "session::store::delete-active-leaf", SessionIdRequest => OkResponse;
    DeleteAttachment, "session::store::delete-attachment", AttachmentIdRequest => DeletedResponse;
    DeleteAttachments, "session::store::delete-attachments", SessionIdRequest => OkResponse;
    DeleteEntries, "session::store::delete-entries", SessionIdRequest => OkResponse;
    DeleteMeta, "session::store::delete-meta", SessionIdRequest => OkResponse;
    GetActiveLeaf, "session::store::get-active-leaf", SessionIdRequest => ActiveLeafResponse;
    GetAttachment, "session::store::get-attachment", AttachmentIdRequest => Option<StoredAttachment>;
    GetEntry, "session::store::get-entry", EntryIdRequest => Option<SessionEntry>;
    GetMeta, "session::store::get-meta", SessionIdRequest => Option<SessionMeta>;
    ListAttachments, "session::store::list-attachments", SessionIdRequest => ListAttachmentsResponse;
    ListEntries, "session::store::list-entries", SessionIdRequest => ListEntriesResponse;
    ListMetas, "session::store::list-metas", ListMetasRequest => ListMetasResponse;
    PublishEvents, "session::store::publish-events", PublishEventsRequest => PublishEventsResponse;
    PutAttachment, "session::store::put-attachment", PutAttachmentRequest => OkResponse;
    PutEntry, "session::store::put-entry", PutEntryRequest => OkResponse;
    PutMeta, "session::store::put-meta", PutMetaRequest => OkResponse;
    SetActiveLeaf, "session::store::set-active-leaf", EntryIdRequest => OkResponse;
    // Extension (not in the seed): a whole change set, applied atomically.
    Apply, "session::store::apply", ApplyRequest => ApplyResponse;
    // Extension: one page of a session's change feed (live sync).
    Changes, "session::store::changes", StoreChangesRequest => FeedPage;
    // Extensions the catalog serves with feature `store-windows`: windows of a session's path
    // from the main's index, and one ordered, filtered list page from the main's meta order.
    PathLocate, "session::store::path-locate", StorePathLocateRequest => StorePathSpot;
    PathSelect, "session::store::path-select", StorePathSelectRequest => StorePathWindow;
    ListPage, "session::store::list-page", StoreListPageRequest => StoreListPage;
    // Extension: the lifecycles (trash, expiry) the main keeps.
    Lifecycles, "session::store::lifecycles", StoreLifecyclesRequest => StoreLifecycles;
    // Extension: usage totals the main keeps (served with feature `store-windows`).
    UsageTallies, "session::store::usage", StoreUsageRequest => StoreUsage;
}

#[cfg(test)]
mod tests {
    use alloc::collections::BTreeSet;

    use crate::catalog::{all_operations, OpKind};

    /// Every store-protocol function of the catalog has its typed call here, and nothing else.
    #[test]
    fn the_calls_are_the_catalogs_store_protocol() {
        let catalog: BTreeSet<&str> = all_operations()
            .filter(|op| op.kind == OpKind::StoreProtocol)
            .map(|op| op.id)
            .collect();
        let calls: BTreeSet<&str> = super::STORE_CALL_IDS.iter().copied().collect();
        assert_eq!(calls.len(), super::STORE_CALL_IDS.len(), "an id is defined twice");
        assert_eq!(calls, catalog);
    }
}
