//! The smart HTTP front end (`gitprotocol-http`), as `git http-backend` answers it:
//! `GET <repo>/info/refs?service=git-upload-pack` (or `git-receive-pack`) advertises,
//! `POST <repo>/git-upload-pack` runs one stateless round of upload-pack and `POST
//! <repo>/git-receive-pack` takes a push, its body streamed into the indexer. Request bodies
//! may be chunked and gzipped; the `Git-Protocol` header selects protocol v2. Connections are
//! kept alive between requests, and may run under TLS.
//!
//! Pushes are served as git http-backend serves them (`auth`): where `http.receivepack` is
//! true, or to users who authenticated against the server's htpasswd file.

mod auth;
mod body;
mod stream;

pub use auth::{AuthFileError, Credentials};
pub use stream::{tls_config, TlsError};

use crate::receive_pack::{receive_pack, Pusher, ReceivePackOptions};
use crate::request_error::RequestError;
use crate::server::{accept_loop, Exchange, RequestLog, ServerOptions, Shutdown};
use crate::{upload_pack, Protocol, ServeError, UploadPackOptions};
use auth::{push_access, PushAccess};
use body::{ChunkedReader, ChunkedWriter};
use flate2::read::GzDecoder;
use sluice_repo::storage::{Purpose, Storage, StorageError};
use sluice_repo::Repository;
use sluice_wire::pktline::{write_flush, write_packet};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;
use stream::Stream;

/// The longest request head (request line and headers) accepted.
const MAX_HEAD: usize = 16 << 10;
/// The most header fields accepted.
const MAX_HEADERS: usize = 64;

/// Serves smart HTTP on `listener` until `shutdown` is requested; each connection runs on its
/// own thread, and each request is an access-log event.
pub fn serve_http(
    listener: TcpListener,
    base: std::sync::Arc<dyn Storage>,
    options: ServerOptions,
    shutdown: &Shutdown,
) -> io::Result<()> {
    let scheme = match options.tls {
        Some(_) => "https",
        None => "http",
    };
    accept_loop(
        listener,
        scheme,
        options,
        shutdown,
        move |stream, options, log| {
            let _ = serve_connection(stream, &*base, options, log);
        },
    )
}

/// The parts of a request head that matter here.
#[derive(Debug)]
struct Head {
    method: String,
    target: String,
    http_1_0: bool,
    content_length: Option<u64>,
    chunked: bool,
    gzip: bool,
    expect_continue: bool,
    keep_alive: bool,
    git_protocol: Protocol,
    /// The `Authorization` field, checked only where a push asks for credentials.
    authorization: Option<String>,
}

/// The two services of smart HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Service {
    UploadPack,
    ReceivePack,
}

/// What a request asks for.
#[derive(Debug, PartialEq, Eq)]
enum Route<'a> {
    /// `GET /metrics`.
    Metrics,
    Advertise {
        repo: &'a str,
        service: Service,
    },
    UploadPack {
        repo: &'a str,
    },
    ReceivePack {
        repo: &'a str,
    },
}

/// An answer other than success: status line and a short text body.
#[derive(Debug)]
struct Refusal {
    status: &'static str,
    message: String,
}

impl Refusal {
    fn new(status: &'static str, message: impl Into<String>) -> Self {
        Refusal {
            status,
            message: message.into(),
        }
    }

    /// The status code (`404` of `404 Not Found`).
    fn code(&self) -> Option<u16> {
        self.status.get(..3)?.parse().ok()
    }
}

fn serve_connection(
    socket: TcpStream,
    base: &dyn Storage,
    options: &ServerOptions,
    log: &RequestLog<'_>,
) -> Result<(), ServeError> {
    let start = Instant::now();
    if options.tls.is_some() && plain_http(&socket) {
        // Told in the clear, as web servers tell it, then logged as what it is.
        let answer = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nThis server speaks https: use an https:// URL.\n";
        let _ = (&socket).write_all(answer.as_bytes());
        let exchange = Exchange {
            request: "(plain HTTP on the https port)".to_owned(),
            status: Some(400),
            ..Exchange::default()
        };
        log.request(
            &exchange,
            &Err(crate::RequestError::PlainHttpOnTls.into()),
            start,
        );
        return Ok(());
    }
    let stream = match Stream::accept(socket, options.tls.as_ref(), log.traffic()) {
        Ok(stream) => stream,
        Err(e) => {
            let exchange = Exchange {
                request: "(TLS handshake)".to_owned(),
                ..Exchange::default()
            };
            log.request(
                &exchange,
                &Err(crate::RequestError::TlsHandshake(e).into()),
                start,
            );
            return Ok(());
        }
    };
    let mut reader = BufReader::with_capacity(64 << 10, stream.clone());
    loop {
        let head = match read_head(&mut reader) {
            Ok(Some(head)) => head,
            Ok(None) => return Ok(()),
            Err(refusal) => {
                let start = Instant::now();
                let outcome = refuse(&stream, &refusal);
                let exchange = Exchange {
                    request: "-".to_owned(),
                    status: refusal.code(),
                    ..Exchange::default()
                };
                log.request(&exchange, &outcome.and(Err(protocol(&refusal))), start);
                return Ok(());
            }
        };
        let start = Instant::now();
        let mut exchange = Exchange {
            request: format!("{} {}", head.method, head.target),
            status: Some(200),
            ..Exchange::default()
        };
        let outcome = serve_request(&stream, &mut reader, base, options, &head, &mut exchange);
        let keep = outcome.as_ref().is_ok_and(|&reusable| reusable) && head.keep_alive;
        let outcome = outcome.map(|_| ());
        log.request(&exchange, &outcome, start);
        if !keep {
            return Ok(());
        }
    }
}

/// Whether the client's first bytes are an HTTP request line (`GET /…`) rather than a TLS
/// handshake (which starts with the byte 22).
fn plain_http(socket: &TcpStream) -> bool {
    let mut first = [0u8; 8];
    let Ok(read) = socket.peek(&mut first) else {
        return false;
    };
    let method_len = first[..read]
        .iter()
        .take_while(|b| b.is_ascii_uppercase())
        .count();
    method_len >= 3 && first.get(method_len) == Some(&b' ')
}

fn protocol(refusal: &Refusal) -> ServeError {
    RequestError::Http {
        status: refusal.status,
        message: refusal.message.clone(),
    }
    .into()
}

/// Serves one request; `Ok(true)` when its body was read to the end, so that the connection
/// can carry another.
fn serve_request(
    stream: &Stream,
    reader: &mut BufReader<Stream>,
    base: &dyn Storage,
    options: &ServerOptions,
    head: &Head,
    exchange: &mut Exchange,
) -> Result<bool, ServeError> {
    let refused = |refusal: Refusal, exchange: &mut Exchange| -> Result<bool, ServeError> {
        exchange.status = refusal.code();
        refuse(stream, &refusal)?;
        // The body was not read, so the connection cannot carry another request.
        Err(protocol(&refusal))
    };
    let route = match route(head) {
        Ok(route) => route,
        Err(refusal) => return refused(refusal, exchange),
    };
    let (repo_path, service) = match route {
        Route::Metrics => {
            let text = options.memory.metrics.encode();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
                 Content-Length: {}\r\nCache-Control: no-cache\r\n\r\n",
                text.len()
            );
            let mut out = stream.clone();
            out.write_all(head.as_bytes())?;
            out.write_all(text.as_bytes())?;
            return Ok(true);
        }
        Route::Advertise { repo, service } => (repo, service),
        Route::UploadPack { repo } => (repo, Service::UploadPack),
        Route::ReceivePack { repo } => (repo, Service::ReceivePack),
    };
    exchange.repository = Some(percent_decode(repo_path));
    exchange.service = Some(match service {
        Service::UploadPack => "git-upload-pack",
        Service::ReceivePack => "git-receive-pack",
    });
    let push = service == Service::ReceivePack;
    let purpose = [Purpose::Read, Purpose::Push][usize::from(push)];
    let opened = match base.open(&percent_decode(repo_path), purpose) {
        Ok(opened) => opened,
        Err(StorageError::NoRepository { .. } | StorageError::OutsideBase { .. }) => {
            let refusal = Refusal::new("404 Not Found", "Repository not found");
            return refused(refusal, exchange);
        }
        // The storage failed (a store out of reach): the client may try again, and the log
        // says why (the client is not told the store's words).
        Err(e) => {
            let refusal = Refusal::new("503 Service Unavailable", "Storage unavailable");
            exchange.status = refusal.code();
            refuse(stream, &refusal)?;
            return Err(e.into());
        }
    };
    let repo = opened.repo;
    if push {
        let pusher = match receive_pack_access(&repo, options, head, stream) {
            Ok(pusher) => pusher,
            Err(refusal) => return refused(refusal, exchange),
        };
        exchange.user = pusher.user.clone();
        let advertise = matches!(route, Route::Advertise { .. });
        let session = ReceivePackOptions {
            stateless_rpc: true,
            advertise_refs: advertise,
            pusher: Some(pusher),
            memory: Some(std::sync::Arc::clone(&options.memory)),
            gate: opened.gate,
        };
        return serve_receive_pack(stream, reader, &repo, head, &session);
    }
    let mut upload_options = UploadPackOptions {
        protocol: head.git_protocol,
        stateless_rpc: true,
        advertise_refs: false,
        pack_cache: options.pack_cache.clone(),
        memory: Some(std::sync::Arc::clone(&options.memory)),
        bundles: opened.bundles,
        shared_as: opened.shared_as,
        earlier_tips: opened.earlier_tips,
    };
    if let Route::Advertise { .. } = route {
        upload_options.advertise_refs = true;
        let mut out = start_response(stream, head, "application/x-git-upload-pack-advertisement")?;
        if head.git_protocol != Protocol::V2 {
            write_packet(&mut out, b"# service=git-upload-pack\n")?;
            write_flush(&mut out)?;
        }
        upload_pack(&repo, io::empty(), out, &upload_options)?;
        return Ok(true);
    }
    if head.expect_continue {
        stream.clone().write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let body = match request_body(reader, head, options.max_request_bytes) {
        Ok(body) => body,
        Err(refusal) => return refused(refusal, exchange),
    };
    let out = start_response(stream, head, "application/x-git-upload-pack-result")?;
    upload_pack(&repo, &body[..], out, &upload_options)?;
    Ok(true)
}

/// Whether this request may push, and who pushes: git http-backend's rule (`auth`).
fn receive_pack_access(
    repo: &Repository,
    options: &ServerOptions,
    head: &Head,
    stream: &Stream,
) -> Result<Pusher, Refusal> {
    let receivepack = repo
        .config()
        .get_bool("http.receivepack")
        .map_err(|e| Refusal::new("500 Internal Server Error", e.to_string()))?;
    let credentials = options.credentials.as_deref();
    match push_access(receivepack, credentials, head.authorization.as_deref()) {
        PushAccess::Allowed(user) => Ok(Pusher {
            user,
            address: stream.peer_ip(),
        }),
        PushAccess::Unauthenticated => Err(Refusal::new(
            "401 Unauthorized",
            "authentication required to push",
        )),
        // git http-backend's first line, then what would enable pushes here.
        PushAccess::Disabled => Err(Refusal::new(
            "403 Forbidden",
            match receivepack {
                Some(false) => "Service not enabled: 'receive-pack'\n\
                    This repository turns pushes over HTTP off (http.receivepack is false)."
                    .to_owned(),
                _ => "Service not enabled: 'receive-pack'\n\
                    To take pushes over HTTP, set http.receivepack to true in the repository, \
                    or start sluice serve with --auth-file <htpasswd file>."
                    .to_owned(),
            },
        )),
    }
}

/// The advertisement of receive-pack, or one push with its body streamed into the indexer
/// (never held whole: `receive.maxInputSize` bounds it, not the server's request limit).
fn serve_receive_pack(
    stream: &Stream,
    reader: &mut BufReader<Stream>,
    repo: &Repository,
    head: &Head,
    options: &ReceivePackOptions,
) -> Result<bool, ServeError> {
    if options.advertise_refs {
        let mut out = start_response(stream, head, "application/x-git-receive-pack-advertisement")?;
        write_packet(&mut out, b"# service=git-receive-pack\n")?;
        write_flush(&mut out)?;
        receive_pack(repo, io::empty(), out, options)?;
        return Ok(true);
    }
    if head.expect_continue {
        stream.clone().write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let mut body = body_reader(reader, head);
    let out = start_response(stream, head, "application/x-git-receive-pack-result")?;
    receive_pack(repo, &mut body, out, options)?;
    // The pack ends at its trailer; the body's own end (the last chunk) may follow.
    let rest = io::copy(&mut (&mut body).take(64 << 10), &mut io::sink());
    Ok(rest.is_ok() && body.read(&mut [0]).is_ok_and(|n| n == 0))
}

/// The request head, or `None` when the client closed the connection between requests.
fn read_head(reader: &mut BufReader<Stream>) -> Result<Option<Head>, Refusal> {
    let mut raw = Vec::new();
    loop {
        let read = match reader
            .by_ref()
            .take((MAX_HEAD - raw.len()) as u64 + 1)
            .read_until(b'\n', &mut raw)
        {
            Ok(read) => read,
            // The client went away between requests (a reset, not a clean close).
            Err(_) if raw.is_empty() => return Ok(None),
            Err(_) => return Err(Refusal::new("400 Bad Request", "unreadable request")),
        };
        if read == 0 {
            return if raw.is_empty() {
                Ok(None)
            } else {
                Err(Refusal::new("400 Bad Request", "truncated request head"))
            };
        }
        if raw.len() > MAX_HEAD {
            return Err(Refusal::new(
                "431 Request Header Fields Too Large",
                "request head too large",
            ));
        }
        if raw.ends_with(b"\r\n\r\n") || raw.ends_with(b"\n\n") || raw == b"\r\n" {
            if raw == b"\r\n" {
                // A stray empty line between requests is allowed (RFC 9112, 2.2).
                raw.clear();
                continue;
            }
            break;
        }
    }
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut fields);
    match request.parse(&raw) {
        Ok(httparse::Status::Complete(_)) => {}
        Err(httparse::Error::TooManyHeaders) => {
            return Err(Refusal::new(
                "431 Request Header Fields Too Large",
                "too many header fields",
            ))
        }
        _ => return Err(Refusal::new("400 Bad Request", "malformed request head")),
    }
    let http_1_0 = request.version == Some(0);
    let mut head = Head {
        method: request.method.unwrap_or_default().to_owned(),
        target: request.path.unwrap_or_default().to_owned(),
        http_1_0,
        content_length: None,
        chunked: false,
        gzip: false,
        expect_continue: false,
        keep_alive: !http_1_0,
        git_protocol: Protocol::V0,
        authorization: None,
    };
    for field in request.headers.iter() {
        let value = std::str::from_utf8(field.value)
            .map_err(|_| Refusal::new("400 Bad Request", "header value is not UTF-8"))?
            .trim();
        let lower = value.to_ascii_lowercase();
        match field.name.to_ascii_lowercase().as_str() {
            "content-length" => {
                let length = value
                    .parse()
                    .map_err(|_| Refusal::new("400 Bad Request", "bad Content-Length"))?;
                head.content_length = Some(length);
            }
            "transfer-encoding" => match lower.as_str() {
                "chunked" => head.chunked = true,
                _ => {
                    return Err(Refusal::new(
                        "501 Not Implemented",
                        format!("transfer coding '{value}'"),
                    ))
                }
            },
            "content-encoding" => match lower.as_str() {
                "gzip" | "x-gzip" => head.gzip = true,
                "identity" => {}
                _ => {
                    return Err(Refusal::new(
                        "415 Unsupported Media Type",
                        format!("content coding '{value}'"),
                    ))
                }
            },
            "expect" => head.expect_continue = lower == "100-continue",
            "connection" if lower.contains("close") => head.keep_alive = false,
            "connection" if lower.contains("keep-alive") => head.keep_alive = true,
            "git-protocol" => head.git_protocol = Protocol::from_git_protocol(value),
            "authorization" => head.authorization = Some(value.to_owned()),
            _ => {}
        }
    }
    Ok(Some(head))
}

fn route(head: &Head) -> Result<Route<'_>, Refusal> {
    let (path, query) = head
        .target
        .split_once('?')
        .unwrap_or((head.target.as_str(), ""));
    if path == "/metrics" && head.method == "GET" {
        return Ok(Route::Metrics);
    }
    if let Some(repo) = path.strip_suffix("/info/refs") {
        if head.method != "GET" {
            return Err(Refusal::new("405 Method Not Allowed", "use GET"));
        }
        return match query.split('&').find_map(|p| p.strip_prefix("service=")) {
            Some("git-upload-pack") => Ok(Route::Advertise {
                repo,
                service: Service::UploadPack,
            }),
            Some("git-receive-pack") => Ok(Route::Advertise {
                repo,
                service: Service::ReceivePack,
            }),
            Some(service) => Err(Refusal::new(
                "403 Forbidden",
                format!("service '{service}' is not enabled"),
            )),
            None => Err(Refusal::new(
                "403 Forbidden",
                "only the smart HTTP protocol is served",
            )),
        };
    }
    let service = [
        ("/git-upload-pack", Service::UploadPack),
        ("/git-receive-pack", Service::ReceivePack),
    ]
    .into_iter()
    .find_map(|(suffix, service)| Some((path.strip_suffix(suffix)?, service)));
    if let Some((repo, service)) = service {
        if head.method != "POST" {
            return Err(Refusal::new("405 Method Not Allowed", "use POST"));
        }
        if !head.chunked && head.content_length.is_none() {
            return Err(Refusal::new("411 Length Required", "no request length"));
        }
        return Ok(match service {
            Service::UploadPack => Route::UploadPack { repo },
            Service::ReceivePack => Route::ReceivePack { repo },
        });
    }
    Err(Refusal::new("404 Not Found", "not found"))
}

/// The request body with its transfer and content codings undone, as it arrives.
fn body_reader<'r>(reader: &'r mut BufReader<Stream>, head: &Head) -> Box<dyn Read + 'r> {
    let framed: Box<dyn Read + 'r> = if head.chunked {
        Box::new(ChunkedReader::new(reader))
    } else {
        Box::new(reader.take(head.content_length.unwrap_or(0)))
    };
    if head.gzip {
        Box::new(GzDecoder::new(framed))
    } else {
        framed
    }
}

/// The request body with its codings undone, read whole (as git http-backend buffers
/// upload-pack's requests) so that a body over `limit` or a broken one gets an HTTP status
/// rather than a response cut off midway.
fn request_body(
    reader: &mut BufReader<Stream>,
    head: &Head,
    limit: u64,
) -> Result<Vec<u8>, Refusal> {
    let too_large = || {
        Refusal::new(
            "413 Content Too Large",
            format!("request body larger than {limit} bytes"),
        )
    };
    if head.content_length.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    body_reader(reader, head)
        .take(limit + 1)
        .read_to_end(&mut body)
        .map_err(|e| Refusal::new("400 Bad Request", format!("unreadable request body: {e}")))?;
    if body.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(body)
}

/// Where a response body goes: chunked for HTTP/1.1, up to the connection's end for 1.0.
enum ResponseBody {
    Chunked(ChunkedWriter<Stream>),
    UntilClose(io::BufWriter<Stream>),
}

impl Write for ResponseBody {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            ResponseBody::Chunked(w) => w.write(data),
            ResponseBody::UntilClose(w) => w.write(data),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            ResponseBody::Chunked(w) => w.flush(),
            ResponseBody::UntilClose(w) => w.flush(),
        }
    }
}

/// Sends the status line and headers of a successful response (with git http-backend's
/// no-cache headers) and returns the body's writer.
fn start_response(
    stream: &Stream,
    head: &Head,
    content_type: &str,
) -> Result<ResponseBody, ServeError> {
    let framing = if head.http_1_0 {
        "Connection: close\r\n"
    } else {
        "Transfer-Encoding: chunked\r\n"
    };
    let headers = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n{framing}\
         Expires: Fri, 01 Jan 1980 00:00:00 GMT\r\nPragma: no-cache\r\n\
         Cache-Control: no-cache, max-age=0, must-revalidate\r\n\r\n"
    );
    let mut out = stream.clone();
    out.write_all(headers.as_bytes())?;
    Ok(if head.http_1_0 {
        ResponseBody::UntilClose(io::BufWriter::with_capacity(128 << 10, out))
    } else {
        ResponseBody::Chunked(ChunkedWriter::new(out))
    })
}

/// Answers with an error status; the connection closes after it, since a refused request's
/// body is left unread. A 401 names the scheme the client should answer with.
fn refuse(stream: &Stream, refusal: &Refusal) -> Result<(), ServeError> {
    // git shows a text body as `remote:` lines; after a 401 its own "Authentication failed"
    // says it all, as behind a web server that asks for credentials.
    let (body, challenge) = match refusal.status.starts_with("401") {
        true => (
            String::new(),
            "WWW-Authenticate: Basic realm=\"sluice\"\r\n",
        ),
        false => (format!("{}\n", refusal.message), ""),
    };
    let response = format!(
        "HTTP/1.1 {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         {challenge}Connection: close\r\nCache-Control: no-cache\r\n\r\n{body}",
        refusal.status,
        body.len()
    );
    stream.clone().write_all(response.as_bytes())?;
    Ok(())
}

/// `%XX` escapes of a URL path undone; a malformed escape stays as it is.
fn percent_decode(path: &str) -> String {
    String::from_utf8_lossy(&sluice_object::percent::decode(path)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_escapes_are_undone() {
        assert_eq!(percent_decode("/a%20b/%2e%2e/c%zz"), "/a b/../c%zz");
    }
}
