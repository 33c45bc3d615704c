//! `commit-graph verify`: the graph's files whole (checksum and layout), its ids in order, and
//! every commit's tree, parents and date as the object itself has them, its generation above
//! its parents'. Each problem is named, with the commit, as git names it.

use super::read::graph_files;
use super::GraphReader;
use sluice_object::parse::parse_commit;
use sluice_object::progress::Progress;
use sluice_object::ObjectKind;
use sluice_odb::ObjectDb;
use std::path::PathBuf;

/// What `verify` found: each problem in git's words, and whether every one is a file's
/// checksum (git's verify then exits 2, else 1).
#[derive(Debug, Default)]
pub struct Verified {
    /// The problems, in the order found.
    pub problems: Vec<String>,
    /// Whether the only problems are checksums.
    pub checksums_only: bool,
}

/// Verifies the commit-graph of `odb`'s object directory: nothing found for a sound graph or
/// none at all.
pub fn verify(odb: &ObjectDb, shallow: bool, progress: &dyn Progress) -> Verified {
    let mut checksums = 0;
    let problems = problems(odb, (shallow, progress), &mut checksums);
    Verified {
        checksums_only: checksums == problems.len(),
        problems,
    }
}

fn problems(
    odb: &ObjectDb,
    (shallow, progress): (bool, &dyn Progress),
    checksums: &mut usize,
) -> Vec<String> {
    let hash = odb.hash();
    let mut files: Vec<PathBuf> = graph_files(odb.dir())
        .into_iter()
        .filter(|f| f.exists())
        .collect();
    // `--shallow`: the newest layer of a split graph only.
    if shallow && files.len() > 1 {
        files.drain(..files.len() - 1);
    }
    if files.is_empty() {
        return Vec::new();
    }
    let mut problems = Vec::new();
    for file in &files {
        match std::fs::read(file) {
            Ok(bytes) if sluice_odb::chunk_file::checksum_matches(&bytes, hash) => {}
            Ok(_) => {
                *checksums += 1;
                let text = "the commit-graph file has incorrect checksum and is likely corrupt";
                problems.push(text.to_owned());
            }
            Err(e) => problems.push(format!("cannot read '{}': {e}", file.display())),
        }
    }
    let Some(graph) = GraphReader::open(odb.dir(), hash) else {
        problems.push("commit-graph file is corrupt: its layout does not hold".to_owned());
        return problems;
    };
    let first = match shallow {
        true => graph.top_layer_start(),
        false => 0,
    };
    progress.phase(
        "Verifying commits in commit graph",
        Some((graph.len() - first) as u64),
    );
    let mut previous = None;
    for position in first as u32..graph.len() as u32 {
        let Some(id) = graph.id(position) else {
            problems.push(format!("commit-graph has no commit at position {position}"));
            break;
        };
        if previous.is_some_and(|p| p >= id) && graph.position(&id) == Some(position) {
            let previous = previous.expect("checked");
            problems.push(format!(
                "commit-graph has incorrect OID order: {previous} then {id}"
            ));
        }
        previous = Some(id);
        problems.extend(check_commit(odb, &graph, position));
        progress.add(1);
    }
    progress.finish();
    problems
}

/// The problems of the commit at `position`: against the object, and its generation.
fn check_commit(odb: &ObjectDb, graph: &GraphReader, position: u32) -> Vec<String> {
    let id = graph.id(position).expect("a position the graph holds");
    let Some(recorded) = graph.commit(&id) else {
        return vec![format!("commit-graph is corrupt at commit {id}")];
    };
    let commit = match odb.read(&id) {
        Ok(Some((ObjectKind::Commit, data))) => match parse_commit(odb.hash(), &data) {
            Ok(commit) => commit,
            Err(e) => {
                return vec![format!(
                    "failed to parse commit {id} from object database: {e}"
                )]
            }
        },
        _ => {
            return vec![format!(
                "failed to parse commit {id} from object database for commit-graph"
            )]
        }
    };
    let mut problems = Vec::new();
    if commit.tree != recorded.tree {
        problems.push(format!(
            "root tree OID for commit {id} in commit-graph is {} != {}",
            recorded.tree, commit.tree
        ));
    }
    if commit.parents != recorded.parents {
        problems.push(format!(
            "commit-graph parent list for commit {id} does not match"
        ));
    }
    if recorded.time != commit.time {
        problems.push(format!(
            "commit date for commit {id} in commit-graph is {} != {}",
            recorded.time, commit.time
        ));
    }
    let generation = graph.generation(position);
    for parent in graph.parents(position).unwrap_or_default() {
        if generation.is_some() && graph.generation(parent) >= generation {
            problems.push(format!(
                "commit-graph generation for commit {id} is too low"
            ));
        }
    }
    problems
}
