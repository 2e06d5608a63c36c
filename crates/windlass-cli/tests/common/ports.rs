//! Ports for the `windlass serve` processes the tests start. The kernel
//! picks a free port, but the test has to close it again before the child
//! binds it; in that gap another test thread's `bind(0)` can be handed the
//! same port, both children race for it, and the loser's test talks to the
//! winner's server. Every port handed out in this process is remembered and
//! never handed out twice. (Test binaries run one after another.)

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// A port no listener holds now and no earlier call returned.
pub(crate) fn free_port() -> u16 {
    static GIVEN: OnceLock<Mutex<HashSet<u16>>> = OnceLock::new();
    let given = GIVEN.get_or_init(Default::default);
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        if given.lock().expect("ports lock").insert(port) {
            return port;
        }
    }
}
