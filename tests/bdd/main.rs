//! The Cucumber BDD suite: `cargo test --test bdd [-- --tags @pure]`. Scenarios tagged `@pure`
//! drive the core's catalog dispatcher over an in-memory store with sequential ids and a manual
//! clock; `@engine` scenarios need a running engine and are reported skipped without one.

mod engine;
mod json;
mod steps;
mod world;

use cucumber::World as _;
use world::SessionWorld;

fn main() {
    let features = concat!(env!("CARGO_MANIFEST_DIR"), "/features");
    let mut cucumber = SessionWorld::cucumber();
    // `@engine` scenarios start with this step; without III_BIN it stays undefined, so they are
    // reported skipped.
    if std::env::var_os(engine::III_BIN).is_some() {
        cucumber = cucumber
            .given(engine::start_regex(), engine::start_step)
            .given(engine::topology_regex(), engine::topology_step)
            .given(engine::engine_only_regex(), engine::engine_only_step);
    }
    // The engine client (iii-sdk) needs a tokio runtime around the steps.
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    runtime.block_on(
        cucumber
            // A skipped step in a pure scenario means a step with no definition: fail on it.
            .fail_on_skipped_with(|_, _, scenario| !scenario.tags.iter().any(|t| t == "engine"))
            .run_and_exit(features),
    );
}
