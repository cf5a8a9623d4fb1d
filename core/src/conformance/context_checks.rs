//! The conformance check of `session::context` (issue 38, `context_matches_oracle`): on random
//! sessions built through the catalog ([`ModelSession`]), its answer for many leaves, budgets and
//! image settings equals the plain whole-path oracle's ([`context_oracle`]), errors included.

use alloc::string::String;

use super::Make;

/// The seeds every backend runs, and the steps of each script. Chosen for what their sessions
/// hold between them (with this script): compactions applied, records ignored for each reason
/// (one cut split by a later update-message among them), turns dropped, and linked images.
pub const CONTEXT_SEEDS: &[u64] = &[2, 36, 53];
pub const CONTEXT_STEPS: usize = 70;

pub use run::context_model_run;

pub fn check_context_matches_oracle(make: Make<'_>) -> Result<(), String> {
    CONTEXT_SEEDS.iter().try_for_each(|&seed| context_model_run(make, seed, CONTEXT_STEPS))
}

mod run {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec;
    use alloc::vec::Vec;

    use super::super::context_model::{call, ModelSession};
    use super::super::context_oracle::context_oracle;
    use super::Make;
    use crate::env::{Env, Limits, ManualClock, SeqIds};
    use crate::error::ErrorCode;
    use crate::store::Store;
    use crate::wire::ContextRequest;

    /// Leaves read at every entry up to this many entries; beyond, the tips and this many more.
    const EVERY_LEAF_UP_TO: usize = 16;

    /// One script of `steps` random steps from `seed` on a fresh store from `make`, then
    /// `session::context` against the oracle: `Err` names the seed and the first request they
    /// answer differently, with both answers.
    pub fn context_model_run(make: Make<'_>, seed: u64, steps: usize) -> Result<(), String> {
        let store = make();
        let (clock, ids) = (ManualClock::new(), SeqIds::new());
        let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
        let mut session = ModelSession::build(&*store, &env, seed, steps)
            .map_err(|e| format!("seed {seed}: {e}"))?;
        let compare = |req: &ContextRequest| {
            same_answer(&*store, &env, req).map_err(|e| format!("seed {seed}, {steps} steps: {e}"))
        };
        let stored_leaf = store.get_active_leaf(&session.session_id).map_err(|e| format!("{e}"))?;
        if stored_leaf != session.active_leaf {
            return Err(format!(
                "seed {seed}: the script's leaf is {:?}, the store's {stored_leaf:?}",
                session.active_leaf
            ));
        }
        for leaf in leaves(&mut session) {
            let images = session.rng.pick(&[None, Some(true), Some(false)]).flatten();
            let req = ContextRequest {
                session_id: session.session_id.clone(),
                leaf,
                token_budget: None,
                include_image_data: images,
            };
            let Some(full) = compare(&req)? else { continue };
            let under =
                |budget: u64| ContextRequest { token_budget: Some(budget as i64), ..req.clone() };
            // Any budget; exactly what it kept (a turn's start just fits); everything (all
            // fits) and either the least or one token short of everything.
            let full = full.max(1);
            let kept = compare(&under(1 + session.rng.below(full as usize) as u64))?;
            let edge = if session.rng.chance(50) { 1 } else { (full - 1).max(1) };
            for budget in [kept.unwrap_or(1).max(1), full, edge] {
                compare(&under(budget))?;
            }
        }
        let refused = [
            ContextRequest { token_budget: Some(0), ..active(&session) },
            ContextRequest { token_budget: Some(-3), ..active(&session) },
            ContextRequest { session_id: "no-such-session".into(), ..active(&session) },
        ];
        refused.iter().try_for_each(|req| compare(req).map(drop))
    }

    fn active(session: &ModelSession<'_>) -> ContextRequest {
        ContextRequest { session_id: session.session_id.clone(), ..Default::default() }
    }

    /// The leaves to read at: the default (active) one, an unknown one and every entry, or on a
    /// large session the tips of its branches and a sample.
    fn leaves(session: &mut ModelSession<'_>) -> Vec<Option<String>> {
        let mut leaves = vec![None, Some(String::from("no-such-entry"))];
        if session.entry_ids.len() <= EVERY_LEAF_UP_TO {
            leaves.extend(session.entry_ids.iter().cloned().map(Some));
            return leaves;
        }
        leaves.extend(session.tips().into_iter().map(Some));
        for _ in 0..EVERY_LEAF_UP_TO {
            leaves.push(session.rng.pick(&session.entry_ids));
        }
        leaves
    }

    /// Whether `session::context` and the oracle answer `req` alike (the same JSON, or errors of
    /// the same code); the answer's tokens, when it is one.
    fn same_answer(
        store: &dyn Store,
        env: &Env<'_>,
        req: &ContextRequest,
    ) -> Result<Option<u64>, String> {
        let payload = serde_json::to_value(req).map_err(|e| format!("{e}"))?;
        let got = call(store, env, "session::context", payload.clone()).map_err(|e| e.code);
        let want = context_oracle(store, req);
        let tokens = want.as_ref().ok().map(|answer| answer.tokens);
        let want =
            want.map(|answer| serde_json::to_value(answer).unwrap_or_default()).map_err(|e| e.code);
        match got == want {
            true => Ok(tokens),
            false => Err(format!(
                "session::context {payload} answered\n  {}\nthe oracle\n  {}",
                shown(&got),
                shown(&want)
            )),
        }
    }

    fn shown(answer: &Result<serde_json::Value, ErrorCode>) -> String {
        match answer {
            Ok(value) => format!("{value}"),
            Err(code) => format!("error {code}"),
        }
    }
}
