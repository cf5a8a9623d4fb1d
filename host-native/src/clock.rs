//! What the host feeds the core: wall-clock time and uuid-v4 randomness for ids.

use session_core::{Clock, RandomIds};

/// The system clock, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        now_ms()
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn random_u128() -> u128 {
    uuid::Uuid::new_v4().as_u128()
}

/// Production ids: `s_` / `e_` / `a_` + a v4 uuid in simple form.
pub fn random_ids() -> RandomIds<fn() -> u128> {
    RandomIds::new(random_u128 as fn() -> u128)
}
