//! The git:// front end (`git daemon`'s protocol): one pkt-line naming the service and the
//! repository, with the host and extra parameters (`version=2`) after NUL bytes, then the
//! service's own conversation on the same connection.

use crate::{upload_pack, Protocol, ServeError, UploadPackOptions};
use sluice_odb::Repository;
use sluice_wire::pktline::{write_packet, Packet, PktReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Limits of the git:// front end.
#[derive(Debug, Clone, Copy)]
pub struct DaemonOptions {
    /// Connections served at once; more are refused.
    pub max_connections: usize,
    /// A client silent this long is dropped.
    pub idle_timeout: Duration,
}

impl Default for DaemonOptions {
    fn default() -> Self {
        DaemonOptions {
            max_connections: 64,
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// The repository a request path names under `base`, refusing any path that leaves it.
pub fn resolve_path(base: &Path, requested: &str) -> Result<PathBuf, ServeError> {
    let relative = requested.trim_start_matches('/');
    let mut path = base.to_owned();
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => path.push(part),
            Component::CurDir => {}
            _ => {
                return Err(ServeError::Protocol(format!(
                    "'{requested}': path outside the served directory"
                )))
            }
        }
    }
    Ok(path)
}

/// Accepts git:// connections on `listener` until it fails; each runs on its own thread.
/// `log` receives one line per request.
pub fn serve_git(
    listener: TcpListener,
    base: PathBuf,
    options: DaemonOptions,
    log: Arc<dyn Fn(&str) + Send + Sync>,
) -> std::io::Result<()> {
    let active = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if active.fetch_add(1, Ordering::SeqCst) >= options.max_connections {
            active.fetch_sub(1, Ordering::SeqCst);
            log("git:// refused a connection: too many at once");
            continue;
        }
        let (base, log, active) = (base.clone(), Arc::clone(&log), Arc::clone(&active));
        std::thread::spawn(move || {
            let peer = stream
                .peer_addr()
                .map_or_else(|_| "?".to_owned(), |a| a.to_string());
            let start = Instant::now();
            let outcome = serve_connection(stream, &base, options);
            let status = match &outcome {
                Ok(path) => format!("{path} ok"),
                Err(e) => format!("error: {e}"),
            };
            log(&format!(
                "{peer} git:// {status} {:.3}s",
                start.elapsed().as_secs_f64()
            ));
            active.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}

fn serve_connection(
    stream: TcpStream,
    base: &Path,
    options: DaemonOptions,
) -> Result<String, ServeError> {
    stream.set_read_timeout(Some(options.idle_timeout))?;
    stream.set_write_timeout(Some(options.idle_timeout))?;
    let mut reader = PktReader::new(stream.try_clone()?);
    let request = match reader.read()? {
        Some(Packet::Data(data)) => data.to_vec(),
        _ => return Err(ServeError::Protocol("expected a git:// request".into())),
    };
    let mut fields = request.split(|&b| b == 0);
    let command = std::str::from_utf8(fields.next().unwrap_or_default())
        .map_err(|_| ServeError::Protocol("request is not UTF-8".into()))?
        .trim_end_matches('\n');
    let protocol =
        fields
            .filter_map(|f| std::str::from_utf8(f).ok())
            .fold(
                Protocol::V0,
                |best, field| match Protocol::from_git_protocol(field) {
                    Protocol::V0 => best,
                    found => found,
                },
            );
    let mut out = stream.try_clone()?;
    let Some(path) = command.strip_prefix("git-upload-pack ") else {
        let _ = write_packet(&mut out, b"ERR service not enabled\n");
        return Err(ServeError::Protocol(format!(
            "service not enabled: '{command}'"
        )));
    };
    let denied = |out: &mut TcpStream, why: String| {
        // git daemon's one answer, so that a client cannot probe what exists.
        let _ = write_packet(out, b"ERR access denied or repository not exported\n");
        ServeError::Protocol(why)
    };
    let dir = resolve_path(base, path).map_err(|e| denied(&mut out, e.to_string()))?;
    let repo = Repository::open_served(&dir, false)
        .map_err(|_| denied(&mut out, format!("'{path}': no repository")))?;
    let options = UploadPackOptions {
        protocol,
        ..UploadPackOptions::default()
    };
    upload_pack(
        &repo,
        reader.get_mut(),
        std::io::BufWriter::new(out),
        &options,
    )?;
    Ok(path.to_owned())
}
