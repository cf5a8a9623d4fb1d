//! Waiting for the engine at boot: one plain line of our own when it is not reachable yet, then
//! wait (as long as it takes) until it accepts the worker's registration.

use std::time::Duration;

use iii_sdk::{Error, IIIClient};

/// How long a registration may take before the worker says it is waiting: a local engine answers
/// in a few milliseconds.
pub const GRACE: Duration = Duration::from_millis(500);

/// The line printed once when the engine is not there after [`GRACE`].
pub fn waiting_line(url: &str) -> String {
    format!("session-manager: waiting for the iii engine at {url}; start it with `iii`")
}

/// Returns once the engine has accepted the registration. `Err` is fatal: the engine rejected the
/// worker (e.g. its name is taken) or the client stopped.
pub async fn until_registered(iii: &IIIClient, url: &str) -> Result<(), String> {
    match iii.wait_until_registered(GRACE).await {
        Ok(()) => return Ok(()),
        Err(Error::Timeout) => {}
        Err(e) => return Err(e.to_string()),
    }
    eprintln!("{}", waiting_line(url));
    loop {
        match iii.wait_until_registered(Duration::from_secs(3600)).await {
            Ok(()) => {
                eprintln!("session-manager: connected to the iii engine at {url}");
                return Ok(());
            }
            Err(Error::Timeout) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}
