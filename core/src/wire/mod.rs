//! Wire types: every JSON shape the worker accepts or returns, with serde shapes matching the
//! seed's API reference exactly (null-versus-omitted rules of contract §1.9 included).

mod api_apply;
mod api_attachments;
mod api_branch;
mod api_config;
mod api_context;
mod api_erase;
mod api_feed;
#[cfg(feature = "formats")]
mod api_formats;
mod api_lifecycle;
mod api_list_page;
mod api_messages;
mod api_path;
mod api_search;
mod api_session;
pub mod api_store;
mod api_usage;
mod bindings;
mod content;
mod entry;
mod enums;
mod event_payloads;
mod message;
mod meta;
pub mod store_calls;

pub use api_apply::*;
pub use api_attachments::*;
pub use api_branch::*;
pub use api_config::*;
pub use api_context::*;
pub use api_erase::*;
pub use api_feed::*;
#[cfg(feature = "formats")]
pub use api_formats::*;
pub use api_lifecycle::*;
pub use api_list_page::*;
pub use api_messages::*;
pub use api_path::*;
pub use api_search::*;
pub use api_session::*;
pub use api_usage::*;
pub use bindings::*;
pub use content::*;
pub use entry::*;
pub use enums::*;
pub use event_payloads::*;
pub use message::*;
pub use meta::*;

/// A JSON object (`metadata`, `origin`, filters).
pub type Object = serde_json::Map<alloc::string::String, serde_json::Value>;
