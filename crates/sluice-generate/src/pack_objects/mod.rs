//! What `pack-objects` packs: the objects a script names on standard input (ids, each with the
//! path it was found at), or the objects that revisions reach (`--revs`), less what git's
//! filters leave out (`--unpacked`, `--local`, `--honor-pack-keep`, `--keep-pack`), as the
//! walk the writer takes.

mod run;

pub use run::{
    pack_objects, PackObjectsJob, PackObjectsMessages, PackOutput, PackedObjects, StoredOutput,
};

use crate::GenerateError;
use sluice_graph::walk::name_hash;
use sluice_graph::{walk_objects, Missing, WalkRequest, Walked, WalkedObject};
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use sluice_repo::Repository;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The objects asked for.
#[derive(Debug)]
pub enum Selection {
    /// Every object reachable from `include` and not from `exclude` (`--revs`).
    Revs {
        /// Revisions given as `<rev>` (and every ref with `--all`).
        include: Vec<ObjectId>,
        /// Revisions given as `^<rev>` or after `--not`.
        exclude: Vec<ObjectId>,
    },
    /// These objects, each with the path it was found at when given (which groups versions
    /// of one file for the delta search).
    Listed(Vec<(ObjectId, Option<Vec<u8>>)>),
    /// The objects of the packs named, by file name, less those of the packs excluded
    /// (`--stdin-packs`, as git's geometric repack asks); with `--unpacked`, the loose objects
    /// too.
    Packs {
        /// Packs whose objects go.
        include: Vec<String>,
        /// Packs whose objects stay out.
        exclude: Vec<String>,
    },
}

impl Selection {
    /// The tips a bitmap of the pack would start from, when the pack holds everything they
    /// reach: revisions with none excluded. Otherwise git writes no bitmap either.
    pub fn bitmap_tips(&self) -> Option<&[ObjectId]> {
        match self {
            Selection::Revs { include, exclude } if exclude.is_empty() => Some(include),
            _ => None,
        }
    }
}

/// Why standard input asks for nothing Sluice can pack.
#[derive(Debug, thiserror::Error)]
pub enum SelectionError {
    /// Reading it failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The refs, reflogs or indexes could not be read (`--all`, `--reflog`,
    /// `--indexed-objects`).
    #[error(transparent)]
    Roots(#[from] sluice_repo::RootsError),
    /// A line is not an object id.
    #[error("expected object ID, got garbage:\n {0}")]
    NotAnId(String),
    /// A line names no revision here.
    #[error("bad revision '{0}'")]
    BadRevision(String),
    /// An option pack-objects does not take on its input.
    #[error("not a rev '{0}'")]
    NotARev(String),
}

/// Which of the repository's roots ([`sluice_repo::Roots`]) are packed as if listed.
#[derive(Debug, Default, Clone, Copy)]
pub struct RootKinds {
    /// Every ref and `HEAD` (`--all`).
    pub refs: bool,
    /// Every reflog entry (`--reflog`).
    pub reflogs: bool,
    /// What every worktree's index holds (`--indexed-objects`).
    pub indexed: bool,
}

impl RootKinds {
    /// Whether any kind is asked for: each implies `--revs`.
    pub fn any(&self) -> bool {
        self.refs || self.reflogs || self.indexed
    }
}

impl Selection {
    /// What `input` asks for, as pack-objects reads its standard input: `<id> [<path>]` lines,
    /// or with `revs` revisions (`<rev>`, `^<rev>`, `--not` flipping what follows), to which
    /// `roots` adds the repository's roots of those kinds (a reflog's or an index's only when
    /// the object is still there, as git).
    pub fn read(
        repo: &Repository,
        input: impl BufRead,
        revs: bool,
        roots: RootKinds,
    ) -> Result<Selection, SelectionError> {
        if !(revs || roots.any()) {
            let mut listed = Vec::new();
            for line in input.lines() {
                let line = line?;
                let (hex, path) = match line.split_once(' ') {
                    Some((hex, path)) => (hex, Some(path.as_bytes().to_vec())),
                    None => (line.as_str(), None),
                };
                let id = ObjectId::from_hex(repo.hash(), hex.as_bytes())
                    .map_err(|_| SelectionError::NotAnId(line.clone()))?;
                listed.push((id, path));
            }
            return Ok(Selection::Listed(listed));
        }
        let (mut include, mut exclude) = (Vec::new(), Vec::new());
        if roots.any() {
            let found = sluice_repo::Roots::read(repo)?;
            if roots.refs {
                include.extend(&found.refs);
            }
            let present = |id: &&ObjectId| repo.objects().contains(id);
            if roots.reflogs {
                include.extend(found.reflogs.iter().filter(present));
            }
            if roots.indexed {
                include.extend(found.indexed.iter().filter(present));
            }
        }
        let mut negated = false;
        for line in input.lines() {
            let line = line?;
            match line.as_str() {
                "" => {}
                "--not" => negated = !negated,
                _ if line.starts_with("--") => return Err(SelectionError::NotARev(line)),
                _ => {
                    let (ours, theirs) = match negated {
                        true => (&mut exclude, &mut include),
                        false => (&mut include, &mut exclude),
                    };
                    add_revision(repo, &line, (ours, theirs))?;
                }
            }
        }
        Ok(Selection::Revs { include, exclude })
    }

    /// `--stdin-packs`: pack file names (`pack-<checksum>.pack`), each line one, `^` before a
    /// pack whose objects stay out.
    pub fn read_packs(input: impl BufRead) -> Result<Selection, SelectionError> {
        let (mut include, mut exclude) = (Vec::new(), Vec::new());
        for line in input.lines() {
            let line = line?;
            match line.strip_prefix('^') {
                Some(name) => exclude.push(name.to_owned()),
                None if !line.is_empty() => include.push(line),
                None => {}
            }
        }
        Ok(Selection::Packs { include, exclude })
    }
}

/// One revision of pack-objects' input, its objects added to `ours` and those it leaves out to
/// `theirs` (swapped by `--not`): `<rev>`, `^<rev>`, `<from>..<to>` (what `to` reaches and
/// `from` does not, as git's bundle writes a range), `<a>...<b>` (what either reaches and not
/// both: their common ancestors left out); an empty side of a range is `HEAD`.
fn add_revision(
    repo: &Repository,
    line: &str,
    (ours, theirs): (&mut Vec<ObjectId>, &mut Vec<ObjectId>),
) -> Result<(), SelectionError> {
    let resolve = |name: &str| {
        let name = if name.is_empty() { "HEAD" } else { name };
        sluice_repo::revision::resolve(repo, name)
            .map(|named| named.id)
            .ok_or_else(|| SelectionError::BadRevision(name.to_owned()))
    };
    if let Some((a, b)) = line.split_once("...") {
        let (a, b) = (resolve(a)?, resolve(b)?);
        let common = sluice_graph::ancestry::common_ancestors_met(repo.objects(), &a, &b)
            .ok_or_else(|| SelectionError::BadRevision(line.to_owned()))?;
        ours.extend([a, b]);
        theirs.extend(common);
    } else if let Some((from, to)) = line.split_once("..") {
        ours.push(resolve(to)?);
        theirs.push(resolve(from)?);
    } else if let Some(name) = line.strip_prefix('^') {
        theirs.push(resolve(name)?);
    } else {
        ours.push(resolve(line)?);
    }
    Ok(())
}

/// Objects left out although asked for.
#[derive(Debug, Clone)]
pub struct Filters<'a> {
    /// Only loose objects (`--unpacked`, `--incremental`).
    pub unpacked: bool,
    /// Not the objects only an alternate has (`--local`).
    pub local: bool,
    /// Not the objects of packs with a `.keep` file (`--honor-pack-keep`).
    pub honor_pack_keep: bool,
    /// Not the objects of these packs, by file name (`--keep-pack=<pack-name>`).
    pub keep_packs: &'a [String],
    /// With revisions: the objects a partial clone leaves out (`--filter=<spec>`).
    pub object_filter: sluice_graph::ObjectFilter,
    /// With revisions: not the objects of promisor packs, nor missing objects that a promisor
    /// remote has (`--exclude-promisor-objects`, as git's repack asks in a partial clone).
    pub exclude_promisor: bool,
    /// With revisions: what a missing tree or blob does (`--missing=<action>`).
    pub missing: MissingAction,
    /// With revisions: a shallow repository's cut, whose commits' parents are not walked.
    pub shallow: &'a IdSet,
    /// Stops the walk between two objects.
    pub cancel: Cancel,
}

impl Filters<'_> {
    /// Whether `--keep-pack` names the pack at `pack`.
    fn names(&self, pack: &Path) -> bool {
        let name = pack.file_name().and_then(|n| n.to_str());
        name.is_some_and(|name| self.keep_packs.iter().any(|k| k == name))
    }

    /// Whether the objects of the pack at `pack` stay out: named by `--keep-pack`, or kept by
    /// a `.keep` file under `--honor-pack-keep`.
    fn leaves_alone(&self, pack: &Path) -> bool {
        self.names(pack) || self.honor_pack_keep && pack.with_extension("keep").exists()
    }
}

/// What pack-objects does with an object the revisions reach but the repository lacks
/// (`--missing`), as git: a partial clone lacks some by design.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum MissingAction {
    /// Fail (`error`, the default).
    #[default]
    Error,
    /// Leave out any missing object (`allow-any`).
    AllowAny,
    /// Leave out those a promisor remote has, fail on others (`allow-promisor`).
    AllowPromisor,
}

impl MissingAction {
    /// The action named `name` as `--missing` takes it.
    pub fn parse(name: &str) -> Option<MissingAction> {
        match name {
            "error" => Some(MissingAction::Error),
            "allow-any" => Some(MissingAction::AllowAny),
            "allow-promisor" => Some(MissingAction::AllowPromisor),
            _ => None,
        }
    }
}

/// The walk of what `selection` asks for, less what `filters` leave out.
pub fn select(
    odb: &ObjectDb,
    selection: &Selection,
    filters: &Filters<'_>,
    progress: &dyn Progress,
) -> Result<Walked, GenerateError> {
    let mut walked = match selection {
        Selection::Revs { include, exclude } => {
            revs_objects(odb, (include, exclude), filters, progress)?
        }
        Selection::Listed(listed) => listed_objects(odb, listed)?,
        Selection::Packs { include, exclude } => {
            return packs_objects(odb, include, exclude, filters.unpacked);
        }
    };
    leave_out_filtered(odb, &mut walked, filters);
    Ok(walked)
}

/// Leaves out of `walked` what `filters` keep out: packed objects with `--unpacked`, what only
/// an alternate has with `--local`, what a kept pack holds.
fn leave_out_filtered(odb: &ObjectDb, walked: &mut Walked, filters: &Filters<'_>) {
    let kept: Vec<bool> = (odb.packs().iter())
        .map(|pack| filters.leaves_alone(pack.path()))
        .collect();
    let before = walked.objects.len();
    walked.objects.retain(|object| {
        let in_pack = odb.locate(&object.id);
        let local = in_pack.is_some() || odb.loose().contains(&object.id);
        !(filters.unpacked && in_pack.is_some()
            || filters.local && !local
            || in_pack.is_some_and(|(pack, _)| kept[pack]))
    });
    if walked.objects.len() != before {
        // The positions a bitmap gave no longer line up with the objects.
        walked.located = None;
    }
}

/// What pack-objects adds to what the revisions reach, so that a repack loses nothing no ref
/// reaches (git's `repack -a -d -k` asks for both).
#[derive(Debug, Default, Clone, Copy)]
pub struct Unreachable {
    /// Every object of the repository's own packs but those of packs kept by a `.keep` file
    /// or named by `--keep-pack` (`--keep-unreachable`).
    pub packed: bool,
    /// Every loose object (`--pack-loose-unreachable`).
    pub loose: bool,
}

/// Adds to `walked` what `unreachable` asks for and it lacks, less what `filters` leave out,
/// as git adds them: unnamed, after what the walk found. Returns the loose files that could
/// not be read, which are left out (git warns of each and goes on).
pub fn add_unreachable(
    repo: &Repository,
    odb: &ObjectDb,
    walked: &mut Walked,
    unreachable: Unreachable,
    filters: &Filters<'_>,
) -> Result<Vec<PathBuf>, crate::RepackError> {
    if !unreachable.packed && !unreachable.loose {
        return Ok(Vec::new());
    }
    let objects_dir = repo.objects().dir().to_owned();
    let mut added = Walked::default();
    if unreachable.packed {
        let own = crate::repack::pack_files(&sluice_odb::pack_dir(&objects_dir))?;
        let replaced: Vec<PathBuf> = (own.into_iter())
            .filter(|pack| !pack.with_extension("keep").exists() && !filters.names(pack))
            .collect();
        crate::left_alone::keep_unreachable(&mut added, &replaced, repo.hash())?;
    }
    let mut unreadable = Vec::new();
    if unreachable.loose {
        let (loose, unread) = crate::left_alone::loose_objects(&objects_dir, repo.hash())?;
        added.objects.extend(loose);
        unreadable = unread;
    }
    leave_out_filtered(odb, &mut added, filters);
    let mut listed: IdSet = walked.objects.iter().map(|o| o.id).collect();
    let before = walked.objects.len();
    let new = added.objects.into_iter().filter(|o| listed.insert(o.id));
    walked.objects.extend(new);
    if walked.objects.len() != before {
        walked.located = None;
    }
    Ok(unreadable)
}

/// What the revisions `include` reach and `exclude` do not, less what a partial clone's
/// promisor remote has when `filters` say so; a missing object fails as `filters.missing` says.
fn revs_objects(
    odb: &ObjectDb,
    (include, exclude): (&[ObjectId], &[ObjectId]),
    filters: &Filters<'_>,
    progress: &dyn Progress,
) -> Result<Walked, GenerateError> {
    let walk_error = |e| GenerateError::Walk(Box::new(e));
    let lenient = filters.exclude_promisor || filters.missing != MissingAction::Error;
    let request = WalkRequest {
        filter: filters.object_filter,
        shallow: filters.shallow,
        missing: match lenient {
            true => Missing::SetAside,
            false => Missing::Fail,
        },
        ..WalkRequest::reachable(include, exclude, filters.cancel.clone())
    };
    let mut walked = walk_objects(odb, &request, progress).map_err(walk_error)?;
    if filters.exclude_promisor {
        // The objects themselves, not what they reach: git marks each one seen and walks on,
        // and so does Sluice, so that a local object only a promisor object leads to is
        // still packed (git 2.47 would leave it out, and its repack then lose it).
        let promisor = sluice_graph::promised::promisor_packs(odb);
        walked
            .objects
            .retain(|o| !promisor.iter().any(|pack| pack.contains(&o.id)));
        walked.located = None;
    }
    if filters.missing != MissingAction::AllowAny {
        let (missing, cancel) = (&walked.missing, &filters.cancel);
        sluice_graph::promised::only_promised_missing(odb, missing, cancel).map_err(walk_error)?;
    }
    Ok(walked)
}

/// The objects of the pack files `include` less those of `exclude` (as `--stdin-packs` takes
/// them by name): what a repack moves from the packs it replaces into a pack of their own.
pub(crate) fn objects_of_packs(
    odb: &ObjectDb,
    include: &[&Path],
    exclude: &[&Path],
) -> Result<Walked, GenerateError> {
    let names = |paths: &[&Path]| -> Vec<String> {
        (paths.iter())
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect()
    };
    packs_objects(odb, &names(include), &names(exclude), false)
}

/// The objects of the packs `include` less those of `exclude` (by file name), and the loose
/// objects with `loose`.
fn packs_objects(
    odb: &ObjectDb,
    include: &[String],
    exclude: &[String],
    loose: bool,
) -> Result<Walked, GenerateError> {
    let find = |name: &String| {
        let named = |p: &&std::sync::Arc<sluice_odb::Pack>| {
            p.path()
                .file_name()
                .is_some_and(|n| n.to_str() == Some(name.as_str()))
        };
        odb.packs()
            .iter()
            .find(named)
            .ok_or_else(|| GenerateError::NoSuchPack(name.clone()))
    };
    let mut excluded = IdSet::default();
    for name in exclude {
        let pack = find(name)?;
        excluded.extend((0..pack.index().len()).map(|i| pack.index().id(i)));
    }
    let mut listed = Vec::new();
    for name in include {
        let pack = find(name)?;
        let ids = (0..pack.index().len()).map(|i| pack.index().id(i));
        listed.extend(ids.filter(|id| !excluded.contains(id)).map(|id| (id, None)));
    }
    if loose {
        let files = odb.loose().list().map_err(GenerateError::Io)?;
        let unpacked = files.into_iter().filter(|f| odb.locate(&f.id).is_none());
        listed.extend(unpacked.map(|f| (f.id, None)));
    }
    listed_objects(odb, &listed)
}

/// The listed objects, each once, with their kinds read and their paths hashed.
fn listed_objects(
    odb: &ObjectDb,
    listed: &[(ObjectId, Option<Vec<u8>>)],
) -> Result<Walked, GenerateError> {
    let mut seen = IdSet::default();
    let mut objects = Vec::with_capacity(listed.len());
    for (id, path) in listed {
        if !seen.insert(*id) {
            continue;
        }
        let (kind, _) = odb.read(id)?.ok_or(GenerateError::MissingObject(*id))?;
        objects.push(WalkedObject {
            id: *id,
            kind,
            name_hash: path.as_deref().map_or(0, name_hash),
            previous: None,
        });
    }
    // git's order for a pack: commits, tags, then trees and blobs as listed.
    objects.sort_by_key(|o| match o.kind {
        ObjectKind::Commit => 0,
        ObjectKind::Tag => 1,
        _ => 2,
    });
    Ok(Walked {
        objects,
        ..Walked::default()
    })
}

/// `--unpack-unreachable[=<date>]`: the objects of the repository's other packs that the packs
/// just written at `new_packs` leave out (unreachable, since it holds all that is reachable)
/// written loose and dated as their pack, for packs written after `since`; packs `filters`
/// leave alone keep theirs. git's `repack -A` deletes the old packs next, so that what only
/// they held survives until a prune judges it.
pub fn loosen_unreachable(
    repo: &Repository,
    new_packs: &[PathBuf],
    since: std::time::SystemTime,
    filters: &Filters<'_>,
) -> Result<(), crate::RepackError> {
    let objects_dir = repo.objects().dir();
    let packed = (new_packs.iter())
        .map(|new| sluice_odb::Pack::open(&new.with_extension("idx"), repo.hash()))
        .collect::<Result<Vec<_>, _>>()?;
    for old in crate::repack::pack_files(&sluice_odb::pack_dir(objects_dir))? {
        if !new_packs.contains(&old) && !filters.leaves_alone(&old) {
            crate::left_alone::loosen_left_out(&old, &packed, objects_dir, repo, since)?;
        }
    }
    Ok(())
}

/// `--cruft` (as git's `repack --cruft` and gc call it): standard input names packs that stay
/// (`pack-….pack`) and packs about to be deleted (`-pack-….pack`); the objects of the latter
/// and the loose objects that none of the former holds, less those older than `expiration`
/// (unless a younger one reaches them), written at `base` as cruft packs (under `limit` bytes
/// each when given), each with its `.mtimes`. None when there is nothing to keep.
pub fn write_cruft_at(
    repo: &Repository,
    odb: &ObjectDb,
    input: impl BufRead,
    expiration: Option<std::time::SystemTime>,
    (options, base, limit): (&crate::PackOptions, &Path, Option<u64>),
) -> Result<(Vec<sluice_odb::pack_store::Stored>, crate::PackStats), crate::RepackError> {
    let pack_dir = repo.objects().pack_dir();
    let (mut survivors, mut before) = (Vec::new(), Vec::new());
    for line in input.lines() {
        let line = line.map_err(crate::repack::file_error("read", Path::new("-")))?;
        match line.strip_prefix('-') {
            Some(name) => before.push(pack_dir.join(name)),
            None if !line.is_empty() => {
                let idx = pack_dir.join(&line).with_extension("idx");
                survivors.push(sluice_odb::Pack::open(&idx, repo.hash())?);
            }
            None => {}
        }
    }
    let survivors: Vec<&sluice_odb::Pack> = survivors.iter().collect();
    let cruft = crate::CruftOptions {
        expiration,
        ..crate::CruftOptions::default()
    };
    let quiet = &sluice_object::progress::Discard;
    let found = crate::cruft::cruft_of(repo, odb, (&survivors, &before), &cruft, quiet)?;
    let Some(cruft) = found else {
        return Ok((Vec::new(), crate::PackStats::default()));
    };
    let (odb_walked, index) = ((odb, &cruft.0), None);
    let (packs, stats) =
        crate::write_stored_at(repo, odb_walked, options, base, (index, limit), quiet)?;
    crate::cruft::date_cruft(repo, &cruft, &packs)?;
    Ok((packs, stats))
}

/// `--include-tag`: the annotated tags whose object (through a chain of tags) is in `walked`,
/// added to it, as git sends a fetch the tags of what it sends. Returns how many were added.
pub fn include_tags(
    repo: &Repository,
    odb: &ObjectDb,
    walked: &mut Walked,
) -> Result<usize, crate::RepackError> {
    let mut packed: IdSet = walked.objects.iter().map(|o| o.id).collect();
    let mut added = 0;
    for (name, id) in repo.refs().list()? {
        if !name.starts_with("refs/tags/") || packed.contains(&id) {
            continue;
        }
        // The tags of the chain, outermost first, and what the chain ends at.
        let mut chain = Vec::new();
        let mut current = id;
        while let Some((ObjectKind::Tag, data)) = odb.read(&current)? {
            chain.push(current);
            match sluice_object::parse::parse_tag(repo.hash(), &data) {
                Ok(tag) if chain.len() < 64 => current = tag.object,
                _ => break,
            }
        }
        if chain.is_empty() || !packed.contains(&current) {
            continue;
        }
        for tag in chain.into_iter().rev().filter(|t| packed.insert(*t)) {
            walked.objects.push(WalkedObject {
                id: tag,
                kind: ObjectKind::Tag,
                name_hash: 0,
                previous: None,
            });
            added += 1;
        }
    }
    if added > 0 {
        // The positions a bitmap gave no longer cover every object.
        walked.located = None;
    }
    Ok(added)
}
