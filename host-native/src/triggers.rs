//! The trigger types (the seed's seven, then the extensions): registration with their binding-config schemas, and the handler that
//! fills the emitter's binding tables, rejecting malformed configs (contract §3.1, §3.3).

use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use iii_sdk::trigger::{TriggerConfig, TriggerHandler};
use iii_sdk::{Error, IIIClient, RegisterTriggerType};
use serde::de::DeserializeOwned;
use serde::Serialize;
use session_core::catalog::{visit_trigger_types, TriggerConfigVisitor, TriggerType};
use session_core::subscriptions::Subscriptions;

/// Keeps the bindings of one trigger type.
#[derive(Debug)]
pub struct BindingHandler {
    trigger_type: &'static str,
    subscriptions: Arc<RwLock<Subscriptions>>,
}

impl BindingHandler {
    pub fn new(trigger_type: &'static str, subscriptions: Arc<RwLock<Subscriptions>>) -> Self {
        BindingHandler { trigger_type, subscriptions }
    }
}

#[async_trait]
impl TriggerHandler for BindingHandler {
    async fn register_trigger(&self, config: TriggerConfig) -> Result<(), Error> {
        let mut subs = self.subscriptions.write().unwrap_or_else(|p| p.into_inner());
        let sub = subs
            .bind(self.trigger_type, &config.id, &config.function_id, &config.config)
            .map_err(|e| {
                tracing::info!("rejected binding {} → {}: {e}", config.id, config.function_id);
                Error::Handler(e)
            })?;
        sub.namespace = config.namespace;
        sub.metadata = config.metadata;
        Ok(())
    }

    async fn unregister_trigger(&self, config: TriggerConfig) -> Result<(), Error> {
        let mut subs = self.subscriptions.write().unwrap_or_else(|p| p.into_inner());
        subs.unbind(self.trigger_type, &config.id);
        Ok(())
    }
}

/// Registers every trigger type of the catalog (with `seed_only`, only the seed's), each with its
/// config type's schema (the catalog names the type: [`visit_trigger_types`]).
pub fn register_all(iii: &IIIClient, subscriptions: &Arc<RwLock<Subscriptions>>, seed_only: bool) {
    visit_trigger_types(&mut Registrar { iii, subscriptions }, seed_only);
}

/// Registers the trigger types [`visit_trigger_types`] hands it.
struct Registrar<'a> {
    iii: &'a IIIClient,
    subscriptions: &'a Arc<RwLock<Subscriptions>>,
}

impl TriggerConfigVisitor for Registrar<'_> {
    fn visit<C>(&mut self, trigger: &'static TriggerType)
    where
        C: schemars::JsonSchema + Serialize + DeserializeOwned + 'static,
    {
        let handler = BindingHandler::new(trigger.id, self.subscriptions.clone());
        let registration = RegisterTriggerType::new(trigger.id, trigger.description, handler);
        self.iii.register_trigger_type(registration.trigger_request_format::<C>());
    }
}
