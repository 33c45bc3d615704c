//! The git:// front end (`git daemon`'s protocol): one pkt-line naming the service and the
//! repository, with the host and extra parameters (`version=2`) after NUL bytes, then the
//! service's own conversation on the same connection.

use crate::receive_pack::{receive_pack, ReceivePackOptions};
use crate::request_error::RequestError;
use crate::server::{accept_loop, Counted, Exchange, ServerOptions, Shutdown, Traffic};
use crate::{upload_pack, Protocol, ServeError, UploadPackOptions};
use sluice_repo::storage::{Purpose, Storage};
use sluice_wire::pktline::{write_packet, Packet, PktReader};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

/// Serves git:// connections on `listener` until `shutdown` is requested; each runs on its own
/// thread, and each request is an access-log event.
pub fn serve_git(
    listener: TcpListener,
    base: std::sync::Arc<dyn Storage>,
    options: ServerOptions,
    shutdown: &Shutdown,
) -> std::io::Result<()> {
    accept_loop(
        listener,
        "git",
        options,
        shutdown,
        move |stream, options, log| {
            let start = Instant::now();
            let mut exchange = Exchange {
                request: "-".to_owned(),
                ..Exchange::default()
            };
            let traffic = log.traffic();
            let outcome = serve_connection(stream, &*base, options, traffic, &mut exchange);
            log.request(&exchange, &outcome, start);
        },
    )
}

fn serve_connection(
    stream: TcpStream,
    base: &dyn Storage,
    server: &ServerOptions,
    traffic: std::sync::Arc<Traffic>,
    exchange: &mut Exchange,
) -> Result<(), ServeError> {
    let mut reader = PktReader::new(Counted {
        inner: stream.try_clone()?,
        traffic: std::sync::Arc::clone(&traffic),
    });
    let request = match reader.read()? {
        Some(Packet::Data(data)) => data.to_vec(),
        _ => return Err(RequestError::NotGitRequest.into()),
    };
    let mut fields = request.split(|&b| b == 0);
    let command = std::str::from_utf8(fields.next().unwrap_or_default())
        .map_err(|_| ServeError::from(RequestError::NotUtf8Request))?
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
    let mut out = Counted {
        inner: stream.try_clone()?,
        traffic,
    };
    command.clone_into(&mut exchange.request);
    // receive-pack only where the repository (`daemon.receivepack`) or the server
    // (`--enable=receive-pack`) enables it, as git daemon.
    let (receive, path) = match (
        command.strip_prefix("git-upload-pack "),
        command.strip_prefix("git-receive-pack "),
    ) {
        (Some(path), _) => (false, path),
        (None, Some(path)) => (true, path),
        (None, None) => {
            let _ = write_packet(&mut out, b"ERR service not enabled\n");
            return Err(RequestError::ServiceNotEnabled {
                command: command.to_owned(),
            }
            .into());
        }
    };
    exchange.service = Some(if receive {
        "git-receive-pack"
    } else {
        "git-upload-pack"
    });
    exchange.repository = Some(path.to_owned());
    let denied = |out: &mut Counted<TcpStream>, why: ServeError| {
        // git daemon's one answer, so that a client cannot probe what exists.
        let _ = write_packet(out, b"ERR access denied or repository not exported\n");
        why
    };
    let purpose = [Purpose::Read, Purpose::Push][usize::from(receive)];
    let opened = base.open(path, purpose);
    let opened = opened.map_err(|e| denied(&mut out, e.into()))?;
    let repo = opened.repo;
    if receive {
        let enabled = repo.config().get_bool("daemon.receivepack")?;
        if !enabled.unwrap_or(server.git_receive_pack) {
            let _ = write_packet(&mut out, b"ERR service not enabled\n");
            return Err(RequestError::ServiceNotEnabled {
                command: command.to_owned(),
            }
            .into());
        }
        let options = ReceivePackOptions {
            memory: Some(std::sync::Arc::clone(&server.memory)),
            gate: opened.gate,
            ..ReceivePackOptions::default()
        };
        let out = std::io::BufWriter::new(out);
        // As git daemon: what a push without side band says goes to no one.
        receive_pack(&repo, reader.get_mut(), out, &options)?;
        return Ok(());
    }
    let options = UploadPackOptions {
        protocol,
        pack_cache: server.pack_cache.clone(),
        memory: Some(std::sync::Arc::clone(&server.memory)),
        bundles: opened.bundles,
        shared_as: opened.shared_as,
        earlier_tips: opened.earlier_tips,
        ..UploadPackOptions::default()
    };
    upload_pack(
        &repo,
        reader.get_mut(),
        std::io::BufWriter::new(out),
        &options,
    )
}
