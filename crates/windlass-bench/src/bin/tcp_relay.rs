//! `tcp-relay`: the bare TCP relay of the harness as a process of its own,
//! so `scripts/peers.sh` can put it between wrk and the upstream. It is the
//! floor of any proxy hop on the machine: the latency and CPU a process in
//! the path costs before it parses a byte (accept, wake-ups, copies).
//!
//!   tcp-relay --upstream 127.0.0.1:PORT      # prints {"relay": "127.0.0.1:N"}
//!
//! It runs on a multi-threaded tokio runtime with one worker per core, as
//! `windlass serve` does, and stops when killed.

// A measuring tool, never product code: a setup it cannot build panics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../relay.rs"]
mod relay;

use std::net::SocketAddr;

use clap::Parser;

#[derive(Parser)]
struct Args {
    /// The address every inbound connection is relayed to.
    #[arg(long)]
    upstream: SocketAddr,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let addr = relay::start(args.upstream).await.expect("relay");
    println!("{}", serde_json::json!({ "relay": addr.to_string() }));
    std::future::pending::<()>().await;
}
