//! One HTTP connection, in the clear or under TLS, as handles that read and write it: a
//! request is read through one handle while the response is written through another.

use crate::server::Traffic;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A TLS session over its socket.
type TlsStream = rustls::StreamOwned<rustls::ServerConnection, TcpStream>;

/// A handle on a connection; clones share it, and count what passes into one [`Traffic`].
#[derive(Clone)]
pub(crate) struct Stream {
    conn: Conn,
    traffic: Arc<Traffic>,
}

#[derive(Clone)]
enum Conn {
    Plain(Arc<TcpStream>),
    /// HTTP/1.1 never reads and writes one connection at once here (a request's body is read
    /// before its response is written), so a lock per call costs no waiting.
    Tls(Arc<Mutex<TlsStream>>),
}

impl Stream {
    /// The connection accepted on `socket`, with the TLS handshake done first if `tls` is set.
    pub(crate) fn accept(
        socket: TcpStream,
        tls: Option<&Arc<rustls::ServerConfig>>,
        traffic: Arc<Traffic>,
    ) -> io::Result<Stream> {
        let Some(config) = tls else {
            let conn = Conn::Plain(Arc::new(socket));
            return Ok(Stream { conn, traffic });
        };
        let session =
            rustls::ServerConnection::new(Arc::clone(config)).map_err(io::Error::other)?;
        let mut stream = rustls::StreamOwned::new(session, socket);
        while stream.conn.is_handshaking() {
            stream.conn.complete_io(&mut stream.sock)?;
        }
        let conn = Conn::Tls(Arc::new(Mutex::new(stream)));
        Ok(Stream { conn, traffic })
    }

    /// The client's IP address, as CGI's `REMOTE_ADDR` gives it.
    pub(crate) fn peer_ip(&self) -> String {
        let address = match &self.conn {
            Conn::Plain(socket) => socket.peer_addr(),
            Conn::Tls(stream) => match stream.lock() {
                Ok(stream) => stream.sock.peer_addr(),
                Err(_) => return "?".to_owned(),
            },
        };
        address.map_or_else(|_| "?".to_owned(), |a| a.ip().to_string())
    }

    fn with<T>(&self, f: impl FnOnce(&mut dyn ReadWrite) -> io::Result<T>) -> io::Result<T> {
        match &self.conn {
            Conn::Plain(socket) => f(&mut &**socket),
            Conn::Tls(stream) => {
                let mut stream = stream
                    .lock()
                    .map_err(|_| io::Error::other("a thread serving this connection panicked"))?;
                f(&mut *stream)
            }
        }
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.with(|s| s.read(buf))?;
        self.traffic.count_received(read);
        Ok(read)
    }
}

impl Write for Stream {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let written = self.with(|s| s.write(data))?;
        self.traffic.count_sent(written);
        Ok(written)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.with(|s| s.flush())
    }
}

/// Why the TLS certificate or key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file could not be read or holds nothing usable.
    #[error("cannot read {what} from '{}': {message}", path.display())]
    Pem {
        /// "certificates" or "a private key".
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// rustls refused the pair (e.g. the key does not match the certificate).
    #[error("cannot use the certificate and key: {0}")]
    Config(#[from] rustls::Error),
}

/// A TLS server configuration from PEM files: the certificate chain (leaf first) and its
/// private key (PKCS#8, PKCS#1 or SEC1).
pub fn tls_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let pem = |what, path: &Path, message: String| TlsError::Pem {
        what,
        path: path.to_owned(),
        message,
    };
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
        .map_err(|e| pem("certificates", cert, e.to_string()))?;
    if certs.is_empty() {
        return Err(pem("certificates", cert, "no certificate found".to_owned()));
    }
    let key_der =
        PrivateKeyDer::from_pem_file(key).map_err(|e| pem("a private key", key, e.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key_der)?;
    Ok(Arc::new(config))
}
