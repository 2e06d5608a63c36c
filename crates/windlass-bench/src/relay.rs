//! A bare TCP relay on Windlass's runtime: the floor for any proxy hop.
//!
//! It copies bytes between the client and the upstream and does nothing
//! else (no HTTP, no JSON), on the same runtime and threads as Windlass, so
//! its CPU per streamed event is what one more process in the path costs on
//! this machine before any gateway work: socket reads, writes, wake-ups.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};

/// Starts the relay to `upstream` on the current runtime; returns its address.
pub(crate) async fn start(upstream: SocketAddr) -> Result<SocketAddr, String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("relay bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(mut outbound) = TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = inbound.set_nodelay(true);
                let _ = outbound.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    Ok(addr)
}
