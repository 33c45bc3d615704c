//! What both network front ends share: the accept loop with its connection limit, a thread per
//! connection, the access log, and a shutdown that stops accepting and lets running requests
//! finish.

use crate::ServeError;
use sluice_generate::{ChecksumMemo, MemoryMemo};
use sluice_graph::bitmap::ReachMemo;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Limits and shared state of the network front ends.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Connections served at once; more are refused.
    pub max_connections: usize,
    /// A client silent this long is dropped.
    pub idle_timeout: Duration,
    /// A connection is closed after this long, however busy: a client trickling bytes just
    /// often enough to stay under the idle timeout cannot hold a thread for ever.
    pub max_connection_time: Duration,
    /// The most bytes one HTTP request body may carry (after gzip is undone); more is refused.
    pub max_request_bytes: u64,
    /// The cache of generated packs, if one is kept.
    pub pack_cache: Option<std::sync::Arc<crate::PackCache>>,
    /// What the server remembers between its requests.
    pub memory: Arc<ServerMemory>,
    /// HTTP only: the users who may push where `http.receivepack` is unset.
    pub credentials: Option<Arc<crate::http::Credentials>>,
    /// HTTP only: serve under TLS with this configuration.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// git:// only: serve pushes where a repository's `daemon.receivepack` does not say (git
    /// daemon's `--enable=receive-pack`).
    pub git_receive_pack: bool,
}

/// How many packs' checksums a server remembers: a few per repository it serves often.
const CHECKSUMS_KEPT: usize = 256;

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            max_connections: 64,
            idle_timeout: Duration::from_secs(60),
            max_connection_time: Duration::from_secs(3600),
            max_request_bytes: 10 << 20,
            pack_cache: None,
            memory: Arc::new(ServerMemory::new()),
            credentials: None,
            tls: None,
            git_receive_pack: false,
        }
    }
}

/// What a server remembers between its requests, so that work whose answer cannot have
/// changed is not done again (each bounded, the least recently used forgotten first).
#[derive(Debug)]
pub struct ServerMemory {
    /// The checksums of packs copied from stored entries: the next full clone after a push
    /// is not hashed again.
    pub checksums: Arc<dyn ChecksumMemo>,
    /// What sets of tips reach beyond a bitmap: the pushed commits and their trees are walked
    /// once, not for every clone.
    pub reaches: ReachMemo,
    /// Repositories whose warm-up after a push is running, each with whether another push
    /// came in meanwhile (then it runs once more).
    pub(crate) warming: std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, bool>>,
    /// What `GET /metrics` reports.
    pub metrics: crate::metrics::Metrics,
}

impl ServerMemory {
    /// An empty memory.
    pub fn new() -> Self {
        ServerMemory {
            checksums: Arc::new(MemoryMemo::new(CHECKSUMS_KEPT)),
            reaches: ReachMemo::new(),
            warming: Default::default(),
            metrics: crate::metrics::Metrics::new(),
        }
    }
}

impl Default for ServerMemory {
    fn default() -> Self {
        Self::new()
    }
}

/// Asks every accept loop to stop. A loop only notices after its next connection, so `stop`
/// wakes each listener by connecting to it.
#[derive(Debug, Clone, Default)]
pub struct Shutdown {
    requested: Arc<AtomicBool>,
}

impl Shutdown {
    /// A shutdown not yet requested.
    pub fn new() -> Self {
        Shutdown::default()
    }

    /// Whether `stop` was called.
    pub fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// Stops the loops listening on `addresses`.
    pub fn stop(&self, addresses: &[SocketAddr]) {
        self.requested.store(true, Ordering::SeqCst);
        for address in addresses {
            let _ = TcpStream::connect_timeout(address, Duration::from_secs(1));
        }
    }
}

/// The bytes a connection carried each way, counted as they pass.
#[derive(Debug, Default)]
pub(crate) struct Traffic {
    sent: AtomicU64,
    received: AtomicU64,
}

impl Traffic {
    /// Counts bytes received.
    pub(crate) fn count_received(&self, bytes: usize) {
        self.received.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Counts bytes sent.
    pub(crate) fn count_sent(&self, bytes: usize) {
        self.sent.fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

/// A reader or writer that counts what passes through it into a [`Traffic`].
pub(crate) struct Counted<T> {
    pub(crate) inner: T,
    pub(crate) traffic: Arc<Traffic>,
}

impl<T: std::io::Read> std::io::Read for Counted<T> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.traffic.count_received(read);
        Ok(read)
    }
}

impl<T: std::io::Write> std::io::Write for Counted<T> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(data)?;
        self.traffic.count_sent(written);
        Ok(written)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// What the access log says of one request, filled in as the request is understood.
#[derive(Debug, Default)]
pub(crate) struct Exchange {
    /// The request line (`GET /repo.git/info/refs?…`) or git:// command, as sent.
    pub(crate) request: String,
    /// The repository asked for, as named in the request.
    pub(crate) repository: Option<String>,
    /// `git-upload-pack` or `git-receive-pack`.
    pub(crate) service: Option<&'static str>,
    /// Who authenticated (pushes over HTTP).
    pub(crate) user: Option<String>,
    /// The HTTP status answered.
    pub(crate) status: Option<u16>,
}

/// The access log of one connection: one event per request (target `sluice::access`), with
/// the client, the request, the repository, the service, the user, the status, the bytes
/// each way and the duration; the binary's subscriber writes them as text or JSON lines.
pub(crate) struct RequestLog<'a> {
    peer: &'a str,
    scheme: &'static str,
    traffic: Arc<Traffic>,
    /// The totals when the last request was logged (a connection may carry several).
    logged: std::cell::Cell<(u64, u64)>,
    /// Where the request is counted for `/metrics`.
    memory: Arc<ServerMemory>,
}

impl RequestLog<'_> {
    /// The connection's byte counts, for the streams that carry it.
    pub(crate) fn traffic(&self) -> Arc<Traffic> {
        Arc::clone(&self.traffic)
    }

    /// Logs one request that started at `start`. A client that hung up after its answer (or
    /// between requests) ended it normally: that is no error.
    pub(crate) fn request(
        &self,
        exchange: &Exchange,
        outcome: &Result<(), ServeError>,
        start: Instant,
    ) {
        let totals = (
            self.traffic.sent.load(Ordering::Relaxed),
            self.traffic.received.load(Ordering::Relaxed),
        );
        let (before_sent, before_received) = self.logged.replace(totals);
        let dash = |field: Option<&str>| field.unwrap_or("-").to_owned();
        let (client, scheme, request) = (self.peer, self.scheme, exchange.request.as_str());
        let repository = dash(exchange.repository.as_deref());
        let service = dash(exchange.service);
        let user = dash(exchange.user.as_deref());
        let status = exchange
            .status
            .map_or_else(|| "-".to_owned(), |s| s.to_string());
        let sent = totals.0 - before_sent;
        let received = totals.1 - before_received;
        // Milliseconds to the microsecond.
        let duration_ms = (start.elapsed().as_micros() as f64) / 1000.0;
        self.memory.metrics.served(&crate::metrics::Served {
            scheme,
            service: exchange.service,
            status: match (exchange.status, outcome) {
                (Some(code), _) => code.to_string(),
                (None, Ok(())) => "ok".to_owned(),
                (None, Err(_)) => "error".to_owned(),
            },
            sent,
            received,
            seconds: duration_ms / 1000.0,
        });
        match outcome {
            Ok(()) => tracing::info!(
                target: "sluice::access",
                client, scheme, request, repository, service, user, status, sent, received,
                duration_ms, "served"
            ),
            Err(error) => tracing::warn!(
                target: "sluice::access",
                client, scheme, request, repository, service, user, status, sent, received,
                duration_ms, error = %error, "failed"
            ),
        }
    }
}

/// Accepts connections on `listener` until `shutdown` is requested, running `handle` for each
/// on its own thread, then waits (at most the idle timeout) for the running ones.
pub(crate) fn accept_loop<H>(
    listener: TcpListener,
    scheme: &'static str,
    options: ServerOptions,
    shutdown: &Shutdown,
    handle: H,
) -> std::io::Result<()>
where
    H: Fn(TcpStream, &ServerOptions, &RequestLog<'_>) + Send + Sync + 'static,
{
    let handle = Arc::new(handle);
    let active = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        if shutdown.requested() {
            break;
        }
        let Ok(stream) = stream else { continue };
        if active.fetch_add(1, Ordering::SeqCst) >= options.max_connections {
            active.fetch_sub(1, Ordering::SeqCst);
            let client = stream
                .peer_addr()
                .map_or_else(|_| "?".to_owned(), |a| a.to_string());
            tracing::warn!(target: "sluice::access", client, scheme, "refused a connection: too many at once");
            continue;
        }
        let (active, handle) = (Arc::clone(&active), Arc::clone(&handle));
        let options = options.clone();
        std::thread::spawn(move || {
            let peer = stream
                .peer_addr()
                .map_or_else(|_| "?".to_owned(), |a| a.to_string());
            let _ = stream.set_read_timeout(Some(options.idle_timeout));
            let _ = stream.set_write_timeout(Some(options.idle_timeout));
            let request_log = RequestLog {
                peer: &peer,
                scheme,
                traffic: Arc::default(),
                logged: Default::default(),
                memory: Arc::clone(&options.memory),
            };
            let (done, finished) = mpsc::channel::<()>();
            if let Ok(watched) = stream.try_clone() {
                let limit = options.max_connection_time;
                std::thread::spawn(move || {
                    if let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(limit) {
                        let _ = watched.shutdown(std::net::Shutdown::Both);
                    }
                });
            }
            handle(stream, &options, &request_log);
            drop(done);
            active.fetch_sub(1, Ordering::SeqCst);
        });
    }
    let grace = options.idle_timeout;
    let start = Instant::now();
    while active.load(Ordering::SeqCst) > 0 && start.elapsed() < grace {
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}
