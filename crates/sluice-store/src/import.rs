//! `sluice store import`: a local repository into the store, as one pack with a bitmap of
//! everything its refs reach, and its first manifest.

use crate::manifest::{Manifest, PackEntry};
use crate::scratch::Scratch;
use crate::stored::StoredRepo;
use crate::StoreError;
use sluice_object::progress::Progress;
use sluice_repo::init::{init, InitOptions};
use sluice_repo::{RefTarget, Repository};
use std::path::{Path, PathBuf};

/// Imports `repo`'s refs, HEAD and the objects they reach into `target`, which must not exist
/// yet. The pack is written in a staging repository under `staging` (which borrows `repo`'s
/// objects as an alternate, so nothing is copied twice), then uploaded; the manifest is
/// written last, so an import that fails leaves no repository, only garbage for the sweep.
pub fn import(
    repo: &Repository,
    target: &StoredRepo,
    staging: &Path,
    progress: &dyn Progress,
) -> Result<Manifest, StoreError> {
    if target.read()?.is_some() {
        return Err(StoreError::Exists(target.folder().to_owned()));
    }
    let head = head_of(repo)?;
    let scratch = Scratch::new(staging, "import").map_err(StoreError::file(staging))?;
    let dir = scratch.path();
    init(
        dir,
        InitOptions {
            initial: &head,
            bare: true,
            extensions: false,
            template: None,
        },
    )?;
    let source = std::path::absolute(repo.objects().dir()).map_err(StoreError::file(dir))?;
    sluice_odb::alternates::add(&dir.join("objects"), &source.to_string_lossy())?;
    let staged = Repository::open_served(dir, true)?;
    let refs = repo.refs().list_peeled()?;
    staged.refs().write_packed(refs.clone())?;
    let options = sluice_generate::RepackOptions {
        bitmap: sluice_generate::BitmapChoice::Asked,
        ..Default::default()
    };
    sluice_generate::repack_all_with(&staged, &options, progress)?;
    let packs = upload_packs(target, &dir.join("objects/pack"), |_| true)?;
    let manifest = Manifest {
        head,
        packs,
        refs: refs.into_iter().map(|(name, id, _)| (name, id)).collect(),
        ..Manifest::default()
    };
    target.create(manifest)
}

/// What HEAD names; a detached HEAD is stored as the branch `main` or `master` if one exists
/// (a stored repository's HEAD is always a branch's name).
fn head_of(repo: &Repository) -> Result<String, StoreError> {
    match repo.refs().read("HEAD")? {
        Some(RefTarget::Symbolic(name)) => Ok(name),
        _ => {
            let main = repo.refs().read("refs/heads/main")?.is_some();
            Ok(["refs/heads/master", "refs/heads/main"][usize::from(main)].to_owned())
        }
    }
}

/// Uploads the packs in `dir` that `wanted` accepts (by name), every file of each, `.pack`
/// and its companions first and `.idx` last; returns their entries.
pub(crate) fn upload_packs(
    target: &StoredRepo,
    dir: &Path,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<PackEntry>, StoreError> {
    let mut entries = Vec::new();
    for (name, pack) in packs_in(dir)? {
        if !wanted(&name) {
            continue;
        }
        let size = std::fs::metadata(&pack)
            .map_err(StoreError::file(&pack))?
            .len();
        let extras: Vec<String> = (crate::manifest::PACK_EXTRAS.into_iter())
            .filter(|e| pack.with_extension(e).exists())
            .map(str::to_owned)
            .collect();
        let entry = PackEntry { name, size, extras };
        // The files of one pack at once: a push waits for each round trip to the store.
        std::thread::scope(|scope| {
            let uploads: Vec<_> = (entry.files())
                .map(|extension| {
                    let key = target.pack_key(&entry.name, extension);
                    let path = pack.with_extension(extension);
                    scope.spawn(move || target.bucket().upload(&key, &path))
                })
                .collect();
            (uploads.into_iter())
                .map(|upload| {
                    upload
                        .join()
                        .unwrap_or_else(|e| std::panic::resume_unwind(e))
                })
                .collect::<Result<Vec<()>, StoreError>>()
        })?;
        entries.push(entry);
    }
    Ok(entries)
}

/// The packs of a pack directory that have their index, by name (`pack-<hex>`).
pub(crate) fn packs_in(dir: &Path) -> Result<Vec<(String, PathBuf)>, StoreError> {
    let listing = std::fs::read_dir(dir).map_err(StoreError::file(dir))?;
    let mut packs = Vec::new();
    for entry in listing {
        let path = entry.map_err(StoreError::file(dir))?.path();
        let name = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned);
        let is_pack = path.extension().is_some_and(|e| e == "pack");
        if let Some(name) = name.filter(|n| is_pack && crate::manifest::pack_name_ok(n)) {
            if path.with_extension("idx").exists() {
                packs.push((name, path));
            }
        }
    }
    packs.sort();
    Ok(packs)
}
