//! The cancel bus over Postgres `LISTEN`/`NOTIFY`.
//!
//! Every replica listens on two channels with one dedicated connection:
//! `windlass_cancel` carries a response someone wants cancelled, and
//! `windlass_cancel_ack` one a replica was running and has stopped; both as
//! `"<tenant> <id>"` (tenant names and ids have no spaces; an ack for a run
//! created with `store: false` adds `" unstored"`, since its final state
//! will never be stored for the publisher to read). A publisher notifies,
//! then waits briefly for the matching ack;
//! notifications are delivered to every listener, the publisher included
//! (its handler finds nothing running and stays silent).

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use deadpool_postgres::Pool;
use futures::StreamExt;
use tokio::sync::{broadcast, oneshot};
use tokio_postgres::{AsyncMessage, Client, Config, Notification};
use tokio_postgres_rustls::MakeRustlsConnect;
use windlass_engine::{CancelAck, CancelBus, CancelHandler, StoreError};

use super::error::backend;

const CANCEL: &str = "windlass_cancel";
const ACK: &str = "windlass_cancel_ack";
/// Appended to the ack of a run whose final state is never stored.
const UNSTORED: &str = " unstored";

/// Ids longer than this are never running anywhere (ours are ~50
/// characters); refused before they reach `NOTIFY` (8000 bytes at most).
const MAX_ID: usize = 512;

/// How long a publisher waits for the running replica to acknowledge. A
/// notification reaches listeners within milliseconds; this only bounds
/// the wait when no replica runs the response.
const ACK_WAIT: Duration = Duration::from_secs(1);
/// Pause before reconnecting a lost listening connection.
const RECONNECT: Duration = Duration::from_secs(1);
/// Longest wait for the first `LISTEN` at start-up.
const START_WAIT: Duration = Duration::from_secs(15);

/// A [`CancelBus`] shared by every replica using one Postgres database.
#[derive(Clone)]
pub struct PgCancelBus {
    inner: Arc<Inner>,
}

struct Inner {
    /// Publishes (`pg_notify`) on a pooled connection.
    pool: Pool,
    handler: Mutex<Option<CancelHandler>>,
    /// Acknowledged ids, fanned out to waiting publishers.
    acks: broadcast::Sender<String>,
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let task = self.listener.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(task) = task.as_ref() {
            task.abort();
        }
    }
}

impl PgCancelBus {
    /// Starts listening (a dedicated connection to `config`'s database,
    /// re-established if lost); returns once the first `LISTEN` is in place.
    pub(crate) async fn start(
        config: Config,
        tls: MakeRustlsConnect,
        pool: Pool,
    ) -> Result<PgCancelBus, StoreError> {
        let inner = Arc::new(Inner {
            pool,
            handler: Mutex::new(None),
            acks: broadcast::channel(256).0,
            listener: Mutex::new(None),
        });
        let (ready_tx, ready_rx) = oneshot::channel();
        let task = tokio::spawn(listen(config, tls, Arc::downgrade(&inner), ready_tx));
        *inner
            .listener
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(task);
        match tokio::time::timeout(START_WAIT, ready_rx).await {
            Ok(Ok(Ok(()))) => Ok(PgCancelBus { inner }),
            Ok(Ok(Err(e))) => Err(e),
            _ => Err(StoreError::Backend(
                "postgres cancel bus: LISTEN did not start in time".into(),
            )),
        }
    }
}

#[async_trait::async_trait]
impl CancelBus for PgCancelBus {
    async fn publish(&self, tenant: &str, response_id: &str) -> Result<CancelAck, StoreError> {
        // No running response has a space in its id or tenant.
        if response_id.len() > MAX_ID
            || tenant.len() > MAX_ID
            || tenant.contains(' ')
            || response_id.contains(' ')
        {
            return Ok(CancelAck::Unclaimed);
        }
        let payload = format!("{tenant} {response_id}");
        let unstored = format!("{payload}{UNSTORED}");
        // Subscribed before notifying, so the ack cannot come first.
        let mut acks = self.inner.acks.subscribe();
        let conn = self
            .inner
            .pool
            .get()
            .await
            .map_err(|e| StoreError::Backend(format!("postgres connection: {e}")))?;
        conn.execute("SELECT pg_notify($1, $2)", &[&CANCEL, &payload])
            .await
            .map_err(backend)?;
        drop(conn);
        let acked = tokio::time::timeout(ACK_WAIT, async {
            loop {
                match acks.recv().await {
                    Ok(acked) if acked == payload => return CancelAck::Stored,
                    Ok(acked) if acked == unstored => return CancelAck::Unstored,
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return CancelAck::Unclaimed,
                }
            }
        })
        .await;
        Ok(acked.unwrap_or(CancelAck::Unclaimed))
    }

    fn subscribe(&self, handler: CancelHandler) {
        *self
            .inner
            .handler
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(handler);
    }
}

/// Listens until the bus is dropped, reconnecting after failures. The first
/// outcome (listening, or the first connection's error) goes to `ready`.
async fn listen(
    config: Config,
    tls: MakeRustlsConnect,
    inner: Weak<Inner>,
    ready: oneshot::Sender<Result<(), StoreError>>,
) {
    let mut ready = Some(ready);
    loop {
        let outcome = listen_once(&config, &tls, &inner, &mut ready).await;
        if inner.strong_count() == 0 {
            return;
        }
        match (outcome, ready.take()) {
            (Err(e), Some(ready)) => {
                let _ = ready.send(Err(backend(e)));
                return;
            }
            (Err(e), None) => {
                tracing::warn!(error = %e, "postgres cancel bus: listening connection lost; reconnecting");
            }
            (Ok(()), _) => {
                tracing::warn!("postgres cancel bus: listening connection closed; reconnecting");
            }
        }
        tokio::time::sleep(RECONNECT).await;
    }
}

/// One listening connection, until it fails or closes, or the bus is gone.
async fn listen_once(
    config: &Config,
    tls: &MakeRustlsConnect,
    inner: &Weak<Inner>,
    ready: &mut Option<oneshot::Sender<Result<(), StoreError>>>,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(tls.clone()).await?;
    // The connection is driven here; notifications come out of it.
    let (tx, mut notes) = tokio::sync::mpsc::unbounded_channel::<Notification>();
    let driver = tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    if tx.send(n).is_err() {
                        return Ok(());
                    }
                }
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    });
    let outcome = serve(&client, inner, ready, &mut notes).await;
    driver.abort();
    match outcome {
        Err(e) => Err(e),
        // The notifications ended: the driver stopped, with its reason.
        Ok(()) => match driver.await {
            Ok(result) => result,
            Err(_) => Ok(()),
        },
    }
}

/// LISTENs, then handles notifications until they end or the bus is gone.
async fn serve(
    client: &Client,
    inner: &Weak<Inner>,
    ready: &mut Option<oneshot::Sender<Result<(), StoreError>>>,
    notes: &mut tokio::sync::mpsc::UnboundedReceiver<Notification>,
) -> Result<(), tokio_postgres::Error> {
    client
        .batch_execute(&format!("LISTEN {CANCEL}; LISTEN {ACK}"))
        .await?;
    if let Some(ready) = ready.take() {
        let _ = ready.send(Ok(()));
    }
    while let Some(note) = notes.recv().await {
        let Some(inner) = inner.upgrade() else {
            return Ok(());
        };
        deliver(client, &inner, &note).await?;
    }
    Ok(())
}

async fn deliver(
    client: &Client,
    inner: &Inner,
    note: &Notification,
) -> Result<(), tokio_postgres::Error> {
    let payload = note.payload();
    match note.channel() {
        CANCEL => {
            let Some((tenant, id)) = payload.split_once(' ') else {
                return Ok(());
            };
            let handler = inner
                .handler
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let ack = match handler.map(|h| h(tenant, id)) {
                None | Some(CancelAck::Unclaimed) => return Ok(()),
                Some(CancelAck::Stored) => payload.to_owned(),
                Some(CancelAck::Unstored) => format!("{payload}{UNSTORED}"),
            };
            client
                .execute("SELECT pg_notify($1, $2)", &[&ACK, &ack])
                .await?;
        }
        ACK => {
            // No publisher waiting is fine.
            let _ = inner.acks.send(payload.to_owned());
        }
        _ => {}
    }
    Ok(())
}
