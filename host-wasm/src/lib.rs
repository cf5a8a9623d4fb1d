//! session-wasm: session-core in the browser. Thin wasm-bindgen bindings only: a [`Workspace`]
//! (an in-memory store with a clock, ids and limits) whose `call` runs any catalog function
//! through [`session_core::catalog::dispatch`] with the engine's JSON shapes, plus loading,
//! exporting and simulating exported `.jsonl` logs with the core's rules, and rebuilding a
//! session from its change feed with the core's replica. With feature `schema`,
//! `api_schema` describes all of it for the npm package's TypeScript declarations.

#[cfg(feature = "schema")]
pub mod api_schema;
mod call_event;
mod convert;
mod js;
mod rebuild;
mod workspace;

pub use workspace::{simulation_steps, Workspace};
