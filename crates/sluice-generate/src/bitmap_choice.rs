//! Whether a repack writes a reachability bitmap, as git's repack and gc settle it: asked for,
//! a bare repository's default, or none; and none where the repository borrows objects.

use sluice_odb::ConfigError;
use sluice_repo::Repository;

/// Whether a repack writes a bitmap, as git's repack and gc settle it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BitmapChoice {
    /// None (`--no-write-bitmap-index`, `repack.writeBitmaps=false`, or not told in a
    /// repository with a work tree).
    #[default]
    Never,
    /// A bare repository's default: written when the new pack can have one, quietly not
    /// otherwise; the objects of `.keep` packs stay out of the new pack (and so it has none).
    IfPossible,
    /// Asked for (`-b`, `repack.writeBitmaps=true`): the objects of `.keep` packs go into
    /// the new pack too, so that it can have one.
    Asked,
}

/// A bitmap asked for where none can be written.
#[derive(Debug, thiserror::Error)]
pub enum BitmapChoiceError {
    /// `-b` (or `repack.writeBitmaps=true`) on a repack of the loose objects only: the new pack
    /// would not hold everything its commits reach. git's words, refused before any work.
    #[error("Incremental repacks are incompatible with bitmap indexes.  Use\n--no-write-bitmap-index or disable the pack.writeBitmaps configuration.")]
    Incremental,
    /// `repack.writeBitmaps` is no boolean.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// The bitmap a repack writes, and whether one wanted was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepackBitmap {
    /// What the repack does.
    pub choice: BitmapChoice,
    /// `-l` dropped a bitmap that was wanted (git's warning says so).
    pub dropped: bool,
}

impl BitmapChoice {
    /// Whether a bitmap is to be written at all.
    pub fn wanted(self) -> bool {
        self != BitmapChoice::Never
    }

    /// The bitmap git's repack writes: `given` (`-b` or `--no-write-bitmap-index`), else as
    /// [`writes_bitmaps`] says, a bare repository's default holding only for a repack of
    /// everything (`whole`: `-a`, `-A`, `--cruft`) or one that writes a multi-pack-index.
    /// An incremental repack asked for one is refused; `local` (`-l`) drops it where the
    /// repository borrows objects ([`local_bitmap`]).
    pub fn for_repack(
        repo: &Repository,
        given: Option<bool>,
        whole: bool,
        local: bool,
    ) -> Result<RepackBitmap, BitmapChoiceError> {
        let choice = match (given, writes_bitmaps(repo)?) {
            (Some(true), _) => BitmapChoice::Asked,
            (Some(false), _) => BitmapChoice::Never,
            (None, BitmapChoice::IfPossible) if !whole => BitmapChoice::Never,
            (None, configured) => configured,
        };
        if choice == BitmapChoice::Asked && !whole {
            return Err(BitmapChoiceError::Incremental);
        }
        let (choice, dropped) = match local {
            true => local_bitmap(choice, repo),
            false => (choice, false),
        };
        Ok(RepackBitmap { choice, dropped })
    }
}

/// `-l` (which git's gc passes) in a repository that borrows objects: no bitmap, which could
/// not cover what the alternates hold; `true` when one was wanted, even by default, for git's
/// warning "disabling bitmap writing, as some objects are not being packed".
pub fn local_bitmap(bitmap: BitmapChoice, repo: &Repository) -> (BitmapChoice, bool) {
    match bitmap.wanted() && !repo.objects().alternates().is_empty() {
        true => (BitmapChoice::Never, true),
        false => (bitmap, false),
    }
}

/// Whether a repack writes a bitmap when not told: as `repack.writeBitmaps` says, else in a
/// bare repository if it can, as git's repack and gc decide.
pub fn writes_bitmaps(repo: &Repository) -> Result<BitmapChoice, ConfigError> {
    let bare = repo.work_tree().is_none();
    Ok(match repo.config().get_bool("repack.writebitmaps")? {
        Some(true) => BitmapChoice::Asked,
        Some(false) => BitmapChoice::Never,
        None if bare => BitmapChoice::IfPossible,
        None => BitmapChoice::Never,
    })
}
