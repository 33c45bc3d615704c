//! The ssh command line, as git builds it for each kind of ssh program (`ssh.variant`,
//! `GIT_SSH_VARIANT`): OpenSSH, PuTTY's plink and putty, TortoisePlink, and "simple" (a host and
//! a command, nothing else). An override names the variant; without one (or with `auto`) the
//! program's name decides, and a name git does not know is asked whether it takes OpenSSH's
//! options (`-G`, which prints the configuration and connects nowhere).

use super::process::spawn;
use super::{ConnectOptions, IpVersion, Link, ProtocolVersion, Response};
use crate::FetchError;
use sluice_object::shell;
use std::process::{Command, Stdio};

/// Which command-line dialect the ssh program speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// OpenSSH: `-o SendEnv=GIT_PROTOCOL`, `-p <port>`.
    OpenSsh,
    /// PuTTY's plink and putty: `-P <port>`.
    Plink,
    /// TortoisePlink: as plink, and `-batch` (no dialogs).
    TortoisePlink,
    /// Only `[user@]host command`.
    Simple,
}

/// The variant an override names: `None` for `auto`; a name git does not know means OpenSSH.
fn overridden(name: &str) -> Option<Variant> {
    match name {
        "auto" => None,
        "plink" | "putty" => Some(Variant::Plink),
        "tortoiseplink" => Some(Variant::TortoisePlink),
        "simple" => Some(Variant::Simple),
        _ => Some(Variant::OpenSsh),
    }
}

/// The variant the program's name says, if it says one.
fn by_name(program: &str) -> Option<Variant> {
    let first = program.split_whitespace().next().unwrap_or(program);
    let base = first
        .rsplit('/')
        .next()
        .unwrap_or(first)
        .to_ascii_lowercase();
    match base.strip_suffix(".exe").unwrap_or(&base) {
        "ssh" => Some(Variant::OpenSsh),
        "plink" => Some(Variant::Plink),
        "tortoiseplink" => Some(Variant::TortoisePlink),
        _ => None,
    }
}

/// Where ssh connects: `[user@]host` and the port, if one was given.
struct Target<'a> {
    user: Option<&'a str>,
    host: &'a str,
    port: Option<u16>,
}

/// The ssh program as a command ready for arguments, and the text that names it.
fn program(options: &ConnectOptions) -> (Command, String) {
    match (&options.ssh_command, &options.ssh_program) {
        (Some(shell_command), _) => {
            let mut command = Command::new("sh");
            command
                .arg("-c")
                .arg(format!("{shell_command} \"$@\""))
                .arg(shell_command);
            (command, shell_command.clone())
        }
        (None, Some(program)) => (Command::new(program), program.clone()),
        (None, None) => (Command::new("ssh"), "ssh".to_owned()),
    }
}

/// The options `variant` gives ssh for `target` (before the host).
fn push_options(
    command: &mut Command,
    variant: Variant,
    target: &Target<'_>,
    options: &ConnectOptions,
) -> Result<(), FetchError> {
    if variant == Variant::OpenSsh && options.protocol == ProtocolVersion::V2 {
        command.args(["-o", "SendEnv=GIT_PROTOCOL"]);
    }
    let family = match options.ip_version {
        IpVersion::Any => None,
        IpVersion::V4 => Some("-4"),
        IpVersion::V6 => Some("-6"),
    };
    if let Some(flag) = family {
        if variant == Variant::Simple {
            return Err(FetchError::SshIpVersion { flag });
        }
        command.arg(flag);
    }
    if variant == Variant::TortoisePlink {
        command.arg("-batch");
    }
    if let Some(port) = target.port {
        match variant {
            Variant::OpenSsh => command.arg("-p"),
            Variant::Plink | Variant::TortoisePlink => command.arg("-P"),
            Variant::Simple => return Err(FetchError::SshPort),
        };
        command.arg(port.to_string());
    }
    Ok(())
}

/// `[user@]host`.
fn destination(target: &Target<'_>) -> String {
    match target.user {
        Some(user) => format!("{user}@{}", target.host),
        None => target.host.to_owned(),
    }
}

/// The variant of a program whose name says nothing: OpenSSH if it takes `-G` with OpenSSH's
/// options for this target, else simple.
fn probe(target: &Target<'_>, options: &ConnectOptions) -> Variant {
    let (mut command, _) = program(options);
    command.arg("-G");
    if push_options(&mut command, Variant::OpenSsh, target, options).is_err() {
        return Variant::Simple;
    }
    command.arg(destination(target));
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    match command.status() {
        Ok(status) if status.success() => Variant::OpenSsh,
        _ => Variant::Simple,
    }
}

/// upload-pack (or receive-pack) at `path` on `host`, through ssh.
pub(super) fn connect(
    user: Option<&str>,
    host: &str,
    port: Option<u16>,
    path: &str,
    options: &ConnectOptions,
) -> Result<(Box<dyn Link>, Response), FetchError> {
    let target = Target { user, host, port };
    let (mut command, name) = program(options);
    let variant = match options.ssh_variant.as_deref().map(overridden) {
        Some(Some(variant)) => variant,
        _ => by_name(&name).unwrap_or_else(|| probe(&target, options)),
    };
    push_options(&mut command, variant, &target, options)?;
    command.arg(destination(&target));
    command.arg(format!("{} {}", options.program(), shell::quote(path)));
    spawn(command, options, format!("'{name}'"))
}
