//! `When the store restarts`: the host closes its store and opens it again on what it kept (over
//! fs: the worker and its `FsStore` are dropped and reopened on the same data_dir; over memory:
//! the store is reloaded from an export of every session). Ids and the clock carry on.

use cucumber::when;

use crate::world::SessionWorld;

#[when("the store restarts")]
fn restarts(w: &mut SessionWorld) {
    w.host.restart();
}
