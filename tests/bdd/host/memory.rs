//! "core over memory": the core's catalog dispatcher over a `MemStore`, the core's binding tables
//! deciding deliveries. A restart reloads the store from an export: every session goes through
//! the snapshot log the fs store writes (`export_jsonl` → `load_jsonl`), attachments are copied.

use std::sync::Arc;

use serde_json::Value;
use session_core::record::SessionState;
use session_core::subscriptions::Subscriptions;
use session_core::{
    catalog, transfer, ChangeSet, Env, Limits, ManualClock, MemStore, SeqIds, Store, Write,
};

use super::{binding_name, function_id, CallError, Called, Host};

#[derive(Debug)]
pub struct MemoryHost {
    store: Arc<MemStore>,
    clock: Arc<ManualClock>,
    ids: Arc<SeqIds>,
    subscriptions: Subscriptions,
}

impl MemoryHost {
    pub fn new(clock: Arc<ManualClock>, ids: Arc<SeqIds>) -> Self {
        MemoryHost {
            store: Arc::new(MemStore::new()),
            clock,
            ids,
            subscriptions: Subscriptions::new(),
        }
    }
}

impl Host for MemoryHost {
    fn call(&mut self, limits: Limits, function_id: &str, payload: Value) -> Called {
        let env = Env { clock: &*self.clock, ids: &*self.ids, limits };
        let result = catalog::dispatch(&*self.store, &env, function_id, payload)
            .unwrap_or_else(|| panic!("{function_id} is not in the catalog"));
        match result {
            Ok(outcome) => {
                let deliveries = outcome
                    .events
                    .iter()
                    .flat_map(|emitted| {
                        self.subscriptions.deliveries(emitted).into_iter().filter_map(
                            |(sub, payload)| {
                                Some((binding_name(&sub.function_id)?.to_string(), payload))
                            },
                        )
                    })
                    .collect();
                Called { result: Ok(outcome.response), events: outcome.events, deliveries }
            }
            Err(e) => Called {
                result: Err(CallError::from(&e)),
                events: Vec::new(),
                deliveries: Vec::new(),
            },
        }
    }

    fn bind(&mut self, name: &str, trigger_type: &str, config: &Value) -> Result<(), String> {
        self.subscriptions.bind(trigger_type, name, &function_id(name), config).map(|_| ())
    }

    fn unbind(&mut self, name: &str, trigger_type: &str) {
        self.subscriptions.unbind(trigger_type, name);
    }

    fn restart(&mut self) {
        let reloaded = MemStore::new();
        for sid in self.store.session_ids() {
            let log = self.store.export_jsonl(&sid).expect("a listed session exports");
            reloaded.load_jsonl(&transfer::file_name(&sid), &log).expect("the export names it");
            let writes: Vec<Write> = self
                .store
                .list_attachments(&sid)
                .expect("the mem store lists")
                .into_iter()
                .filter_map(|m| self.store.get_attachment(&sid, &m.attachment_id).expect("reads"))
                .map(|(meta, bytes)| Write::PutAttachment { meta, bytes })
                .collect();
            if !writes.is_empty() {
                reloaded.apply(&ChangeSet { session_id: sid, writes }).expect("attachments land");
            }
        }
        self.store = Arc::new(reloaded);
    }

    fn store(&self) -> Arc<dyn Store + Send + Sync> {
        self.store.clone()
    }

    fn session_states(&self) -> Vec<(String, SessionState)> {
        let ids = self.store.session_ids();
        ids.into_iter().map(|sid| (sid.clone(), self.store.session_state(&sid))).collect()
    }
}
