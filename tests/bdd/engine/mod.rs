//! `@engine` scenarios: the real worker on a real engine. They need `III_BIN` (path of an `iii`
//! binary); without it their first steps (`Given a running engine with session-manager`, `… without
//! session-manager`, `Given a main engine with …`) are not defined, so cucumber reports every engine
//! scenario as skipped; the postgres topology (`Given 2 engines with session-manager on one
//! postgres database`) also needs `SESSION_MANAGER_TEST_PG_URL`.

mod bridge;
mod bridge_atomic;
mod compose;
pub mod harness;
mod live_sync;
mod postgres;
mod steps;

use cucumber::codegen::{LocalBoxFuture, Regex};
use cucumber::step::Context;

use crate::world::SessionWorld;

/// The step text that starts an engine.
pub const START_STEP: &str = "^a running engine with session-manager$";

/// The env var naming the `iii` binary.
pub const III_BIN: &str = "III_BIN";

/// `Given a running engine with session-manager` (registered only when `III_BIN` is set).
pub fn start_step<'a>(world: &'a mut SessionWorld, _ctx: Context) -> LocalBoxFuture<'a, ()> {
    Box::pin(async move {
        let bin = std::env::var(III_BIN).expect("III_BIN");
        world.engine = Some(engine_state(harness::Harness::start(&bin).await));
    })
}

fn engine_state(harness: harness::Harness) -> EngineState {
    // `${engine_url}`: this engine's own URL (a bridge to it is refused).
    let vars = [("engine_url".to_string(), harness.url())].into();
    EngineState {
        compose: None,
        namespace: None,
        harness,
        last: None,
        vars,
        bindings: Default::default(),
        peers: Vec::new(),
        live: Default::default(),
    }
}

/// The start step's regex.
pub fn start_regex() -> Regex {
    Regex::new(START_STEP).expect("regex")
}

/// Per-scenario engine state kept in the world.
#[derive(Debug)]
pub struct EngineState {
    /// The `iii compose` daemon of a compose scenario. Declared before `harness`, so it stops
    /// (and stops the worker it started) while the engine still runs.
    pub compose: Option<compose::Compose>,
    /// The namespace the client's calls to the main name (`None`: the engine's default); set when
    /// compose starts the worker in a project namespace.
    pub namespace: Option<String>,
    pub harness: harness::Harness,
    /// The last call's outcome (response or `(code, message)`).
    pub last: Option<Result<serde_json::Value, (String, String)>>,
    /// Values kept from responses, substituted as `${name}` in JSON.
    pub vars: std::collections::HashMap<String, String>,
    /// Handler name → engine trigger id of its binding; the last binding attempt's error.
    pub bindings: std::collections::HashMap<String, String>,
    /// Bridge topologies: the bridged instances (`bridge 1`, `bridge 2`, …), `harness` being
    /// the main; postgres topologies: `instance 2`, … (`harness` is `instance 1`).
    pub peers: Vec<harness::Harness>,
    /// Live-sync scenarios: subscribers, the example client, turns streamed.
    pub live: live_sync::Live,
}

pub use bridge::{topology_regex, topology_step};
pub use compose::{engine_only_regex, engine_only_step};
pub use postgres::{postgres_topology_regex, postgres_topology_step};
