//! Helpers of the worker's integration tests: the store helpers the fs store's tests use and the
//! postgres test schemas of the postgres store's tests (both included by path, one copy).
#![allow(dead_code, unused_imports)]

#[path = "../../../stores/fs/tests/common/mod.rs"]
mod shared;

pub use shared::*;

#[path = "../../../stores/postgres/tests/common/pg.rs"]
pub mod pg;
