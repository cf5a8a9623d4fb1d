//! The scenario world: the core dispatcher over a `MemStore`, a manual clock, sequential ids,
//! the last call's result and events, and in-process trigger bindings that record deliveries.

use std::collections::BTreeMap;

use serde_json::Value;
use session_core::catalog;
use session_core::filter::BindingFilter;
use session_core::{Emitted, Env, Limits, ManualClock, MemStore, SeqIds, SessionError};

/// One bound handler: its trigger type, parsed filter and the payloads it received.
#[derive(Debug)]
pub struct Binding {
    pub trigger_type: String,
    pub filter: BindingFilter,
    pub received: Vec<Value>,
}

#[derive(Debug, cucumber::World)]
#[world(init = Self::new)]
pub struct SessionWorld {
    pub store: MemStore,
    pub clock: ManualClock,
    pub ids: SeqIds,
    pub limits: Limits,
    /// Result of the last call: the JSON response or the error.
    pub last: Option<Result<Value, SessionError>>,
    /// Events the last call fired, in order.
    pub events: Vec<Emitted>,
    pub bindings: BTreeMap<String, Binding>,
    /// Result of the last binding attempt.
    pub last_binding: Option<Result<(), String>>,
    /// `@engine` scenarios: the engine, worker and client of this scenario.
    pub engine: Option<crate::engine::EngineState>,
}

impl SessionWorld {
    fn new() -> Self {
        SessionWorld {
            store: MemStore::new(),
            clock: ManualClock::new(),
            ids: SeqIds::new(),
            limits: Limits::default(),
            last: None,
            events: Vec::new(),
            bindings: BTreeMap::new(),
            last_binding: None,
            engine: None,
        }
    }

    /// Calls a catalog function and records the response, the events and the deliveries.
    pub fn call(&mut self, function_id: &str, payload: Value) {
        let env = Env { clock: &self.clock, ids: &self.ids, limits: self.limits };
        let result = catalog::dispatch(&self.store, &env, function_id, payload)
            .unwrap_or_else(|| panic!("{function_id} is not in the catalog"));
        match result {
            Ok(outcome) => {
                self.deliver(&outcome.events);
                self.events = outcome.events;
                self.last = Some(Ok(outcome.response));
            }
            Err(error) => {
                self.events = Vec::new();
                self.last = Some(Err(error));
            }
        }
    }

    /// Calls and insists on success (for `Given` steps).
    pub fn call_ok(&mut self, function_id: &str, payload: Value) -> Value {
        self.call(function_id, payload.clone());
        match self.last.clone() {
            Some(Ok(response)) => response,
            other => panic!("setup call {function_id} {payload} failed: {other:?}"),
        }
    }

    fn deliver(&mut self, events: &[Emitted]) {
        for emitted in events {
            for binding in self.bindings.values_mut() {
                if binding.trigger_type == emitted.event.trigger_type()
                    && binding.filter.matches(emitted)
                {
                    binding.received.push(emitted.event.payload());
                }
            }
        }
    }

    /// The last successful response, or a panic naming the error.
    pub fn response(&self) -> &Value {
        match &self.last {
            Some(Ok(value)) => value,
            Some(Err(error)) => panic!("the call failed: {error}"),
            None => panic!("no call was made"),
        }
    }
}
