//! A TCP relay that counts client–server round trips on the wire, per connection: every time the
//! client starts sending again after the server answered (a burst of pipelined statements is one
//! round trip).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// The round trips of one relayed connection.
#[derive(Debug)]
pub struct Turns {
    /// Round trips so far.
    pub count: AtomicUsize,
    /// Whether the server spoke last (the client's next byte starts a round trip).
    server_spoke: AtomicBool,
}

/// Every connection the relay took, in the order the clients opened them.
#[derive(Debug, Default)]
pub struct Connections(Mutex<Vec<Arc<Turns>>>);

impl Connections {
    /// The round trips of the `n`th connection opened (0 when it was not opened yet).
    pub fn turns(&self, n: usize) -> usize {
        let connections = self.0.lock().expect("relay connections");
        connections.get(n).map_or(0, |turns| turns.count.load(Ordering::SeqCst))
    }

    /// How many connections were opened.
    pub fn opened(&self) -> usize {
        self.0.lock().expect("relay connections").len()
    }
}

/// A relay on a free local port to `server` (`host:port`), counting into the returned
/// [`Connections`].
pub fn relay(server: String) -> (u16, Arc<Connections>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
    let port = listener.local_addr().expect("relay address").port();
    let connections = Arc::new(Connections::default());
    let opened = connections.clone();
    thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(upstream) = TcpStream::connect(&server) else { continue };
            let _ = (client.set_nodelay(true), upstream.set_nodelay(true));
            let (c2, u2) =
                (client.try_clone().expect("clone"), upstream.try_clone().expect("clone"));
            let turns =
                Arc::new(Turns { count: AtomicUsize::new(0), server_spoke: AtomicBool::new(true) });
            opened.0.lock().expect("relay connections").push(turns.clone());
            let up = turns.clone();
            thread::spawn(move || {
                pump(client, upstream, &|| {
                    if up.server_spoke.swap(false, Ordering::SeqCst) {
                        up.count.fetch_add(1, Ordering::SeqCst);
                    }
                })
            });
            thread::spawn(move || {
                pump(u2, c2, &|| turns.server_spoke.store(true, Ordering::SeqCst))
            });
        }
    });
    (port, connections)
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
