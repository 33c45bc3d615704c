//! What a server can get wrong in the protocol, each named with what it sent, so that a
//! failed fetch says what arrived where instead of a message built at the failure.

/// What the server sent where something else had to come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Got {
    /// A line of text.
    Line(String),
    /// A flush packet.
    Flush,
}

impl std::fmt::Display for Got {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Got::Line(line) => write!(f, "'{line}'"),
            Got::Flush => f.write_str("a flush"),
        }
    }
}

/// How the server broke the protocol (`gitprotocol-pack`, `gitprotocol-v2`).
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// A line is not UTF-8 text.
    #[error("a line that is not UTF-8")]
    NotUtf8,
    /// An object id does not parse.
    #[error("bad object id '{hex}'")]
    BadObjectId {
        /// What was sent.
        hex: String,
    },
    /// A ref line is not `<id> <name>`.
    #[error("bad ref line '{line}'")]
    BadRefLine {
        /// What was sent.
        line: String,
    },
    /// A ref name git would not accept (`..`, control characters, …).
    #[error("refusing ref with bad name '{}'", name.escape_debug())]
    BadRefName {
        /// The name sent.
        name: String,
    },
    /// A `^{}` line that does not come right after its tag.
    #[error("peeled line for '{tag}' does not follow it")]
    PeeledOutOfPlace {
        /// The tag it names.
        tag: String,
    },
    /// A packet of another kind where lines of a section were due.
    #[error("unexpected packet in {place}")]
    UnexpectedPacket {
        /// The section.
        place: &'static str,
    },
    /// A line other than the one due.
    #[error("expected {expected}, got {got}")]
    Expected {
        /// What was due, as the protocol spells it.
        expected: &'static str,
        /// What came.
        got: Got,
    },
    /// A line after the shallow list that has no place there.
    #[error("unexpected '{line}' after the shallow list")]
    AfterShallowList {
        /// What was sent.
        line: String,
    },
    /// An `ACK` with a status the protocol does not have.
    #[error("unknown acknowledgment '{line}'")]
    UnknownAcknowledgment {
        /// What was sent.
        line: String,
    },
    /// A line in the acknowledgments that is neither `ACK`, `NAK` nor `ready`.
    #[error("unexpected acknowledgment line '{line}'")]
    UnexpectedAcknowledgment {
        /// What was sent.
        line: String,
    },
    /// The acknowledgments section ends where it may not.
    #[error("the acknowledgments end out of order")]
    AcknowledgmentsOutOfOrder,
    /// The fetch response has no pack.
    #[error("the server sent no packfile section")]
    NoPackfile,
    /// A section of the fetch response runs into the next.
    #[error("section '{header}' does not end in a delimiter")]
    UnterminatedSection {
        /// The section's header.
        header: String,
    },
    /// A section the fetch response cannot have.
    #[error("unknown section '{name}' in the fetch response")]
    UnknownSection {
        /// Its header.
        name: String,
    },
    /// Smart HTTP's service line is not followed by a flush.
    #[error("no flush after the service line")]
    NoFlushAfterService,
}
