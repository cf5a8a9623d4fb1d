//! The process's open-file limit: raised from the soft to the hard limit at start, because the fs
//! store keeps one file open per cached session and caps that cache at half the soft limit
//! ([`crate::fs::default_max_cached_sessions`]); a service manager's soft limit (1024 under
//! systemd) would otherwise halve the cache.

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (at most 65536); returns the soft limit now
/// in force, or `None` where it cannot be read.
pub fn raise_open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        const ENOUGH: u64 = 65_536;
        let limit = getrlimit(Resource::Nofile);
        let wanted = limit.maximum.map_or(ENOUGH, |hard| hard.min(ENOUGH));
        if limit.current.is_some_and(|soft| soft < wanted) {
            let raised = Rlimit { current: Some(wanted), maximum: limit.maximum };
            if let Err(e) = setrlimit(Resource::Nofile, raised) {
                tracing::debug!("open-file limit stays at {:?}: {e}", limit.current);
            }
        }
        getrlimit(Resource::Nofile).current
    }
    #[cfg(not(unix))]
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use rustix::process::{getrlimit, Resource};

    /// The soft limit ends at the hard one (at most 65536), and is never lowered.
    #[test]
    fn soft_limit_is_raised_towards_the_hard_one() {
        let before = getrlimit(Resource::Nofile);
        let wanted = before.maximum.map_or(65_536, |hard| hard.min(65_536));
        let expected = before.current.map_or(wanted, |soft| soft.max(wanted));
        assert_eq!(raise_open_file_limit(), Some(expected), "{before:?}");
    }
}
