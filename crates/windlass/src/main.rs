//! The `windlass` binary.

use std::process::ExitCode;

use clap::Parser;
use windlass::cli::{Cli, Command};

/// mimalloc gives freed memory back to the OS, where glibc's allocator kept
/// the peak of a large request resident (RELIABILITY.md, "Memory").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => windlass::serve::run(args).await,
        Command::Run(args) => return windlass::run::run(args).await,
        Command::Mcp(args) => windlass::mcp_stdio::run(args).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("windlass: {e}");
            ExitCode::FAILURE
        }
    }
}
