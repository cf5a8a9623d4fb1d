//! The scenario world: the host the scenario runs on (core over memory, or the worker over fs),
//! a manual clock, sequential ids, the live limits, the last call's result and events, and the
//! scenario's bindings with what they received.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use session_core::{Emitted, Limits, ManualClock, SeqIds};

use crate::host::{self, CallError, Host};

/// One bound handler: its trigger type and the payloads it received.
#[derive(Debug)]
pub struct Binding {
    pub trigger_type: String,
    pub received: Vec<Value>,
}

#[derive(Debug, cucumber::World)]
#[world(init = Self::new)]
pub struct SessionWorld {
    pub host: Box<dyn Host>,
    pub clock: Arc<ManualClock>,
    pub ids: Arc<SeqIds>,
    pub limits: Limits,
    /// Result of the last call: the JSON response or the error.
    pub last: Option<Result<Value, CallError>>,
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
        let (clock, ids) = (Arc::new(ManualClock::new()), Arc::new(SeqIds::new()));
        SessionWorld {
            host: host::build(clock.clone(), ids.clone()),
            clock,
            ids,
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
        let called = self.host.call(self.limits, function_id, payload);
        for (name, payload) in called.deliveries {
            if let Some(binding) = self.bindings.get_mut(&name) {
                binding.received.push(payload);
            }
        }
        self.events = called.events;
        self.last = Some(called.result);
    }

    /// Calls and insists on success (for `Given` steps).
    pub fn call_ok(&mut self, function_id: &str, payload: Value) -> Value {
        self.call(function_id, payload.clone());
        match self.last.clone() {
            Some(Ok(response)) => response,
            other => panic!("setup call {function_id} {payload} failed: {other:?}"),
        }
    }

    /// Binds `name` on `trigger_type` (replacing a binding of that name); records the attempt.
    pub fn bind(&mut self, name: String, trigger_type: String, config: &Value) {
        let result = self.host.bind(&name, &trigger_type, config);
        if result.is_ok() {
            let fresh = Binding { trigger_type: trigger_type.clone(), received: Vec::new() };
            if let Some(old) = self.bindings.insert(name.clone(), fresh) {
                if old.trigger_type != trigger_type {
                    self.host.unbind(&name, &old.trigger_type);
                }
            }
        }
        self.last_binding = Some(result);
    }

    /// Removes binding `name`.
    pub fn unbind(&mut self, name: &str) {
        let binding = self.bindings.remove(name).unwrap_or_else(|| panic!("no binding {name}"));
        self.host.unbind(name, &binding.trigger_type);
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
