//! A TCP relay that counts client–server round trips on the wire: every time the client starts
//! sending again after the server answered (a burst of pipelined statements is one round trip).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

/// Counts round trips between the clients it relays and one server.
#[derive(Debug, Default)]
pub struct Turns {
    /// Round trips so far.
    pub count: AtomicUsize,
    /// Whether the server spoke last (the client's next byte starts a round trip).
    server_spoke: AtomicBool,
}

/// A relay on a free local port to `server` (`host:port`), counting into the returned [`Turns`].
pub fn relay(server: String) -> (u16, Arc<Turns>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
    let port = listener.local_addr().expect("relay address").port();
    let turns = Arc::new(Turns { server_spoke: AtomicBool::new(true), ..Turns::default() });
    let counting = turns.clone();
    thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(upstream) = TcpStream::connect(&server) else { continue };
            let _ = (client.set_nodelay(true), upstream.set_nodelay(true));
            let (c2, u2) =
                (client.try_clone().expect("clone"), upstream.try_clone().expect("clone"));
            let up = counting.clone();
            thread::spawn(move || {
                pump(client, upstream, &|| {
                    if up.server_spoke.swap(false, Ordering::SeqCst) {
                        up.count.fetch_add(1, Ordering::SeqCst);
                    }
                })
            });
            let down = counting.clone();
            thread::spawn(move || {
                pump(u2, c2, &|| down.server_spoke.store(true, Ordering::SeqCst))
            });
        }
    });
    (port, turns)
}

/// Copies `from` to `to` until either closes, calling `seen` before forwarding each read.
fn pump(mut from: TcpStream, mut to: TcpStream, seen: &dyn Fn()) {
    let mut buf = [0u8; 64 * 1024];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 {
            break;
        }
        seen();
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
