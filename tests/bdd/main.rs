//! The Cucumber BDD suite: `cargo test --test bdd [-- --tags @pure]`. Scenarios tagged `@pure`
//! drive the core's catalog dispatcher over an in-memory store with sequential ids and a manual
//! clock; `@engine` scenarios need a running engine and are reported skipped without one.

mod json;
mod steps;
mod world;

use cucumber::World as _;
use world::SessionWorld;

fn main() {
    let features = concat!(env!("CARGO_MANIFEST_DIR"), "/features");
    futures::executor::block_on(
        SessionWorld::cucumber()
            // A skipped step in a pure scenario means a step with no definition: fail on it.
            .fail_on_skipped_with(|_, _, scenario| {
                !scenario.tags.iter().any(|t| t == "engine")
            })
            .run_and_exit(features),
    );
}
