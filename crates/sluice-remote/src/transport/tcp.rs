//! The `git://` transport: one TCP connection to a git daemon, opened with a request naming
//! the service, the path and the host (`gitprotocol-pack`, "Git Transport").

use super::{ConnectOptions, IdleTimeout, Link, Producer, ProtocolVersion, Response};
use crate::FetchError;
use sluice_wire::pktline::write_packet;
use std::io::Write;
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long to try each address of the host.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

struct TcpLink {
    stream: TcpStream,
}

impl Link for TcpLink {
    fn send(&mut self, request: &[u8]) -> Result<Option<Response>, FetchError> {
        self.stream.write_all(request)?;
        Ok(None)
    }

    fn send_streamed(&mut self, produce: Producer<'_>) -> Result<Option<Response>, FetchError> {
        let mut out = std::io::BufWriter::with_capacity(64 << 10, &self.stream);
        produce(&mut out)?;
        out.flush()?;
        Ok(None)
    }

    fn stateless(&self) -> bool {
        false
    }

    fn finish(self: Box<Self>) -> Result<(), FetchError> {
        let _ = self.stream.shutdown(Shutdown::Both);
        Ok(())
    }
}

pub(super) fn connect(
    host: &str,
    port: u16,
    path: &str,
    options: &ConnectOptions,
) -> Result<(Box<dyn Link>, Response), FetchError> {
    let addresses = (host, port)
        .to_socket_addrs()
        .map_err(|source| FetchError::Lookup {
            host: host.to_owned(),
            port,
            source,
        })?;
    let mut tried = Vec::new();
    let mut stream = None;
    for address in addresses.filter(|a| options.ip_version.allows(a)) {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(connected) => {
                stream = Some(connected);
                break;
            }
            Err(error) => tried.push(super::Attempt {
                address: address.ip(),
                error,
            }),
        }
    }
    let mut stream = match stream {
        Some(stream) => stream,
        None if tried.is_empty() => {
            return Err(FetchError::NoAddress {
                host: host.to_owned(),
            })
        }
        None => {
            return Err(FetchError::Unreachable {
                host: host.to_owned(),
                tried,
            })
        }
    };
    let _ = stream.set_nodelay(true);
    let host_field = if port == 9418 {
        host.to_owned()
    } else {
        format!("{host}:{port}")
    };
    let service = options.service.name();
    let mut request = format!("{service} {path}\0host={host_field}\0").into_bytes();
    if options.protocol == ProtocolVersion::V2 {
        request.extend_from_slice(b"\0version=2\0");
    }
    write_packet(&mut stream, &request)?;
    let reader = stream.try_clone()?;
    let response = IdleTimeout::new(reader, options.idle_timeout);
    Ok((Box::new(TcpLink { stream }), Box::new(response)))
}
