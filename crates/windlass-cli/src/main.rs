//! The `windlass` binary.

use std::process::ExitCode;

use clap::Parser;
use windlass_cli::cli::{Cli, Command, StoreCommand};

/// mimalloc gives freed memory back to the OS, where glibc's allocator kept
/// the peak of a large request resident (RELIABILITY.md, "Memory").
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (mimalloc.h, v3): freed memory goes
/// back to the OS after this many milliseconds, checked only when a thread
/// allocates again; the default (1000) left idle workers holding a large
/// request's peak (RELIABILITY.md, "Allocator").
#[cfg(not(feature = "system-alloc"))]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[tokio::main]
async fn main() -> ExitCode {
    // `MIMALLOC_PURGE_DELAY` in the environment still wins.
    #[cfg(not(feature = "system-alloc"))]
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets a plain integer option; mimalloc reads options
        // atomically and allows changing them at any time.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => windlass_cli::serve::run(args).await,
        Command::Run(args) => return windlass_cli::run::run(args).await,
        Command::Mcp(args) => windlass_cli::mcp_stdio::run(args).await,
        Command::Store(StoreCommand::Prune(args)) => {
            return windlass_cli::retention::prune_main(args).await
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("windlass: {e}");
            ExitCode::FAILURE
        }
    }
}
