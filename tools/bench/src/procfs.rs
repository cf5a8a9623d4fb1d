//! What the benchmark tools read from `/proc`: a process's CPU time and memory, and the load
//! average, so every tool and bench reports them the same way.

/// utime + stime of `pid` in seconds (fields 14 and 15 of `/proc/<pid>/stat`, after the `comm`).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / rustix::param::clock_ticks_per_second() as f64)
}

/// A `kB` field of `/proc/<pid>/status` (`pid` `None`: this process), e.g. `VmRSS:`, in kB.
pub fn status_kb(pid: Option<u32>, key: &str) -> Option<u64> {
    let path = pid.map_or_else(|| "/proc/self/status".to_string(), |p| format!("/proc/{p}/status"));
    let status = std::fs::read_to_string(path).ok()?;
    status.lines().find_map(|l| l.strip_prefix(key)?.trim().strip_suffix("kB")?.trim().parse().ok())
}

/// `VmRSS` and `VmHWM` of `pid` (`None`: this process) in MB.
pub fn memory_mb(pid: Option<u32>) -> Option<(f64, f64)> {
    let mb = |key| status_kb(pid, key).map(|kb| kb as f64 / 1024.0);
    Some((mb("VmRSS:")?, mb("VmHWM:")?))
}

/// The 1, 5 and 15 minute load averages, joined by `separator` (empty when unreadable).
pub fn loadavg(separator: &str) -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(separator)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process has CPU time and memory, and the load average has three figures.
    #[test]
    fn reads_this_process_and_the_load_average() {
        let own = std::process::id();
        assert!(cpu_seconds(own).is_some_and(|s| s >= 0.0));
        let (rss, hwm) = memory_mb(None).expect("VmRSS / VmHWM");
        assert!(rss > 0.0 && hwm >= rss, "rss {rss} hwm {hwm}");
        assert_eq!(memory_mb(Some(own)).map(|m| m.1 > 0.0), Some(true));
        assert_eq!(loadavg(" / ").split(" / ").count(), 3);
        assert_eq!(status_kb(None, "NoSuchField:"), None);
    }
}
