//! session-load: drives a running session-manager through the engine (in progress).

fn main() {}
