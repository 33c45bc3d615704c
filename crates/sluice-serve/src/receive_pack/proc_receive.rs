//! The `proc-receive` hook (githooks): the commands whose refs `receive.procReceiveRefs` names
//! (Gerrit-style `refs/for/<branch>` review requests, the AGit flow) are handed to the hook
//! instead of updating refs, and the hook says what became of each, in pkt-lines on its
//! standard input and output:
//!
//! - receive-pack sends `version=1[\0<features>]` (`atomic`, `push-options`) and a flush; the hook answers
//!   `version=1\0<features>` and a flush;
//! - receive-pack sends `<old> <new> <ref>` for each command and a flush, then, if both sides
//!   take push options, each option and a flush;
//! - the hook answers `ok <ref>` or `ng <ref> [<reason>]` per command, each `ok` followed by
//!   the `option` lines of what it did instead (`refname`, `old-oid`, `new-oid`,
//!   `forced-update`; another `ok` for the same ref starts another report), or `option
//!   fall-through` to have receive-pack update the ref itself; then a flush.
//!
//! Every breach of that is told to the client in git's words, and the commands the hook did
//! not report fail.

use super::hooks::Hooks;
use super::Command;
use sluice_object::{HashKind, ObjectId};
use sluice_wire::pktline::{write_flush, write_packet, Packet, PktReader};
use sluice_wire::report_status::Rewrite;
use std::io::{Read, Write};

/// `receive.procReceiveRefs`: which commands go to the hook.
#[derive(Debug, Default)]
pub(super) struct ProcRefs {
    rules: Vec<Rule>,
}

/// One value: `[<modifiers>:]<prefix>`, the modifiers `a` (create), `m` (modify), `d`
/// (delete) narrowing it to those commands (none: all three) and `!` matching the commands
/// outside the prefix instead.
#[derive(Debug)]
struct Rule {
    create: bool,
    modify: bool,
    delete: bool,
    negative: bool,
    prefix: String,
}

impl ProcRefs {
    /// The rules the configuration sets (none: the hook is never run).
    pub(super) fn of(config: &sluice_odb::Config) -> ProcRefs {
        let rules = (config.get_all("receive.procReceiveRefs").into_iter())
            .filter(|value| !value.is_empty())
            .map(|value| {
                let (modifiers, prefix) = value.split_once(':').unwrap_or(("", value));
                let has = |c: char| modifiers.contains(c);
                let any = has('a') || has('m') || has('d');
                Rule {
                    create: !any || has('a'),
                    modify: !any || has('m'),
                    delete: !any || has('d'),
                    negative: has('!'),
                    prefix: prefix.trim_end_matches('/').to_owned(),
                }
            })
            .collect();
        ProcRefs { rules }
    }

    /// Whether `command` goes to the hook.
    pub(super) fn matches(&self, command: &Command) -> bool {
        self.rules.iter().any(|rule| {
            let wanted = match (command.old.is_null(), command.new.is_null()) {
                (true, _) => rule.create,
                (_, true) => rule.delete,
                _ => rule.modify,
            };
            let rest = command.name.strip_prefix(rule.prefix.as_str());
            let inside = rest.is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
            wanted && inside != rule.negative
        })
    }
}

/// What became of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Not the hook's, or left to receive-pack (`option fall-through`).
    Ours,
    /// The hook did it, as each report says (none: as asked).
    Done(Vec<Rewrite>),
    /// Refused, with git's reason.
    Refused(String),
}

/// The hook's run: an outcome per command, and what to tell the client.
#[derive(Debug)]
pub(super) struct ProcRun {
    pub(super) outcomes: Vec<Outcome>,
    /// The hook's own output (its standard error).
    pub(super) said: Vec<u8>,
    /// receive-pack's complaint, in git's words, if any.
    pub(super) error: Option<String>,
}

/// The most bytes of answers read from the hook: a hook that talks on without end does not
/// take the server's memory.
const MAX_ANSWER_BYTES: usize = 16 << 20;

/// Runs the hook for the commands `sent` marks. A failure of the hook (it is missing, breaks
/// the protocol, exits with an error, refuses a command) fails every command it did not
/// report as done — every command not yet refused, in an atomic push.
pub(super) fn run(
    hooks: &Hooks,
    commands: &[Command],
    sent: &[bool],
    push_options: Option<&[String]>,
    atomic: bool,
    hash: HashKind,
) -> ProcRun {
    // `None` until decided: the commands not sent stay so, and are receive-pack's unless the
    // hook fails an atomic push.
    let mut outcomes: Vec<Option<Outcome>> = vec![None; commands.len()];
    let mut said = Vec::new();
    let mut errors = Vec::new();
    let failed = match hooks.spawn_piped("proc-receive") {
        None => {
            errors.push("cannot find hook 'proc-receive'".to_owned());
            true
        }
        Some(Err(e)) => {
            errors.push(format!("cannot run proc-receive: {e}"));
            true
        }
        Some(Ok(mut child)) => {
            let stderr = child.stderr.take();
            let reader = std::thread::spawn(move || {
                let mut text = Vec::new();
                if let Some(mut stderr) = stderr {
                    let _ = stderr.read_to_end(&mut text);
                }
                text
            });
            let talk = Talk {
                commands,
                sent,
                push_options,
                atomic,
                hash,
            };
            let mut failed = talk.converse(&mut child, &mut outcomes, &mut errors);
            drop(child.stdin.take());
            drop(child.stdout.take());
            failed |= !child.wait().is_ok_and(|status| status.success());
            said = reader.join().unwrap_or_default();
            failed
        }
    };
    let outcomes = (outcomes.into_iter().zip(sent))
        .map(|(outcome, &sent)| match outcome {
            Some(outcome) => outcome,
            None if failed && (sent || atomic) => {
                Outcome::Refused("fail to run proc-receive hook".to_owned())
            }
            None => Outcome::Ours,
        })
        .collect();
    let error = (!errors.is_empty()).then(|| errors.join("\n"));
    ProcRun {
        outcomes,
        said,
        error,
    }
}

/// One conversation with the hook.
struct Talk<'a> {
    commands: &'a [Command],
    sent: &'a [bool],
    push_options: Option<&'a [String]>,
    atomic: bool,
    hash: HashKind,
}

impl Talk<'_> {
    /// The exchange; whether it failed. Outcomes the hook gave are written into `outcomes`
    /// (a command the hook was sent and did not report is refused).
    fn converse(
        &self,
        child: &mut std::process::Child,
        outcomes: &mut [Option<Outcome>],
        errors: &mut Vec<String>,
    ) -> bool {
        let (Some(mut input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            errors.push("fail to run proc-receive hook".to_owned());
            return true;
        };
        let mut reader = PktReader::new(output.take(MAX_ANSWER_BYTES as u64));
        let features = [
            (self.atomic, "atomic"),
            (self.push_options.is_some(), "push-options"),
        ];
        let features: Vec<&str> = (features.iter())
            .filter(|(on, _)| *on)
            .map(|(_, name)| *name)
            .collect();
        let hello = match features.is_empty() {
            true => "version=1\n".to_owned(),
            false => format!("version=1\0{}\n", features.join(" ")),
        };
        // A hook that exits early closes its input: what it said still decides.
        let _ = write_packet(&mut input, hello.as_bytes()).and_then(|_| write_flush(&mut input));
        let (version, hook_options) = match read_version(&mut reader) {
            Some(answer) => answer,
            None => {
                errors.push("fail to negotiate version with proc-receive hook".to_owned());
                return true;
            }
        };
        if version > 1 {
            errors.push(format!("proc-receive version '{version}' is not supported"));
            return true;
        }
        let mut request = Vec::new();
        for (command, _) in (self.commands.iter().zip(self.sent)).filter(|(_, &sent)| sent) {
            let line = format!("{} {} {}", command.old, command.new, command.name);
            let _ = write_packet(&mut request, line.as_bytes());
        }
        let _ = write_flush(&mut request);
        if let (true, Some(options)) = (hook_options, self.push_options) {
            for option in options {
                let _ = write_packet(&mut request, option.as_bytes());
            }
            let _ = write_flush(&mut request);
        }
        let _ = input.write_all(&request).and_then(|_| input.flush());
        drop(input);
        self.read_reports(&mut reader, outcomes, errors)
    }

    /// The hook's `ok`/`ng`/`option` lines up to its flush; whether any breached the protocol
    /// or refused a command.
    fn read_reports(
        &self,
        reader: &mut PktReader<impl Read>,
        outcomes: &mut [Option<Outcome>],
        errors: &mut Vec<String>,
    ) -> bool {
        let mut failed = false;
        let mut answered = false;
        // The command the last `ok` named, and whether its next `option` starts a report.
        let mut current: Option<(usize, bool)> = None;
        let mut option_without_status = false;
        loop {
            let line = match reader.read() {
                Ok(Some(Packet::Data(data))) => String::from_utf8_lossy(data).into_owned(),
                Ok(Some(Packet::Flush)) => break,
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => {
                    if !answered {
                        errors.push("proc-receive exited abnormally".to_owned());
                        return true;
                    }
                    break;
                }
            };
            answered = true;
            let line = line.trim_end_matches('\n');
            let Some((head, rest)) = line.split_once(' ') else {
                errors.push(format!(
                    "proc-receive reported incomplete status line: '{line}'"
                ));
                failed = true;
                continue;
            };
            if head == "option" {
                let Some((at, fresh)) = current.as_mut() else {
                    if !option_without_status {
                        errors.push(
                            "proc-receive reported 'option' without a matching 'ok/ng' directive"
                                .to_owned(),
                        );
                    }
                    option_without_status = true;
                    failed = true;
                    continue;
                };
                self.option(rest, *at, std::mem::take(fresh), outcomes);
                continue;
            }
            current = None;
            let (name, reason) = match rest.split_once(' ') {
                Some((name, reason)) => (name, Some(reason)),
                None => (rest, None),
            };
            if head != "ok" && head != "ng" {
                errors.push(format!(
                    "proc-receive reported bad status '{head}' on ref '{name}'"
                ));
                failed = true;
                continue;
            }
            let Some(at) = self.commands.iter().position(|c| c.name == name) else {
                errors.push(format!(
                    "proc-receive reported status on unknown ref: {name}"
                ));
                failed = true;
                continue;
            };
            if !self.sent[at] {
                errors.push(format!(
                    "proc-receive reported status on unexpected ref: {name}"
                ));
                failed = true;
                continue;
            }
            if head == "ng" {
                outcomes[at] = Some(Outcome::Refused(reason.unwrap_or("failed").to_owned()));
                failed = true;
                continue;
            }
            if !matches!(outcomes[at], Some(Outcome::Done(_))) {
                outcomes[at] = Some(Outcome::Done(Vec::new()));
            }
            current = Some((at, true));
        }
        for (at, outcome) in outcomes.iter_mut().enumerate() {
            if self.sent[at] && outcome.is_none() {
                *outcome = Some(Outcome::Refused(
                    "proc-receive failed to report status".to_owned(),
                ));
                failed = true;
            }
        }
        failed
    }

    /// One `option` line for command `at`; `fresh`: it starts a new report.
    fn option(&self, text: &str, at: usize, fresh: bool, outcomes: &mut [Option<Outcome>]) {
        let Some(Outcome::Done(reports)) = &mut outcomes[at] else {
            return;
        };
        if fresh || reports.is_empty() {
            reports.push(Rewrite::default());
        }
        let (key, value) = match text.split_once(' ') {
            Some((key, value)) => (key, Some(value)),
            None => (text, None),
        };
        let id = |value: Option<&str>| {
            value.and_then(|v| ObjectId::from_hex(self.hash, v.as_bytes()).ok())
        };
        let report = reports.last_mut().expect("a report was just made");
        match key {
            "refname" => report.name = value.map(str::to_owned),
            "old-oid" => report.old = id(value).or(report.old),
            "new-oid" => report.new = id(value).or(report.new),
            "forced-update" => report.forced = true,
            // Left to receive-pack: the command is ours again.
            "fall-through" => outcomes[at] = Some(Outcome::Ours),
            _ => {}
        }
    }
}

/// The hook's `version=<n>[\0<features>]` up to its flush, and whether it takes push
/// options; `None` when it does not end with a flush.
fn read_version(reader: &mut PktReader<impl Read>) -> Option<(u32, bool)> {
    let (mut version, mut options) = (0, false);
    loop {
        match reader.read().ok()?? {
            Packet::Flush => return Some((version, options)),
            Packet::Data(data) => {
                let (line, features) = match data.iter().position(|&b| b == 0) {
                    Some(nul) => (&data[..nul], &data[nul + 1..]),
                    None => (data, &[][..]),
                };
                let line = String::from_utf8_lossy(line);
                if let Some(number) = line.trim_end().strip_prefix("version=") {
                    version = number.parse().unwrap_or(0);
                    let features = String::from_utf8_lossy(features);
                    options = features.split_whitespace().any(|f| f == "push-options");
                }
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
#[path = "proc_receive_tests.rs"]
mod tests;
