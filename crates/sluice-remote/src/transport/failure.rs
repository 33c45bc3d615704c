//! Why a connection could not be made, in the words git's users know: the system's reason
//! without Rust's "(os error N)", and each address tried on a line of its own, as git's
//! git:// transport lists them.

use sluice_object::errno::system_words;
use std::net::IpAddr;

/// One address a connection was tried at, and why it failed.
#[derive(Debug)]
pub struct Attempt {
    /// The address.
    pub address: IpAddr,
    /// Why it failed.
    pub error: std::io::Error,
}

/// git's lines for the addresses of `host` tried: `<host>[<i>: <address>]: errno=<why>`.
pub fn attempts_text(host: &str, tried: &[Attempt]) -> String {
    let lines: Vec<String> = (tried.iter().enumerate())
        .map(|(i, attempt)| {
            let why = system_words(&attempt.error);
            format!("{host}[{i}: {}]: errno={why}", attempt.address)
        })
        .collect();
    lines.join("\n")
}
