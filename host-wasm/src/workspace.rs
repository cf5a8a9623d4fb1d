//! The `Workspace` class: a `MemStore`, a clock (`Date.now`, or a manual clock for deterministic
//! runs), ids (random, or `SeqIds`) and limits, and the calls JavaScript makes on it.

use serde::Serialize;
use serde_json::Value;
use session_core::env::{Clock, IdGen};
use session_core::transfer::LoadedFile;
use session_core::{catalog, simulate, transfer};
use session_core::{Env, Limits, ManualClock, MemStore, RandomIds, SeqIds, SessionError};
use wasm_bindgen::prelude::*;

use crate::call_event::CallEvent;
use crate::convert::{bytes, error, from_js, to_js};

/// `Date.now()`.
struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        crate::js::date_now() as i64
    }
}

/// 128 random bits from `Math.random` (ids only need to be unique, not secret).
fn random_u128() -> u128 {
    (0..4).fold(0u128, |acc, _| (acc << 32) | (crate::js::math_random() * 4_294_967_296.0) as u128)
}

/// Options of `new Workspace(options?)`; every field is optional.
#[derive(Debug, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), serde(default))]
pub(crate) struct WorkspaceOptions {
    /// Manual clock at 1 000 000 ms and sequential ids (contract §0.4).
    deterministic: bool,
    /// Page size of `session::list` / `session::messages` when the request gives no `limit`.
    default_list_limit: Option<usize>,
    /// Largest `limit` a list request may ask for.
    max_list_limit: Option<usize>,
    /// Largest attachment `session::put-attachment` accepts, in bytes.
    max_attachment_bytes: Option<u64>,
    /// Changes kept per session feed (`session::changes`).
    feed_retention: Option<usize>,
    /// Payload bytes kept per session feed.
    feed_retention_bytes: Option<u64>,
    /// Seconds a trashed session is kept before `session::sweep` purges it.
    trash_retention_secs: Option<u64>,
}

impl WorkspaceOptions {
    /// The options of a JSON object, read field by field (a derived decoder would cost the bundle
    /// one more instance of serde's): `null` or absent is the default, unknown fields are
    /// ignored, a value of the wrong type is refused.
    fn from_json(value: Value) -> Result<Self, SessionError> {
        let Value::Object(fields) = value else {
            return Err(SessionError::bad_request_shape("workspace options must be an object"));
        };
        let mut options = WorkspaceOptions::default();
        for (name, value) in &fields {
            let refused = |expected: &str| {
                SessionError::bad_request_shape(format_args!("option {name}: expected {expected}"))
            };
            let count = || value.as_u64().ok_or_else(|| refused("a non-negative integer"));
            let size = || count().and_then(|n| usize::try_from(n).map_err(|_| refused("a size")));
            if value.is_null() {
                continue;
            }
            match name.as_str() {
                "deterministic" => {
                    options.deterministic = value.as_bool().ok_or_else(|| refused("a boolean"))?
                }
                "default_list_limit" => options.default_list_limit = Some(size()?),
                "max_list_limit" => options.max_list_limit = Some(size()?),
                "max_attachment_bytes" => options.max_attachment_bytes = Some(count()?),
                "feed_retention" => options.feed_retention = Some(size()?),
                "feed_retention_bytes" => options.feed_retention_bytes = Some(count()?),
                "trash_retention_secs" => options.trash_retention_secs = Some(count()?),
                _ => {}
            }
        }
        Ok(options)
    }
}

/// What `simulationSteps` returns: the imported file's summary and the calls that rebuild it.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct SimulationPlan {
    #[serde(flatten)]
    imported: transfer::Imported,
    steps: Vec<simulate::Step>,
}

/// What `call` returns: the response and every event it fired, each with its feed change.
#[derive(Serialize)]
struct CallResult<'a> {
    response: &'a Value,
    events: Vec<CallEvent>,
}

/// The TypeScript side of `call` (skipped above): one signature per catalog function id, its
/// request and response types generated from the catalog's schemas into the package's `api.d.ts`.
#[wasm_bindgen(typescript_custom_section)]
const TS_CALL: &str = r#"
import type { CallArgs, CallResult, FunctionId, Imported, LoadedFile, Rebuilt, SimulationPlan, WorkspaceOptions } from "../api.js";
export interface Workspace {
  /**
   * Runs catalog function `function_id` on `request` (the engine's JSON shapes): its response and
   * the events it fired. Throws a `SessionError` (an `Error` with a typed `code`) on failure.
   */
  call<F extends FunctionId>(function_id: F, ...request: CallArgs<F>): CallResult<F>;
}
"#;

/// An in-memory session store with everything a call needs.
#[wasm_bindgen]
pub struct Workspace {
    store: MemStore,
    manual: Option<ManualClock>,
    ids: Box<dyn IdGen>,
    limits: Limits,
}

impl core::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Workspace").field("limits", &self.limits).finish_non_exhaustive()
    }
}

fn not_found(session_id: &str) -> JsValue {
    error(&SessionError::session_not_found(session_id))
}

#[wasm_bindgen]
impl Workspace {
    /// `new Workspace(options?)` (`WorkspaceOptions`: deterministic clock and ids, list and
    /// attachment limits).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "WorkspaceOptions")] options: JsValue,
    ) -> Result<Workspace, JsValue> {
        let options: WorkspaceOptions = if options.is_undefined() || options.is_null() {
            WorkspaceOptions::default()
        } else {
            WorkspaceOptions::from_json(from_js(options)?).map_err(|e| error(&e))?
        };
        let defaults = Limits::default();
        let limits = Limits {
            default_list_limit: options.default_list_limit.unwrap_or(defaults.default_list_limit),
            max_list_limit: options.max_list_limit.unwrap_or(defaults.max_list_limit),
            max_attachment_bytes: options
                .max_attachment_bytes
                .unwrap_or(defaults.max_attachment_bytes),
            feed_retention: options.feed_retention.unwrap_or(defaults.feed_retention).max(1),
            feed_retention_bytes: options
                .feed_retention_bytes
                .unwrap_or(defaults.feed_retention_bytes),
            trash_retention_secs: options
                .trash_retention_secs
                .unwrap_or(defaults.trash_retention_secs),
        };
        let (manual, ids): (_, Box<dyn IdGen>) = if options.deterministic {
            (Some(ManualClock::new()), Box::new(SeqIds::new()))
        } else {
            (None, Box::new(RandomIds::new(random_u128)))
        };
        Ok(Workspace { store: MemStore::new(), manual, ids, limits })
    }

    /// Runs a catalog function: `{ response, events: [{ trigger_type, payload, session_metadata?,
    /// seq?, change? }] }` (`seq`: the event's place in its session's change feed; `change`: the
    /// change recorded, when it is not the event itself). Throws an `Error` with `code` on
    /// failure. Its TypeScript signature (typed per function id) is the `Workspace` interface of
    /// `TS_CALL`.
    #[wasm_bindgen(skip_typescript)]
    pub fn call(&self, function_id: &str, request: JsValue) -> Result<JsValue, JsValue> {
        let request = from_js(request)?;
        // `catalog::call`: an unknown id is `session/invalid_request`, echoed clipped at 128
        // bytes, exactly as in every other host.
        let outcome = self
            .with_env(|store, env| catalog::call(store, env, function_id, request))
            .map_err(|e| error(&e))?;
        let events = outcome.events.iter().map(CallEvent::of).collect();
        to_js(&CallResult { response: &outcome.response, events })
    }

    /// Replays one exported log (string or bytes) with the fs store's rules, replacing any
    /// session of the same id: `{ session_id, lines, skipped }`.
    #[wasm_bindgen(js_name = loadJsonl, unchecked_return_type = "Imported")]
    pub fn load_jsonl(
        &self,
        file_name: &str,
        #[wasm_bindgen(unchecked_param_type = "string | ArrayBuffer | ArrayBufferView")]
        data: JsValue,
    ) -> Result<JsValue, JsValue> {
        to_js(&self.replay_log(file_name, &bytes(&data)?)?)
    }

    /// Opens a file of any format it knows: in the package's `full` entry another agent's (`pi`,
    /// `claude-code`, `openai`, `ui-message`, told apart by their first records) through
    /// `session::import`, else this store's own log as `loadJsonl` does (the main entry knows
    /// only that one). Either replaces a session of the same id: `{ format, session_id, lines,
    /// skipped }`.
    #[wasm_bindgen(js_name = loadFile, unchecked_return_type = "LoadedFile")]
    pub fn load_file(
        &self,
        file_name: &str,
        #[wasm_bindgen(unchecked_param_type = "string | ArrayBuffer | ArrayBufferView")]
        data: JsValue,
    ) -> Result<JsValue, JsValue> {
        let data = bytes(&data)?;
        #[cfg(feature = "formats")]
        if let Some(format) = session_core::formats::detect(&data) {
            return self.import_file(format, file_name, data);
        }
        to_js(&LoadedFile::native(self.replay_log(file_name, &data)?))
    }

    /// The session as snapshot lines, the format the fs store writes (round-trips through
    /// `loadJsonl`).
    #[wasm_bindgen(js_name = exportJsonl)]
    pub fn export_jsonl(&self, session_id: &str) -> Result<String, JsValue> {
        let bytes = self.store.export_jsonl(session_id).ok_or_else(|| not_found(session_id))?;
        String::from_utf8(bytes).map_err(|e| error(&SessionError::storage(e.to_string())))
    }

    /// The file name a session exports to (`<enc(id)>.jsonl`).
    #[wasm_bindgen(js_name = fileName)]
    pub fn file_name(session_id: &str) -> String {
        transfer::file_name(session_id)
    }

    /// Ids of every stored session, sorted (a trashed one too).
    #[wasm_bindgen(js_name = sessionIds, unchecked_return_type = "string[]")]
    pub fn session_ids(&self) -> Result<JsValue, JsValue> {
        // Through the JSON encoding every answer takes, not a second, `String`-array one.
        to_js(&self.store.session_ids())
    }

    /// Current clock value (ms).
    pub fn now(&self) -> f64 {
        self.manual.as_ref().map_or_else(crate::js::date_now, |c| c.now_ms() as f64)
    }

    /// Sets the manual clock (deterministic workspaces only).
    #[wasm_bindgen(js_name = setTime)]
    pub fn set_time(&self, ms: f64) -> Result<(), JsValue> {
        self.manual_clock()?.set(ms as i64);
        Ok(())
    }

    /// Moves the manual clock forward (deterministic workspaces only).
    pub fn advance(&self, ms: f64) -> Result<(), JsValue> {
        self.manual_clock()?.advance(ms as i64);
        Ok(())
    }
}

impl Workspace {
    pub(crate) fn store(&self) -> &MemStore {
        &self.store
    }

    /// The session of another agent's file, through `session::import` (replacing one of the same id).
    #[cfg(feature = "formats")]
    fn import_file(
        &self,
        format: session_core::formats::Format,
        file_name: &str,
        data: Vec<u8>,
    ) -> Result<JsValue, JsValue> {
        let text = String::from_utf8(data).map_err(|e| {
            error(&SessionError::invalid_request(format!("{file_name}: not UTF-8 text: {e}")))
        })?;
        let req = session_core::wire::ImportRequest {
            format,
            data: text,
            file_name: Some(file_name.into()),
            modified: None,
            metadata: None,
            replace: true,
        };
        let done = self
            .with_env(|store, env| session_core::ops::import::run(store, env, req))
            .map_err(|e| error(&e))?;
        let skipped = done.response.skipped.len();
        to_js(&LoadedFile {
            format: format.name().into(),
            session_id: done.response.session_id,
            lines: done.response.entries as usize + skipped,
            skipped,
        })
    }

    /// Replays one exported log of this store into the workspace (`loadJsonl`).
    fn replay_log(&self, file_name: &str, data: &[u8]) -> Result<transfer::Imported, JsValue> {
        self.store.load_jsonl(file_name, data).ok_or_else(|| {
            error(&SessionError::invalid_request(format!(
                "{file_name}: no meta record and the file name is not <enc(session_id)>.jsonl"
            )))
        })
    }

    /// Runs `f` on the store with this workspace's clock, ids and limits.
    pub(crate) fn with_env<R>(&self, f: impl FnOnce(&MemStore, &Env<'_>) -> R) -> R {
        let clock: &dyn Clock = match &self.manual {
            Some(manual) => manual,
            None => &SystemClock,
        };
        f(&self.store, &Env { clock, ids: &*self.ids, limits: self.limits })
    }

    fn manual_clock(&self) -> Result<&ManualClock, JsValue> {
        self.manual.as_ref().ok_or_else(|| {
            error(&SessionError::invalid_request(
                "the clock is Date.now; create the workspace with { deterministic: true }",
            ))
        })
    }
}

/// The calls that rebuild the session of an exported log step by step:
/// `{ session_id, lines, skipped, steps: [{ at, line, function_id, request }] }`.
#[wasm_bindgen(js_name = simulationSteps, unchecked_return_type = "SimulationPlan")]
pub fn simulation_steps(
    file_name: &str,
    #[wasm_bindgen(unchecked_param_type = "string | ArrayBuffer | ArrayBufferView")] data: JsValue,
) -> Result<JsValue, JsValue> {
    let data = bytes(&data)?;
    let (imported, _) = transfer::import(file_name, &data).ok_or_else(|| {
        error(&SessionError::invalid_request(format!("{file_name}: no session id")))
    })?;
    let steps = simulate::steps(&imported.session_id, &data);
    to_js(&SimulationPlan { imported, steps })
}
