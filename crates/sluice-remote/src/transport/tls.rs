//! A certificate the client does not trust, in the words git users see from curl and OpenSSL
//! for the same certificate ("SSL certificate problem: …"), never a Debug dump.

use rustls::CertificateError;

/// OpenSSL's words for `problem` with the certificate of `host`.
pub(super) fn certificate_problem(problem: &CertificateError, host: &str) -> String {
    match problem {
        CertificateError::UnknownIssuer => "unable to get local issuer certificate".to_owned(),
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            "certificate has expired".to_owned()
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "certificate is not yet valid".to_owned()
        }
        CertificateError::Revoked => "certificate revoked".to_owned(),
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            format!("no alternative certificate subject name matches target host name '{host}'")
        }
        CertificateError::BadSignature => "certificate signature failure".to_owned(),
        // A self-signed certificate that is not pinned, or one used as its own CA.
        CertificateError::Other(_) => "self-signed certificate".to_owned(),
        other => format!("{other}").to_lowercase(),
    }
}
