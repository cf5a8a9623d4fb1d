//! Helpers of the worker's integration tests: the store helpers the fs store's tests use
//! (included by path, one copy), a throwaway postgres schema, and a counting TCP relay.
#![allow(dead_code, unused_imports)]

#[path = "../../../stores/fs/tests/common/mod.rs"]
mod shared;

pub use shared::*;

pub mod pg;
pub mod relay;
