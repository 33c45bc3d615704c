//! Git's wire formats, without sockets: the pkt-line framing (`gitprotocol-common`) that the
//! transfer protocols and long-running filter processes speak.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod agent;
pub mod demux;
pub mod pktline;
pub mod remote_text;
pub mod report_status;
pub mod session_id;
pub mod sideband;
