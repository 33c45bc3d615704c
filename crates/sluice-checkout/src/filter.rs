//! External smudge filters (`gitattributes`, "filter"): `filter.<driver>.smudge` commands run
//! once per file through the shell, and `filter.<driver>.process` programs that stay running and
//! speak the long-running filter protocol (the one git-lfs implements) over pkt-lines. Both run
//! sequentially, as git runs them.

use sluice_wire::pktline::{
    write_data, write_flush, write_packet, Packet, PktLineError, PktReader,
};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// One filter driver's configuration.
#[derive(Debug, Clone, Default)]
pub struct FilterDriver {
    /// `filter.<driver>.smudge`.
    pub smudge: Option<String>,
    /// `filter.<driver>.process`.
    pub process: Option<String>,
    /// `filter.<driver>.required`: a failure is an error instead of a warning.
    pub required: bool,
}

/// Why a filter failed.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    /// The filter could not be run or failed, and is required.
    #[error("{path}: smudge filter {driver} failed: {source}")]
    Failed {
        /// The file being filtered.
        path: String,
        /// The driver.
        driver: String,
        /// What went wrong.
        source: FilterFailure,
    },
}

/// What went wrong with a filter.
#[derive(Debug, thiserror::Error)]
pub enum FilterFailure {
    /// A `smudge` command could not be run.
    #[error("cannot run '{command}': {source}")]
    Run {
        /// The command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// A `process` program could not be started.
    #[error("cannot start '{command}': {source}")]
    Start {
        /// The command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// A `smudge` command failed.
    #[error("'{command}' exited with {status}")]
    Exited {
        /// The command.
        command: String,
        /// How it ended.
        status: std::process::ExitStatus,
    },
    /// Talking to the filter failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The filter process sent something that is not pkt-lines.
    #[error(transparent)]
    PktLine(#[from] PktLineError),
    /// The filter process did not answer the handshake as the protocol says.
    #[error("unexpected filter handshake {0:?}")]
    Handshake(Vec<String>),
    /// The filter process reported a status other than success.
    #[error("filter process reported status {0}")]
    Status(String),
    /// The filter process sent a packet where none of that kind belongs.
    #[error("unexpected packet from filter")]
    UnexpectedPacket,
    /// The filter process ended the conversation early.
    #[error("filter process closed the connection")]
    Closed,
}

struct Process {
    child: Child,
    stdin: ChildStdin,
    reader: PktReader<ChildStdout>,
    can_smudge: bool,
}

/// Runs filters for a checkout; long-running processes are started on first use and kept.
pub struct Filters {
    drivers: HashMap<String, FilterDriver>,
    processes: HashMap<String, Process>,
    work_tree: std::path::PathBuf,
    /// Warnings for optional filters that failed (the content was written unfiltered).
    pub warnings: Vec<String>,
}

impl std::fmt::Debug for Filters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filters")
            .field("drivers", &self.drivers)
            .finish()
    }
}

impl Filters {
    /// Filters with these drivers, run in `work_tree`.
    pub fn new(drivers: HashMap<String, FilterDriver>, work_tree: &Path) -> Self {
        Filters {
            drivers,
            processes: HashMap::new(),
            work_tree: work_tree.to_owned(),
            warnings: Vec::new(),
        }
    }

    /// Whether `driver` has a smudge command or process.
    pub fn has_smudge(&self, driver: &str) -> bool {
        self.drivers
            .get(driver)
            .is_some_and(|d| d.smudge.is_some() || d.process.is_some())
    }

    /// Smudges `data` for `path` with `driver`. An unknown driver passes content through, as
    /// does a failing optional filter (with a warning).
    pub fn smudge(
        &mut self,
        driver: &str,
        path: &str,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, FilterError> {
        let Some(config) = self.drivers.get(driver).cloned() else {
            return Ok(data);
        };
        let result = if let Some(process) = &config.process {
            self.smudge_process(driver, process, path, &data)
        } else if let Some(command) = &config.smudge {
            self.smudge_command(command, path, &data)
        } else {
            return Ok(data);
        };
        match result {
            Ok(Some(out)) => Ok(out),
            Ok(None) => Ok(data),
            Err(source) if config.required => Err(FilterError::Failed {
                path: path.to_owned(),
                driver: driver.to_owned(),
                source,
            }),
            Err(why) => {
                self.warnings
                    .push(format!("{path}: smudge filter {driver} failed: {why}"));
                Ok(data)
            }
        }
    }

    fn smudge_command(
        &self,
        command: &str,
        path: &str,
        data: &[u8],
    ) -> Result<Option<Vec<u8>>, FilterFailure> {
        let command = command.replace("%f", &sluice_object::shell::quote(path));
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .current_dir(&self.work_tree)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|source| FilterFailure::Run {
                command: command.clone(),
                source,
            })?;
        let mut stdin = child.stdin.take().expect("piped");
        let input = data.to_vec();
        // Feed from a thread: a filter that writes before reading everything must not deadlock.
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let output = child.wait_with_output()?;
        let _ = feeder.join();
        if !output.status.success() {
            return Err(FilterFailure::Exited {
                command,
                status: output.status,
            });
        }
        Ok(Some(output.stdout))
    }

    fn start_process(&self, command: &str) -> Result<Process, FilterFailure> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&self.work_tree)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|source| FilterFailure::Start {
                command: command.to_owned(),
                source,
            })?;
        let mut stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let mut reader = PktReader::new(stdout);
        write_packet(&mut stdin, b"git-filter-client\n")?;
        write_packet(&mut stdin, b"version=2\n")?;
        write_flush(&mut stdin)?;
        let greeting = read_list(&mut reader)?;
        if greeting.first().map(String::as_str) != Some("git-filter-server")
            || !greeting.iter().any(|l| l == "version=2")
        {
            return Err(FilterFailure::Handshake(greeting));
        }
        write_packet(&mut stdin, b"capability=clean\n")?;
        write_packet(&mut stdin, b"capability=smudge\n")?;
        write_flush(&mut stdin)?;
        let capabilities = read_list(&mut reader)?;
        Ok(Process {
            child,
            stdin,
            reader,
            can_smudge: capabilities.iter().any(|c| c == "capability=smudge"),
        })
    }

    fn smudge_process(
        &mut self,
        driver: &str,
        command: &str,
        path: &str,
        data: &[u8],
    ) -> Result<Option<Vec<u8>>, FilterFailure> {
        if !self.processes.contains_key(driver) {
            let process = self.start_process(command)?;
            self.processes.insert(driver.to_owned(), process);
        }
        let process = self.processes.get_mut(driver).expect("inserted");
        if !process.can_smudge {
            return Ok(None);
        }
        let result = (|| -> Result<Option<Vec<u8>>, FilterFailure> {
            let stdin = &mut process.stdin;
            write_packet(stdin, b"command=smudge\n")?;
            write_packet(stdin, format!("pathname={path}\n").as_bytes())?;
            write_flush(stdin)?;
            write_data(stdin, data)?;
            write_flush(stdin)?;
            stdin.flush()?;
            let status = read_list(&mut process.reader)?;
            let status = status
                .iter()
                .rev()
                .find_map(|l| l.strip_prefix("status="))
                .unwrap_or("success")
                .to_owned();
            if status != "success" {
                return Err(FilterFailure::Status(status));
            }
            let content = read_content(&mut process.reader)?;
            // A final status list follows; an empty one keeps the first status.
            let trailer = read_list(&mut process.reader)?;
            if let Some(last) = trailer.iter().rev().find_map(|l| l.strip_prefix("status=")) {
                if last != "success" {
                    return Err(FilterFailure::Status(last.to_owned()));
                }
            }
            Ok(Some(content))
        })();
        if result.is_err() {
            // A process that failed mid-protocol cannot be trusted with the next file.
            if let Some(mut process) = self.processes.remove(driver) {
                let _ = process.child.kill();
                let _ = process.child.wait();
            }
        }
        result
    }
}

impl Drop for Filters {
    fn drop(&mut self) {
        for (_, mut process) in self.processes.drain() {
            drop(process.stdin);
            let _ = process.child.wait();
        }
    }
}

/// Reads text packets up to a flush.
fn read_list(reader: &mut PktReader<ChildStdout>) -> Result<Vec<String>, FilterFailure> {
    let mut lines = Vec::new();
    loop {
        match reader.read()? {
            Some(Packet::Data(data)) => {
                lines.push(
                    String::from_utf8_lossy(data)
                        .trim_end_matches('\n')
                        .to_owned(),
                );
            }
            Some(Packet::Flush) => return Ok(lines),
            Some(_) => return Err(FilterFailure::UnexpectedPacket),
            None => return Err(FilterFailure::Closed),
        }
    }
}

/// Reads content packets up to a flush.
fn read_content(reader: &mut PktReader<ChildStdout>) -> Result<Vec<u8>, FilterFailure> {
    let mut content = Vec::new();
    loop {
        match reader.read()? {
            Some(Packet::Data(data)) => content.extend_from_slice(data),
            Some(Packet::Flush) => return Ok(content),
            Some(_) => return Err(FilterFailure::UnexpectedPacket),
            None => return Err(FilterFailure::Closed),
        }
    }
}
