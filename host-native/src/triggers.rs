//! The seven trigger types: registration with their binding-config schemas, and the handler that
//! fills the emitter's binding tables, rejecting malformed configs (contract §3.1, §3.3).

use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use iii_sdk::trigger::{TriggerConfig, TriggerHandler};
use iii_sdk::{Error, IIIClient, RegisterTriggerType};
use session_core::catalog::TRIGGER_TYPES;
use session_core::subscriptions::Subscriptions;
use session_core::wire::{
    CreatedBindingConfig, MessageBindingConfig, SessionBindingConfig, StoreEventsBindingConfig,
};

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

/// Registers every trigger type of the catalog, each with its config type's schema.
pub fn register_all(iii: &IIIClient, subscriptions: &Arc<RwLock<Subscriptions>>) {
    for tt in TRIGGER_TYPES {
        let handler = BindingHandler::new(tt.id, subscriptions.clone());
        let reg = RegisterTriggerType::new(tt.id, tt.description, handler);
        match tt.config_type {
            "CreatedBindingConfig" => {
                iii.register_trigger_type(reg.trigger_request_format::<CreatedBindingConfig>());
            }
            "MessageBindingConfig" => {
                iii.register_trigger_type(reg.trigger_request_format::<MessageBindingConfig>());
            }
            "SessionBindingConfig" => {
                iii.register_trigger_type(reg.trigger_request_format::<SessionBindingConfig>());
            }
            "StoreEventsBindingConfig" => {
                iii.register_trigger_type(reg.trigger_request_format::<StoreEventsBindingConfig>());
            }
            other => panic!("trigger type {} has unknown config type {other}", tt.id),
        }
    }
}
