//! `session::store::list-page` (store-protocol extension, issue 12): one ordered, filtered page
//! of a bridged instance's `session::list`, answered by the main's meta order in one call
//! instead of every meta (`session::store::list-metas`) sorted by the bridge. Its wire types and
//! their conversion to and from the core's [`ListQuery`].

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::{ListOrder, Object, SessionKind, SessionMeta, SessionStatus};
use crate::meta_order::{ListFilter, ListQuery};

/// `session::store::list-page`: at most `limit` metas in `order` after `after` that pass every
/// given condition (status, kinds, metadata: as `session::list`'s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreListPageRequest {
    pub order: ListOrder,
    /// The position the page starts after; `null` for the first page.
    pub after: Option<StoreListPosition>,
    /// Only sessions with this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SessionStatus>,
    /// Only sessions whose kind is one of these; an empty list matches nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<SessionKind>>,
    /// Every given key must equal the stored `SessionMeta.metadata` value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    pub limit: usize,
}

/// A position in a list order: the sort key (`created_at` or `updated_at`) and the session id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreListPosition {
    pub key: i64,
    pub session_id: String,
}

/// One page of metas, in the order asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreListPage {
    pub sessions: Vec<SessionMeta>,
}

impl StoreListPageRequest {
    /// The request for page `query`.
    pub fn new(query: &ListQuery<'_>) -> Self {
        StoreListPageRequest {
            order: query.order,
            after: query.after.map(|(key, sid)| StoreListPosition { key, session_id: sid.into() }),
            status: query.filter.status,
            kinds: query.filter.kinds.map(<[SessionKind]>::to_vec),
            metadata: query.filter.metadata.cloned(),
            limit: query.limit,
        }
    }

    /// The page the request asks for (borrowing the request).
    pub fn query(&self) -> ListQuery<'_> {
        ListQuery {
            order: self.order,
            after: self.after.as_ref().map(|a| (a.key, a.session_id.as_str())),
            filter: ListFilter {
                status: self.status,
                kinds: self.kinds.as_deref(),
                metadata: self.metadata.as_ref(),
            },
            limit: self.limit,
        }
    }
}
