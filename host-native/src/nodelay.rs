//! TCP_NODELAY on the process's own engine connections, which iii-sdk 0.24 opens without it.
//!
//! Why: a mutation with a bound listener writes two small WebSocket frames back to back (the
//! event's fire-and-forget invocation, then the answer). With Nagle's algorithm on, the kernel
//! holds the second frame until the engine acknowledges the first, and the engine delays that ACK
//! (~40 ms): every append with one listener took 44 ms (BENCHMARKS.md, "Appends with a live
//! listener"). iii-sdk gives no access to its socket, so [`Nodelay::sweep`] finds the process's
//! TCP sockets through `/proc/self/fd`, borrows each as a duplicate (`pidfd_getfd` on our own
//! pid: safe, no `unsafe` needed) and sets the option on the shared socket. A background task
//! sweeps again while the process lives, which covers the SDK's reconnects. Linux only; elsewhere,
//! or where the kernel refuses `pidfd_getfd` (before 5.6, some seccomp profiles), it does nothing
//! and says so once.

use std::collections::HashSet;
use std::time::Duration;

/// How often the background task looks for new connections (the SDK reconnects on its own).
pub const SWEEP_EVERY: Duration = Duration::from_millis(500);

/// The sockets already handled, by inode, so a sweep only touches new ones.
#[derive(Debug, Default)]
pub struct Nodelay {
    done: HashSet<u64>,
    unsupported: bool,
}

impl Nodelay {
    /// Sets TCP_NODELAY on every TCP socket of this process not seen before; returns how many
    /// it set. An error means this platform cannot do it (reported once, then the sweep is a
    /// no-op).
    pub fn sweep(&mut self) -> Result<usize, String> {
        if self.unsupported {
            return Ok(0);
        }
        let result = imp::sweep(&mut self.done);
        if result.is_err() {
            self.unsupported = true;
        }
        result
    }
}

/// Sweeps now and then every [`SWEEP_EVERY`] for the life of the runtime.
pub fn spawn_keeper() {
    let mut nodelay = Nodelay::default();
    tokio::spawn(async move {
        loop {
            match nodelay.sweep() {
                Ok(0) => {}
                Ok(n) => tracing::debug!("TCP_NODELAY set on {n} new connection(s)"),
                Err(e) => {
                    tracing::info!("TCP_NODELAY not set on engine connections: {e}");
                    return;
                }
            }
            tokio::time::sleep(SWEEP_EVERY).await;
        }
    });
}

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::HashSet;

    use rustix::net::{sockopt, SocketType};
    use rustix::process::{getpid, pidfd_getfd, pidfd_open, PidfdFlags, PidfdGetfdFlags};

    pub fn sweep(done: &mut HashSet<u64>) -> Result<usize, String> {
        let pidfd =
            pidfd_open(getpid(), PidfdFlags::empty()).map_err(|e| format!("pidfd_open: {e}"))?;
        let entries =
            std::fs::read_dir("/proc/self/fd").map_err(|e| format!("/proc/self/fd: {e}"))?;
        let mut set = 0;
        for entry in entries.flatten() {
            let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let Some(inode) = socket_inode(&entry.path()) else { continue };
            if done.contains(&inode) {
                continue;
            }
            // The fd may have been closed (or reused) since the listing: then this fails or
            // reaches another of our own sockets, both harmless.
            let dup = match pidfd_getfd(&pidfd, fd, PidfdGetfdFlags::empty()) {
                Ok(dup) => dup,
                Err(rustix::io::Errno::BADF) => continue,
                Err(e) => return Err(format!("pidfd_getfd: {e}")),
            };
            done.insert(inode);
            let is_tcp = sockopt::socket_type(&dup).is_ok_and(|t| t == SocketType::STREAM)
                && sockopt::tcp_nodelay(&dup).is_ok();
            if is_tcp && sockopt::set_tcp_nodelay(&dup, true).is_ok() {
                set += 1;
            }
        }
        Ok(set)
    }

    /// The inode of a `/proc/self/fd/<n>` link to a socket (`socket:[12345]`).
    fn socket_inode(link: &std::path::Path) -> Option<u64> {
        let target = std::fs::read_link(link).ok()?;
        let target = target.to_str()?;
        target.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn sweep(_: &mut std::collections::HashSet<u64>) -> Result<usize, String> {
        Err("only implemented on Linux".into())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    /// A fresh connection of this process gets TCP_NODELAY from one sweep, and only once.
    #[test]
    fn sweep_sets_nodelay_on_new_tcp_sockets_once() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let client = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (server, _) = listener.accept().expect("accept");
        assert!(!client.nodelay().expect("nodelay"));
        let mut nodelay = Nodelay::default();
        let set = nodelay.sweep().expect("sweep on Linux");
        assert!(set >= 2, "client and accepted socket at least, got {set}");
        assert!(client.nodelay().expect("nodelay"));
        assert!(server.nodelay().expect("nodelay"));
        // The listener is a TCP socket too; nothing new on the second sweep.
        assert_eq!(nodelay.sweep().expect("second sweep"), 0);
        let late = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        assert!(nodelay.sweep().expect("third sweep") >= 1);
        assert!(late.nodelay().expect("nodelay"));
    }
}
