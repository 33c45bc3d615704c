//! What both network front ends share: the accept loop with its connection limit, a thread per
//! connection, the access log, and a shutdown that stops accepting and lets running requests
//! finish.

use crate::ServeError;
use sluice_generate::{ChecksumMemo, MemoryMemo};
use sluice_odb::bitmap::ReachMemo;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
}

impl ServerMemory {
    /// An empty memory.
    pub fn new() -> Self {
        ServerMemory {
            checksums: Arc::new(MemoryMemo::new(CHECKSUMS_KEPT)),
            reaches: ReachMemo::new(),
            warming: Default::default(),
        }
    }
}

impl Default for ServerMemory {
    fn default() -> Self {
        Self::new()
    }
}

/// The access log: one line per request.
pub type AccessLog = Arc<dyn Fn(&str) + Send + Sync>;

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

/// Writes the access-log line of each request on one connection.
pub(crate) struct RequestLog<'a> {
    log: &'a AccessLog,
    peer: &'a str,
    scheme: &'static str,
}

impl RequestLog<'_> {
    /// Logs one request that started at `start`: what it asked for, and how it ended.
    pub(crate) fn request(&self, what: &str, outcome: &Result<(), ServeError>, start: Instant) {
        let status = match outcome {
            Ok(()) => "ok".to_owned(),
            Err(e) => format!("error: {e}"),
        };
        (self.log)(&format!(
            "{} {} {what} {status} {:.3}s",
            self.peer,
            self.scheme,
            start.elapsed().as_secs_f64()
        ));
    }
}

/// Accepts connections on `listener` until `shutdown` is requested, running `handle` for each
/// on its own thread, then waits (at most the idle timeout) for the running ones.
pub(crate) fn accept_loop<H>(
    listener: TcpListener,
    scheme: &'static str,
    options: ServerOptions,
    shutdown: &Shutdown,
    log: AccessLog,
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
            log(&format!("{scheme} refused a connection: too many at once"));
            continue;
        }
        let (log, active, handle) = (Arc::clone(&log), Arc::clone(&active), Arc::clone(&handle));
        let options = options.clone();
        std::thread::spawn(move || {
            let peer = stream
                .peer_addr()
                .map_or_else(|_| "?".to_owned(), |a| a.to_string());
            let _ = stream.set_read_timeout(Some(options.idle_timeout));
            let _ = stream.set_write_timeout(Some(options.idle_timeout));
            let request_log = RequestLog {
                log: &log,
                peer: &peer,
                scheme,
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
