//! What several SDK test modules share. Here, not in the testkit: these
//! use `windlass::sdk`, and the testkit cannot depend on `windlass`, whose
//! tests use it.

use futures::StreamExt;
use serde::Deserialize;
use windlass::sdk::{Block, Client, Termination};

/// The arguments of the `add`-like tools.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct Pair {
    pub a: i64,
    pub b: i64,
}

/// Every block of the client's current run.
pub(crate) async fn run(client: &Client) -> Vec<Block> {
    client.receive().collect().await
}

/// How the run ended (the last block must be `Done`).
pub(crate) fn termination(blocks: &[Block]) -> Termination {
    match blocks.last() {
        Some(Block::Done { termination, .. }) => termination.clone(),
        b => panic!("{b:?}"),
    }
}
