//! What a client can get wrong in a request, each named with what it sent. The messages are
//! git's, word for word: upload-pack sends them back in an `ERR` packet.

/// How a request broke the protocol or asked for what may not be served.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A plain HTTP request to the https port.
    #[error("plain HTTP request on the https port")]
    PlainHttpOnTls,
    /// The TLS handshake failed.
    #[error("TLS handshake failed: {0}")]
    TlsHandshake(#[source] std::io::Error),
    /// A git:// path that climbs out of the served directory.
    #[error("'{requested}': path outside the served directory")]
    OutsideServedDir {
        /// The path asked for.
        requested: String,
    },
    /// A git:// request is not a pkt-line with the service and path.
    #[error("expected a git:// request")]
    NotGitRequest,
    /// A git:// request is not UTF-8.
    #[error("request is not UTF-8")]
    NotUtf8Request,
    /// A service other than upload-pack.
    #[error("service not enabled: '{command}'")]
    ServiceNotEnabled {
        /// The request's command.
        command: String,
    },
    /// The storage behind the served repositories failed (a store).
    #[error("'{path}': {source}")]
    Storage {
        /// The path asked for.
        path: String,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A path that holds no repository.
    #[error("'{path}': no repository")]
    NoRepository {
        /// The path asked for.
        path: String,
    },
    /// An HTTP request refused with this status.
    #[error("{status}: {message}")]
    Http {
        /// The status line's code and reason.
        status: &'static str,
        /// Why.
        message: String,
    },
    /// A line that is not UTF-8.
    #[error("protocol error: line is not UTF-8")]
    LineNotUtf8,
    /// An object id that does not parse.
    #[error("protocol error: expected {what} object id, got '{hex}'")]
    BadObjectId {
        /// Which line (`want`, `have`, `shallow`).
        what: &'static str,
        /// What was sent.
        hex: String,
    },
    /// Too many ids for one request.
    #[error("too many object ids in one request")]
    TooManyIds,
    /// Too many `have` lines.
    #[error("too many have lines")]
    TooManyHaves,
    /// A `deepen` that is no positive number.
    #[error("invalid deepen: {value}")]
    InvalidDeepen {
        /// What was sent.
        value: String,
    },
    /// A `deepen-since` that is no date.
    #[error("invalid deepen-since: {line}")]
    InvalidDeepenSince {
        /// The line.
        line: String,
    },
    /// Too many `deepen-not` lines.
    #[error("too many deepen-not lines")]
    TooManyDeepenNot,
    /// A `deepen-not` that names more than one ref.
    #[error("git upload-pack: ambiguous deepen-not: {name}")]
    AmbiguousDeepenNot {
        /// The name.
        name: String,
    },
    /// `deepen` with `deepen-since` or `deepen-not`.
    #[error("git upload-pack: deepen and deepen-since (or deepen-not) cannot be used together")]
    DeepenConflict,
    /// A shallow request that selects no commit.
    #[error("no commits selected for shallow requests")]
    NoShallowCommits,
    /// A `filter` line where filtering is not allowed.
    #[error("unexpected line: 'filter' (filtering is not allowed)")]
    FilterNotAllowed,
    /// A filter the settings do not grant (`uploadpackfilter.*allow`).
    #[error("filter '{kind}' not supported")]
    FilterNotSupported {
        /// The filter's name in the settings.
        kind: &'static str,
    },
    /// A `tree:<depth>` deeper than `uploadpackfilter.tree.maxDepth`.
    #[error("tree filter allows max depth {max}, but got {depth}")]
    TreeDepthTooDeep {
        /// The limit.
        max: u64,
        /// What was asked.
        depth: u64,
    },
    /// A filter git has and this server does not compute (yet).
    #[error("filter '{kind}' not supported by this server (sluice)")]
    FilterUnsupported {
        /// The filter's name.
        kind: &'static str,
    },
    /// A filter that does not parse.
    #[error("invalid filter-spec '{spec}'")]
    InvalidFilter {
        /// What was sent.
        spec: String,
    },
    /// A line the request cannot have there.
    #[error("unexpected line: '{line}'")]
    UnexpectedLine {
        /// What was sent.
        line: String,
    },
    /// A v2 request that does not start with `command=`.
    #[error("expected command=<cmd>, got '{got}'")]
    ExpectedCommand {
        /// What was sent.
        got: String,
    },
    /// A v2 request that is not a command at all.
    #[error("expected a command")]
    NoCommand,
    /// A v2 command this server does not have.
    #[error("invalid command '{name}'")]
    InvalidCommand {
        /// The command.
        name: String,
    },
    /// The client's object format is not the repository's.
    #[error("mismatched object format: server {server}; client {client}")]
    ObjectFormat {
        /// The repository's.
        server: &'static str,
        /// The client's.
        client: String,
    },
    /// A v2 command that ends before its arguments.
    #[error("unexpected end of command")]
    UnexpectedEndOfCommand,
    /// Too many arguments to one command.
    #[error("too many arguments")]
    TooManyArguments,
    /// A packet of another kind among a command's arguments.
    #[error("unexpected packet in command arguments")]
    UnexpectedPacketInArguments,
    /// A `want-ref` of a ref that does not exist.
    #[error("unknown ref {name}")]
    UnknownRef {
        /// The ref.
        name: String,
    },
    /// The client went away before sending anything.
    #[error("the remote end hung up unexpectedly")]
    HungUp,
    /// A v0 request that ends before its flush.
    #[error("protocol error: unexpected end of request")]
    UnexpectedEndOfRequest,
    /// A packet of another kind in the v0 want list.
    #[error("protocol error: unexpected packet in want list")]
    UnexpectedPacketInWants,
    /// A v0 `want` line without an id.
    #[error("git upload-pack: protocol error, expected to get object ID, not '{line}'")]
    ExpectedObjectId {
        /// What was sent.
        line: String,
    },
    /// The v0 negotiation ended before `done`.
    #[error("git upload-pack: expected SHA1 list, got end of stream")]
    EndOfHaves,
    /// A packet other than a line in the v0 negotiation.
    #[error("git upload-pack: expected SHA1 list, got a special packet")]
    SpecialPacketInHaves,
    /// A line in the v0 negotiation that is neither `have` nor `done`.
    #[error("git upload-pack: expected SHA1 list, got '{got}'")]
    ExpectedHaves {
        /// What was sent.
        got: String,
    },
}

impl From<sluice_repo::storage::StorageError> for crate::ServeError {
    fn from(e: sluice_repo::storage::StorageError) -> crate::ServeError {
        use sluice_repo::storage::StorageError;
        match e {
            StorageError::NoRepository { path } => RequestError::NoRepository { path }.into(),
            StorageError::OutsideBase { requested } => {
                RequestError::OutsideServedDir { requested }.into()
            }
            StorageError::Open(e) => e.into(),
            StorageError::Failed { path, source } => RequestError::Storage { path, source }.into(),
        }
    }
}
