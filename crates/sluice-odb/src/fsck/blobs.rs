//! The blobs a tree names `.gitmodules` or `.gitattributes`: git reads them from checkouts,
//! so a hostile one could run a command (a submodule URL or path taken for an option, an
//! `update = !command`) or escape into `.git` through a submodule name.

use super::{Message, Report};
use crate::Config;
use sluice_object::ObjectKind;
use std::path::Path;

/// Which special file a blob was named as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
    /// `.gitmodules`.
    Gitmodules,
    /// `.gitattributes`.
    Gitattributes,
}

/// git refuses to parse a `.gitattributes` larger than this, or with a longer line.
const ATTRIBUTES_MAX_SIZE: usize = 100 * 1024 * 1024;
const ATTRIBUTES_MAX_LINE: usize = 2048;

/// Judges the object a tree named as `special`.
pub(super) fn check(special: Special, kind: ObjectKind, data: &[u8], report: &mut Report<'_>) {
    match (special, kind) {
        (Special::Gitmodules, ObjectKind::Blob) => gitmodules(data, report),
        (Special::Gitmodules, _) => {
            report.add(Message::GitmodulesBlob, "non-blob found at .gitmodules")
        }
        (Special::Gitattributes, ObjectKind::Blob) => gitattributes(data, report),
        (Special::Gitattributes, _) => report.add(
            Message::GitattributesBlob,
            "non-blob found at .gitattributes",
        ),
    }
}

fn gitattributes(data: &[u8], report: &mut Report<'_>) {
    if data.len() > ATTRIBUTES_MAX_SIZE {
        return report.add(
            Message::GitattributesLarge,
            ".gitattributes too large to parse",
        );
    }
    if data
        .split(|&b| b == b'\n')
        .any(|line| line.len() > ATTRIBUTES_MAX_LINE)
    {
        report.add(
            Message::GitattributesLineLength,
            ".gitattributes has too long lines to parse",
        );
    }
}

fn gitmodules(data: &[u8], report: &mut Report<'_>) {
    let mut config = Config::default();
    let text = String::from_utf8_lossy(data);
    if config.parse(&text, Path::new(".gitmodules")).is_err() {
        return report.add(Message::GitmodulesParse, "could not parse gitmodules blob");
    }
    for name in config.subsection_names("submodule") {
        if name_ok(&name) {
            continue;
        }
        // git judges the name with each of its settings, and says so each time.
        for _ in config.names_under(&format!("submodule.{name}")) {
            report.add(
                Message::GitmodulesName,
                format!("disallowed submodule name: {name}"),
            );
        }
    }
    for (_, url) in config.subsections("submodule", "url") {
        if !url_ok(&url) {
            report.add(
                Message::GitmodulesUrl,
                format!("disallowed submodule url: {url}"),
            );
        }
    }
    for (_, path) in config.subsections("submodule", "path") {
        if path.starts_with('-') {
            report.add(
                Message::GitmodulesPath,
                format!("disallowed submodule path: {path}"),
            );
        }
    }
    for (_, update) in config.subsections("submodule", "update") {
        if update.starts_with('!') {
            report.add(
                Message::GitmodulesUpdate,
                format!("disallowed submodule update setting: {update}"),
            );
        }
    }
}

/// A submodule's name becomes a directory under `.git/modules`: no `..` component may lead it
/// out, and it may not be empty.
fn name_ok(name: &str) -> bool {
    !name.is_empty() && !name.split(['/', '\\']).any(|part| part == "..")
}

/// A URL that a command line would take for an option, or that smuggles a newline (decoded or
/// not) into a credential request, is refused.
fn url_ok(url: &str) -> bool {
    if url.starts_with('-') || url.contains('\n') {
        return false;
    }
    let decoded = sluice_object::percent::decode(url);
    !decoded.contains(&b'\n') && !decoded.starts_with(b"-")
}
