//! Smart HTTP (`gitprotocol-http`): `GET info/refs?service=git-upload-pack` (or
//! `git-receive-pack`) for the advertisement, then one `POST git-upload-pack` per request, each
//! a whole request with its own response (a push's, streamed as its pack is written). Redirects of the first request move the base URL, as git's do; credentials
//! come from the URL or from `git credential fill`; `http.extraHeader` goes on every request.

use super::spill::{Body as SpillBody, SpillWriter};
use super::TlsTrust;
use super::{ConnectOptions, IpVersion, Link, Producer, ProtocolVersion, Response, Service};
use crate::FetchError;
use rustls::pki_types::CertificateDer;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Instant;
use ureq::config::RedirectAuthHeaders;
use ureq::http::Response as HttpResponse;
use ureq::tls::{PemItem, TlsConfig};
use ureq::{Agent, Body, ResponseExt};

/// Requests larger than this are sent gzipped, as git does.
const GZIP_ABOVE: usize = 1024;

/// A user name and password for Basic authentication.
#[derive(Debug, Clone, Default)]
struct Credentials {
    username: String,
    password: String,
}

struct HttpLink {
    agent: Agent,
    service: Service,
    /// Requests up to this size are sent whole, larger ones streamed (`http.postBuffer`).
    post_buffer: usize,
    /// The repository's URL without credentials or a trailing slash.
    base: String,
    /// What to call it in messages (the URL as given, credentials removed).
    shown: String,
    headers: Vec<(String, String)>,
    credentials: Option<Credentials>,
    /// The repository's URL after a redirect on connecting, which git warns about.
    redirected: Option<String>,
}

/// What went wrong with a smart HTTP exchange.
#[derive(Debug, thiserror::Error)]
pub enum HttpFailure {
    /// The request could not be made or answered (connection, TLS, redirects).
    #[error(transparent)]
    Request(#[from] ureq::Error),
    /// The server answered with an error status; `message` is its text (a `text/plain` body,
    /// which git shows as `remote:` lines).
    #[error("The requested URL returned error: {code}")]
    Status {
        /// The status code.
        code: u16,
        /// The server's text, if it sent one.
        message: Option<String>,
    },
    /// No connection could be made (curl's words, which git users know).
    #[error("Failed to connect to {host} port {port} after {ms} ms: Couldn't connect to server")]
    Connect {
        /// The host.
        host: String,
        /// The port.
        port: u16,
        /// How long the attempt took.
        ms: u128,
    },
    /// The host name could not be looked up.
    #[error("Could not resolve host: {0}")]
    Resolve(String),
    /// The server's certificate was not trusted, in the words git (through curl and OpenSSL)
    /// uses for the same certificate.
    #[error("SSL certificate problem: {0}")]
    Certificate(String),
    /// The server answered with something other than git's smart protocol.
    #[error(
        "the server answered with content type '{got}', not '{wanted}' \
         (a dumb HTTP server, which is not supported)"
    )]
    ContentType {
        /// What it answered with.
        got: String,
        /// What git's smart protocol answers with.
        wanted: &'static str,
    },
    /// The certificate file (`http.sslCAInfo`, `GIT_SSL_CAINFO`) cannot be used.
    #[error("error setting certificate file: {}: {why}", path.display())]
    CaFile {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        why: String,
    },
}

fn failure(shown: &str, why: impl Into<HttpFailure>) -> FetchError {
    FetchError::Http {
        // git names the repository's URL with a slash after it.
        url: format!("{}/", shown.trim_end_matches('/')),
        source: why.into(),
    }
}

/// A request that got no answer, in curl's and git's words where they have some: a connection
/// refused (`Failed to connect to … port …`), a name not found, a certificate not trusted.
fn request_failure(shown: &str, url: &str, error: ureq::Error, started: Instant) -> FetchError {
    let (host, port) = host_and_port(url);
    // A certificate refused in the handshake comes as rustls' error, or inside an I/O one.
    let refused_certificate = match &error {
        ureq::Error::Rustls(rustls::Error::InvalidCertificate(problem)) => Some(problem.clone()),
        ureq::Error::Io(e) => match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
            Some(rustls::Error::InvalidCertificate(problem)) => Some(problem.clone()),
            _ => None,
        },
        _ => None,
    };
    if let Some(problem) = refused_certificate {
        let words = super::tls::certificate_problem(&problem, &host);
        return failure(shown, HttpFailure::Certificate(words));
    }
    let why = match error {
        ureq::Error::Io(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::ConnectionRefused
                    | std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::NetworkUnreachable
                    | std::io::ErrorKind::HostUnreachable
            ) =>
        {
            let ms = started.elapsed().as_millis();
            HttpFailure::Connect { host, port, ms }
        }
        ureq::Error::ConnectionFailed => {
            let ms = started.elapsed().as_millis();
            HttpFailure::Connect { host, port, ms }
        }
        ureq::Error::HostNotFound => HttpFailure::Resolve(host),
        other => HttpFailure::Request(other),
    };
    failure(shown, why)
}

/// The text a server sent with an error status, when it is text (`text/plain`), as git shows
/// it; at most 4 KiB of it, a hostile server's body being no reason to read on.
fn server_text(response: HttpResponse<Body>) -> Option<String> {
    let plain = (response.headers().get("content-type"))
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/plain"));
    if !plain {
        return None;
    }
    let mut text = Vec::new();
    let mut body = response.into_body().into_reader().take(4096);
    body.read_to_end(&mut text).ok()?;
    let text = String::from_utf8_lossy(&text).trim_end().to_owned();
    (!text.is_empty()).then_some(text)
}

/// The host and port a URL names (the scheme's port when it names none).
fn host_and_port(url: &str) -> (String, u16) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let authority = rest.split('/').next().unwrap_or_default();
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let default = if scheme == "https" { 443 } else { 80 };
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
            let host = host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned();
            (host, port.parse().unwrap_or(default))
        }
        _ => (authority.to_owned(), default),
    }
}

/// Decodes `%xx` in a URL's user name or password.
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Splits `user[:password]@` off the URL.
fn split_credentials(url: &str) -> (String, Option<(String, Option<String>)>) {
    match crate::url::split_userinfo(url) {
        Some((userinfo, stripped)) => {
            let (user, password) = match userinfo.split_once(':') {
                Some((user, password)) => (unescape(user), Some(unescape(password))),
                None => (unescape(userinfo), None),
            };
            (stripped, Some((user, password)))
        }
        None => (url.to_owned(), None),
    }
}

/// The fields `git credential` takes for `url`.
fn credential_query(url: &str, username: Option<&str>) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let (host, path) = match rest.split_once('/') {
        Some((host, path)) => (host, path),
        None => (rest, ""),
    };
    let mut query = format!("protocol={scheme}\nhost={host}\npath={path}\n");
    if let Some(username) = username {
        query.push_str(&format!("username={username}\n"));
    }
    query
}

/// Runs `git credential <action>` with `input`; returns what it printed.
fn git_credential(action: &'static str, input: &str) -> Result<String, FetchError> {
    let mut child = Command::new("git")
        .args(["credential", action])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|source| FetchError::CredentialSpawn { action, source })?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes())?;
        stdin.write_all(b"\n")?;
    }
    let output = child.wait_with_output()?;
    if !output.status.success() {
        return Err(FetchError::Credential { action });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

impl HttpLink {
    /// The headers every request carries.
    /// A POST of the service's request, with its headers.
    fn post(&self) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
        let url = format!("{}/{}", self.base, self.service.name());
        self.decorate(self.agent.post(&url))
            .header("Content-Type", content_type(self.service, "request"))
            .header("Accept", content_type(self.service, "result"))
    }

    fn decorate<B>(&self, mut request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        if let Some(credentials) = &self.credentials {
            request = request.header("Authorization", basic(credentials));
        }
        request
    }

    /// Checks the status and content type of a response.
    fn check(
        &self,
        response: HttpResponse<Body>,
        content_type: &'static str,
    ) -> Result<HttpResponse<Body>, FetchError> {
        let status = response.status();
        if !status.is_success() {
            let code = status.as_u16();
            let message = server_text(response);
            if code == 404 {
                return Err(FetchError::NotFound {
                    url: format!("{}/", self.shown.trim_end_matches('/')),
                    message,
                });
            }
            return Err(failure(&self.shown, HttpFailure::Status { code, message }));
        }
        let got = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if got.split(';').next().unwrap_or("").trim() != content_type {
            return Err(failure(
                &self.shown,
                HttpFailure::ContentType {
                    got: got.to_owned(),
                    wanted: content_type,
                },
            ));
        }
        Ok(response)
    }
}

/// The `Authorization` value for `credentials`.
fn basic(credentials: &Credentials) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let input = format!("{}:{}", credentials.username, credentials.password);
    let mut out = String::from("Basic ");
    for chunk in input.as_bytes().chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn parse_credentials(text: &str) -> Credentials {
    let mut credentials = Credentials::default();
    for line in text.lines() {
        if let Some(user) = line.strip_prefix("username=") {
            credentials.username = user.to_owned();
        } else if let Some(password) = line.strip_prefix("password=") {
            credentials.password = password.to_owned();
        }
    }
    credentials
}

impl Link for HttpLink {
    fn send(&mut self, request: &[u8]) -> Result<Option<Response>, FetchError> {
        let mut post = self.post();
        // As git: only upload-pack's requests are gzipped.
        let body = if request.len() > GZIP_ABOVE && self.service == Service::UploadPack {
            post = post.header("Content-Encoding", "gzip");
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(request)?;
            encoder.finish()?
        } else {
            request.to_vec()
        };
        let response = post.send(body).map_err(|e| failure(&self.shown, e))?;
        let response = self.check(response, content_type(self.service, "result"))?;
        Ok(Some(Box::new(response.into_body().into_reader())))
    }

    fn send_streamed(&mut self, produce: Producer<'_>) -> Result<Option<Response>, FetchError> {
        let (writer, started) = SpillWriter::new(self.post_buffer);
        let post = self.post();
        let (sent, produced) = std::thread::scope(|scope| {
            let producing = scope.spawn(move || {
                let mut writer = std::io::BufWriter::with_capacity(64 << 10, writer);
                produce(&mut writer)?;
                writer.into_inner().map_err(|e| e.into_error())?.finish()
            });
            // The producer announces the body once it knows which kind it is (or fails).
            let sent = match started.recv() {
                Ok(SpillBody::Whole(body)) => post.send(body),
                Ok(SpillBody::Streamed(mut reader)) => {
                    let sent = post.send(ureq::SendBody::from_reader(&mut reader));
                    drop(reader);
                    sent
                }
                Err(_) => Err(ureq::Error::Io(std::io::ErrorKind::BrokenPipe.into())),
            };
            let produced = producing
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the request's writer panicked")));
            (sent, produced)
        });
        // A request the server cut short shows on the writing side as a broken pipe: the
        // server's answer says more. A producer that failed on its own says why.
        if let (Err(_), Err(e)) = (&sent, &produced) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Err(produced.unwrap_err().into());
            }
        }
        let response = sent.map_err(|e| failure(&self.shown, e))?;
        let response = self.check(response, content_type(self.service, "result"))?;
        produced?;
        Ok(Some(Box::new(response.into_body().into_reader())))
    }

    fn stateless(&self) -> bool {
        true
    }

    fn finish(self: Box<Self>) -> Result<(), FetchError> {
        Ok(())
    }

    fn redirected_to(&self) -> Option<&str> {
        self.redirected.as_deref()
    }
}

/// The content type of a service's `advertisement`, `request` or `result`.
fn content_type(service: Service, what: &str) -> &'static str {
    match (service, what) {
        (Service::UploadPack, "advertisement") => "application/x-git-upload-pack-advertisement",
        (Service::UploadPack, "request") => "application/x-git-upload-pack-request",
        (Service::UploadPack, _) => "application/x-git-upload-pack-result",
        (Service::ReceivePack, "advertisement") => "application/x-git-receive-pack-advertisement",
        (Service::ReceivePack, "request") => "application/x-git-receive-pack-request",
        (Service::ReceivePack, _) => "application/x-git-receive-pack-result",
    }
}

/// The certificates of a CA file (`http.sslCAInfo`, `GIT_SSL_CAINFO`), which replace the
/// built-in roots as curl's does; `None` for the other kinds of trust.
fn ca_file(
    trust: &TlsTrust,
    shown: &str,
) -> Result<Option<Vec<CertificateDer<'static>>>, FetchError> {
    Ok(match trust {
        TlsTrust::Default | TlsTrust::Anyone => None,
        TlsTrust::CaFile(path) => {
            let unusable = |why: String| {
                failure(
                    shown,
                    HttpFailure::CaFile {
                        path: path.clone(),
                        why,
                    },
                )
            };
            let pem = std::fs::read(path).map_err(|e| unusable(e.to_string()))?;
            let mut certificates = Vec::new();
            for item in ureq::tls::parse_pem(&pem) {
                if let PemItem::Certificate(certificate) =
                    item.map_err(|e| unusable(e.to_string()))?
                {
                    certificates.push(certificate);
                }
            }
            if certificates.is_empty() {
                return Err(unusable("no certificate in it".into()));
            }
            let der = certificates
                .iter()
                .map(|c| CertificateDer::from(c.der().to_vec()));
            Some(der.collect())
        }
    })
}

/// The HTTP client for `trust`: ureq's own TLS for the built-in roots (or none checked);
/// with a CA file, the connector chain with the TLS layer that trusts it as curl does
/// (`pinned`).
fn http_agent(
    config: ureq::config::Config,
    trust: &TlsTrust,
    shown: &str,
) -> Result<Agent, FetchError> {
    use ureq::unversioned::transport::{ConnectProxyConnector, Connector, TcpConnector};
    let Some(certificates) = ca_file(trust, shown)? else {
        return Ok(config.into());
    };
    let tls = super::pinned::client_config(certificates)
        .map_err(|e| failure(shown, HttpFailure::Certificate(e.to_string())))?;
    let connector =
        ().chain(ConnectProxyConnector::default())
            .chain(TcpConnector::default())
            .chain(super::pinned::PinnedTlsConnector { config: tls });
    let resolver = ureq::unversioned::resolver::DefaultResolver::default();
    Ok(Agent::with_parts(config, connector, resolver))
}

/// The HTTP client `options` ask for: TLS trust, timeouts, IP family, user agent.
fn agent(options: &ConnectOptions, shown: &str) -> Result<Agent, FetchError> {
    let trust = &settings(options)?.tls_trust;
    let tls = match trust {
        TlsTrust::Anyone => TlsConfig::builder().disable_verification(true).build(),
        _ => TlsConfig::builder().build(),
    };
    let config = Agent::config_builder()
        .tls_config(tls)
        .http_status_as_error(false)
        // As curl does for git: credentials follow a redirect to the same host, and only there.
        .redirect_auth_headers(RedirectAuthHeaders::SameHost)
        .timeout_per_read(options.idle_timeout)
        .ip_family(match options.ip_version {
            IpVersion::Any => ureq::config::IpFamily::Any,
            IpVersion::V4 => ureq::config::IpFamily::Ipv4Only,
            IpVersion::V6 => ureq::config::IpFamily::Ipv6Only,
        })
        .user_agent(sluice_wire::agent::user_agent(concat!(
            "git/sluice-",
            env!("CARGO_PKG_VERSION")
        )))
        .build();
    http_agent(config, trust, shown)
}

/// The `http.*` settings, or their refusal (read with the configuration, refused only here,
/// where HTTP is spoken, as git reads them).
fn settings(options: &ConnectOptions) -> Result<&super::HttpSettings, FetchError> {
    (options.http.as_ref()).map_err(|refused| FetchError::HttpSetting(refused.clone()))
}

/// Downloads `url` into `out`, refusing more than `limit` bytes: a bundle a server named.
pub(crate) fn download(
    url: &str,
    out: &mut dyn std::io::Write,
    options: &ConnectOptions,
    limit: u64,
) -> Result<u64, FetchError> {
    let (stripped, _) = split_credentials(url);
    let agent = agent(options, &stripped)?;
    let started = Instant::now();
    let response =
        (agent.get(url).call()).map_err(|e| request_failure(&stripped, url, e, started))?;
    let status = response.status().as_u16();
    if status != 200 {
        let message = server_text(response);
        return Err(failure(
            &stripped,
            HttpFailure::Status {
                code: status,
                message,
            },
        ));
    }
    let mut body = response
        .into_body()
        .into_reader()
        .take(limit.saturating_add(1));
    let copied = std::io::copy(&mut body, out).map_err(FetchError::Io)?;
    if copied > limit {
        return Err(FetchError::Unsupported(
            "the bundle is larger than the limit",
        ));
    }
    Ok(copied)
}

pub(super) fn connect(
    url: &str,
    options: &ConnectOptions,
) -> Result<(Box<dyn Link>, Response), FetchError> {
    let (stripped, userinfo) = split_credentials(url);
    let base = stripped.trim_end_matches('/').to_owned();
    let agent = agent(options, &stripped)?;
    let mut headers = Vec::new();
    if options.protocol == ProtocolVersion::V2 {
        headers.push(("Git-Protocol".to_owned(), "version=2".to_owned()));
    }
    let http = settings(options)?;
    for extra in &http.extra_headers {
        if let Some((name, value)) = extra.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let username = userinfo.as_ref().map(|(user, _)| user.clone());
    let mut link = HttpLink {
        agent,
        service: options.service,
        post_buffer: http.post_buffer,
        base,
        shown: stripped.clone(),
        headers,
        credentials: userinfo.and_then(|(username, password)| {
            password.map(|password| Credentials { username, password })
        }),
        redirected: None,
    };
    let query = format!("/info/refs?service={}", options.service.name());
    let advertisement = format!("{}{query}", link.base);
    let get = |link: &HttpLink| {
        let started = Instant::now();
        link.decorate(link.agent.get(&advertisement))
            .header("Pragma", "no-cache")
            .call()
            .map_err(|e| request_failure(&link.shown, &advertisement, e, started))
    };
    let mut response = get(&link)?;
    let mut asked = None;
    if response.status().as_u16() == 401 && link.credentials.is_none() {
        let query = credential_query(&link.base, username.as_deref());
        let credentials = parse_credentials(&git_credential("fill", &query)?);
        link.credentials = Some(credentials.clone());
        response = get(&link)?;
        asked = Some((query, credentials));
    }
    if let Some((query, credentials)) = asked {
        let fields = format!(
            "{query}username={}\npassword={}\n",
            credentials.username, credentials.password
        );
        let action = if response.status().as_u16() == 401 {
            "reject"
        } else {
            "approve"
        };
        git_credential(action, &fields)?;
    }
    if response.status().as_u16() == 401 {
        // git names the repository's URL with a slash after it.
        return Err(FetchError::Authentication {
            url: format!("{}/", link.shown.trim_end_matches('/')),
        });
    }
    let final_uri = response.get_uri().to_string();
    if let Some(moved) = final_uri.strip_suffix(&query) {
        if moved != link.base {
            link.base = moved.to_owned();
            link.redirected = Some(format!("{moved}/"));
        }
    }
    let response = link.check(response, content_type(options.service, "advertisement"))?;
    let body: Response = Box::new(response.into_body().into_reader());
    Ok((Box::new(link), body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_come_off_the_url_and_encode_as_basic() {
        let (url, userinfo) = split_credentials("https://me:p%40ss@example.org/r.git");
        assert_eq!(url, "https://example.org/r.git");
        assert_eq!(userinfo, Some(("me".into(), Some("p@ss".into()))));
        let header = basic(&Credentials {
            username: "Aladdin".into(),
            password: "open sesame".into(),
        });
        assert_eq!(header, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
    }
}
