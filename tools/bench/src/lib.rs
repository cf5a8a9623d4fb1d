//! `session-bench`'s shared pieces: what its tools (and the fs store's criterion benches) read
//! from `/proc`.

pub mod procfs;
