//! The server's log: the libraries' events (`sluice::access`, one per request; `sluice::pack_cache`;
//! `sluice::store`, a node's maintenance that failed) written to standard error one line each,
//! as text or as JSON for log shippers (`--log-format`), stamped in RFC 3339.

use tracing_subscriber::util::SubscriberInitExt;

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// `<time> <level> <message> <field>=<value>…`
    #[default]
    Text,
    /// One JSON object a line, every field at its top level.
    Json,
}

/// Sends the libraries' events to standard error in `format`, for the rest of the process.
pub fn init(format: LogFormat) {
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false);
    // Already set (a second server in one process): the first one's stays.
    let _ = match format {
        LogFormat::Text => builder.finish().try_init(),
        LogFormat::Json => builder.json().flatten_event(true).finish().try_init(),
    };
}
