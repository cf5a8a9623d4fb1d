//! Helpers of the postgres store's tests: the store helpers the fs store's tests use (included by
//! path, one copy), a throwaway schema per store, and a counting TCP relay.
#![allow(dead_code, unused_imports)]

#[path = "../../../fs/tests/common/mod.rs"]
mod shared;

pub use shared::*;

pub mod pg;
pub mod relay;
