//! A connection to an upload-pack process: a local repository served by a command run through
//! the shell, as git runs `git-upload-pack '<path>'` for local and `file://` URLs (or the
//! `--upload-pack` command given).

use crate::FetchError;
use sluice_wire::pktline::{Packet, PktReader};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A running upload-pack and the capabilities it advertised.
#[derive(Debug)]
pub struct Connection {
    child: Child,
    pub(crate) input: PktReader<ChildStdout>,
    pub(crate) output: BufWriter<ChildStdin>,
    pub(crate) capabilities: Vec<String>,
}

/// Quotes `text` for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

impl Connection {
    /// Runs `upload_pack` (a shell command, `git-upload-pack` by default) on the repository at
    /// `path` with protocol v2 and reads its capability advertisement.
    pub fn local(path: &Path, upload_pack: &str) -> Result<Connection, FetchError> {
        let command = format!("{upload_pack} {}", shell_quote(&path.to_string_lossy()));
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .env("GIT_PROTOCOL", "version=2")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(FetchError::Protocol("no pipes to the server".into()));
        };
        let mut connection = Connection {
            child,
            input: PktReader::new(stdout),
            output: BufWriter::new(stdin),
            capabilities: Vec::new(),
        };
        connection.read_capabilities()?;
        Ok(connection)
    }

    /// The advertisement: `version 2`, then one capability a line, then a flush.
    fn read_capabilities(&mut self) -> Result<(), FetchError> {
        let mut first = true;
        loop {
            match self.input.read()? {
                None => {
                    return Err(FetchError::Protocol(
                        "the server hung up before advertising its capabilities".into(),
                    ))
                }
                Some(Packet::Flush) if !first => return Ok(()),
                Some(Packet::Data(line)) => {
                    let line = String::from_utf8_lossy(line).trim_end().to_owned();
                    if let Some(message) = line.strip_prefix("ERR ") {
                        return Err(FetchError::Remote(message.to_owned()));
                    }
                    if first {
                        if line != "version 2" {
                            return Err(FetchError::Protocol(format!(
                                "expected 'version 2', got '{line}' (protocol v0 servers are not supported yet)"
                            )));
                        }
                        first = false;
                    } else {
                        self.capabilities.push(line);
                    }
                }
                Some(_) => {
                    return Err(FetchError::Protocol(
                        "unexpected packet in the capability advertisement".into(),
                    ))
                }
            }
        }
    }

    /// Whether the server advertised `name` (alone or as `name=…`).
    pub fn has_capability(&self, name: &str) -> bool {
        self.capabilities.iter().any(|c| {
            c == name
                || c.strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('='))
        })
    }

    pub(crate) fn flush(&mut self) -> Result<(), FetchError> {
        self.output.flush()?;
        Ok(())
    }

    /// Closes the request stream and waits for the server to exit.
    pub fn finish(mut self) -> Result<(), FetchError> {
        drop(self.output);
        let status = self.child.wait()?;
        if !status.success() {
            return Err(FetchError::Protocol(format!(
                "the server exited with {status}"
            )));
        }
        Ok(())
    }
}
