//! https with a certificate file (`http.sslCAInfo`, `GIT_SSL_CAINFO`), trusted as git (through
//! curl and OpenSSL) trusts it: a server whose chain leads to a certificate in the file, or a
//! server whose own certificate is in the file. The second is what `openssl req -x509` makes
//! for a home server: a self-signed certificate that is its own CA. webpki refuses such a
//! certificate as an end entity (`CaUsedAsEndEntity`), so the client's TLS layer here checks
//! the chain with webpki first and, when that fails, accepts a certificate that is byte for
//! byte one of the file's, for the name it is asked for and within its dates, as OpenSSL
//! does for a trust anchor presented by the server.
//!
//! The HTTP client (ureq) takes its TLS layer as a connector in its chain; this one stands in
//! for its own rustls connector when a certificate file is given.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme, StreamOwned};
use std::io::{Read, Write};
use std::sync::Arc;
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, Transport,
    TransportAdapter,
};

/// The client's TLS settings for a certificate file's `certificates`.
pub(super) fn client_config(
    certificates: Vec<CertificateDer<'static>>,
) -> Result<Arc<ClientConfig>, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    // A certificate webpki cannot take as a root is still one a server may present as its own.
    roots.add_parsable_certificates(certificates.iter().cloned());
    let chained = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| rustls::Error::General(e.to_string()));
    let verifier = PinnedOrChained {
        chained: chained.ok(),
        pinned: certificates,
        provider: provider.clone(),
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Trust in a certificate file: a chain to one of its certificates, or one of them itself.
#[derive(Debug)]
struct PinnedOrChained {
    /// webpki's verifier over the file's certificates that can be roots (`None`: none can).
    chained: Option<Arc<WebPkiServerVerifier>>,
    /// Every certificate of the file.
    pinned: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PinnedOrChained {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let chained = match &self.chained {
            Some(webpki) => webpki.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp_response,
                now,
            ),
            None => Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer,
            )),
        };
        let refusal = match chained {
            Ok(verified) => return Ok(verified),
            Err(refusal) => refusal,
        };
        if !self
            .pinned
            .iter()
            .any(|p| p.as_ref() == end_entity.as_ref())
        {
            return Err(refusal);
        }
        // The file names this very certificate: it must still be for this name, and current.
        let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_name(&parsed, server_name)?;
        within_dates(end_entity, now)?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Whether `now` falls within the certificate's validity, read with webpki as a trust anchor
/// would not be (an anchor's dates are not checked by webpki, but OpenSSL checks a presented
/// certificate's).
fn within_dates(certificate: &CertificateDer<'_>, now: UnixTime) -> Result<(), rustls::Error> {
    let expired = rustls::Error::InvalidCertificate(rustls::CertificateError::Expired);
    let (not_before, not_after) = validity(certificate.as_ref()).ok_or(expired.clone())?;
    let now = now.as_secs();
    if now < not_before {
        return Err(rustls::Error::InvalidCertificate(
            rustls::CertificateError::NotValidYet,
        ));
    }
    match now > not_after {
        true => Err(expired),
        false => Ok(()),
    }
}

/// The `notBefore` and `notAfter` of an X.509 certificate (DER), as seconds since the epoch.
fn validity(der: &[u8]) -> Option<(u64, u64)> {
    // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version?, serial, signature
    // algorithm, issuer, validity SEQUENCE { notBefore, notAfter }, … } … }
    let (certificate, _) = der_item(der, 0x30)?;
    let (mut tbs, _) = der_item(certificate, 0x30)?;
    if tbs.first() == Some(&0xa0) {
        tbs = der_item(tbs, 0xa0)?.1;
    }
    let (_, rest) = der_item(tbs, 0x02)?; // serial
    let (_, rest) = der_item(rest, 0x30)?; // signature algorithm
    let (_, rest) = der_item(rest, 0x30)?; // issuer
    let (validity, _) = der_item(rest, 0x30)?;
    let (not_before, rest) = der_time(validity)?;
    let (not_after, _) = der_time(rest)?;
    Some((not_before, not_after))
}

/// The contents of the DER item of tag `tag` at the start of `data`, and what follows it.
fn der_item(data: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    if *data.first()? != tag {
        return None;
    }
    let first = *data.get(1)?;
    let (len, header) = match first {
        0..=0x7f => (first as usize, 2),
        0x81..=0x84 => {
            let bytes = (first - 0x80) as usize;
            let len = (data.get(2..2 + bytes)?.iter()).fold(0usize, |n, &b| (n << 8) | b as usize);
            (len, 2 + bytes)
        }
        _ => return None,
    };
    let end = header.checked_add(len)?;
    Some((data.get(header..end)?, data.get(end..)?))
}

/// A UTCTime (`YYMMDDHHMMSSZ`) or GeneralizedTime (`YYYYMMDDHHMMSSZ`), as seconds since the
/// epoch, and what follows it.
fn der_time(data: &[u8]) -> Option<(u64, &[u8])> {
    let (text, rest, century) = match data.first()? {
        0x17 => {
            let (text, rest) = der_item(data, 0x17)?;
            let year: u64 = std::str::from_utf8(text.get(..2)?).ok()?.parse().ok()?;
            (
                text.get(2..)?,
                rest,
                Some(if year >= 50 { 1900 + year } else { 2000 + year }),
            )
        }
        _ => {
            let (text, rest) = der_item(data, 0x18)?;
            (text, rest, None)
        }
    };
    let (year, text) = match century {
        Some(year) => (year, text),
        None => (
            std::str::from_utf8(text.get(..4)?).ok()?.parse().ok()?,
            text.get(4..)?,
        ),
    };
    let field = |at: usize| -> Option<u64> {
        std::str::from_utf8(text.get(at..at + 2)?)
            .ok()?
            .parse()
            .ok()
    };
    let (month, day) = (field(0)?, field(2)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let seconds = field(4)? * 3600 + field(6)? * 60 + field(8)?;
    let days = sluice_repo::date::days_from_civil(year as i64, month as i64, day as i64);
    Some((u64::try_from(days).ok()? * 86400 + seconds, rest))
}

/// The TLS layer of the HTTP client's connector chain, with the settings of [`client_config`].
#[derive(Debug)]
pub(super) struct PinnedTlsConnector {
    pub(super) config: Arc<ClientConfig>,
}

impl<In: Transport> Connector<In> for PinnedTlsConnector {
    type Out = Either<In, PinnedTls>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        let Some(transport) = chained else {
            return Ok(None);
        };
        if !details.needs_tls() || transport.is_tls() {
            return Ok(Some(Either::A(transport)));
        }
        let host = details.uri.host().unwrap_or_default();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_owned())
            .map_err(|_| ureq::Error::Tls("invalid server name"))?;
        let mut conn = ClientConnection::new(Arc::clone(&self.config), name)?;
        let mut sock = TransportAdapter::new(transport.boxed(), details.current_time.clone());
        sock.set_timeout(details.timeout);
        conn.complete_io(&mut sock)?;
        let buffers = LazyBuffers::new(
            details.config.input_buffer_size(),
            details.config.output_buffer_size(),
        );
        let stream = StreamOwned { conn, sock };
        Ok(Some(Either::B(PinnedTls { buffers, stream })))
    }
}

/// One connection under TLS.
pub(super) struct PinnedTls {
    buffers: LazyBuffers,
    stream: StreamOwned<ClientConnection, TransportAdapter>,
}

impl std::fmt::Debug for PinnedTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedTls").finish()
    }
}

impl Transport for PinnedTls {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let output = &self.buffers.output()[..amount];
        self.stream.write_all(output)?;
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let input = self.buffers.input_append_buf();
        let read = self.stream.read(input)?;
        self.buffers.input_appended(read);
        Ok(read > 0)
    }

    fn is_open(&mut self) -> bool {
        self.stream.get_mut().get_mut().is_open()
    }

    fn is_tls(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A certificate openssl makes for two days from now: its dates as webpki would not read.
    #[test]
    fn validity_reads_the_dates_openssl_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
            ])
            .args([
                "-nodes", "-days", "2", "-subj", "/CN=test", "-outform", "DER",
            ])
            .args(["-keyout", "key.pem", "-out", "cert.der"])
            .current_dir(dir.path())
            .status()
            .expect("openssl");
        assert!(made.success());
        let der = std::fs::read(dir.path().join("cert.der")).unwrap();
        let (not_before, not_after) = validity(&der).expect("the dates");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(not_before.abs_diff(now) < 300, "{not_before} against {now}");
        assert_eq!(not_after - not_before, 2 * 86400);
        let cert = CertificateDer::from(der);
        assert!(within_dates(
            &cert,
            UnixTime::since_unix_epoch(std::time::Duration::from_secs(now))
        )
        .is_ok());
        let later = UnixTime::since_unix_epoch(std::time::Duration::from_secs(now + 3 * 86400));
        assert!(within_dates(&cert, later).is_err());
    }

    #[test]
    fn civil_days_match_known_dates() {
        let days_from_civil = sluice_repo::date::days_from_civil;
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11017);
        assert_eq!(days_from_civil(2026, 11, 28), 20785);
    }
}
