//! Step definitions, one module per concern: setup, calls, responses, events, bindings and
//! restarts.

mod bindings;
mod calls;
mod events;
mod extra_entries;
mod extra_hostile;
mod extra_lifecycle;
mod response;
mod restart;
mod setup;
