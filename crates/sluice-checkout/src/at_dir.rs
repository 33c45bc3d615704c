//! File operations on a work tree's files named relative to their open directory.
//!
//! A path given whole makes the kernel walk every component from `/` on each call: for the
//! 100,000 files three levels below a work tree, an `lstat` by absolute path cost about twice
//! one by name in an open directory, and one relative to the current directory (as git names
//! them) half again as much (`bench/README.md` keeps the figures). A checkout takes files in
//! path order, so a worker keeps the work tree and the directory of its last files open and
//! names a file in the nearest.

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use sluice_index::Stat;
use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// How a directory is opened to name files in it: a path handle where the system has one
/// (nothing is read through it), else for reading.
#[cfg(any(target_os = "linux", target_os = "android"))]
const DIRECTORY_FLAGS: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const DIRECTORY_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// What `lstat` found at a path.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Found {
    /// The stat data as the index records it.
    pub stat: Stat,
    /// File, directory, symbolic link or other.
    pub kind: FileType,
    /// Whether its owner may execute it.
    pub executable: bool,
}

impl Found {
    fn from_raw(raw: &rustix::fs::Stat) -> Found {
        Found {
            stat: stat_from(raw),
            kind: FileType::from_raw_mode(raw.st_mode),
            executable: raw.st_mode & 0o100 != 0,
        }
    }

    pub(crate) fn is_dir(&self) -> bool {
        self.kind == FileType::Directory
    }
}

/// A work tree, held open, with the directory of the last files asked about.
pub(crate) struct AtDir<'r> {
    root: &'r Path,
    root_fd: Option<OwnedFd>,
    /// The directory of the last file, relative to `root`.
    dir: Vec<u8>,
    /// `dir`, opened once a second file in it was asked about.
    fd: Option<OwnedFd>,
}

impl<'r> AtDir<'r> {
    pub(crate) fn new(root: &'r Path) -> Self {
        AtDir {
            root,
            root_fd: None,
            dir: Vec::new(),
            fd: None,
        }
    }

    /// The work tree.
    pub(crate) fn root(&self) -> &'r Path {
        self.root
    }

    /// The whole path of `relative`, for messages.
    pub(crate) fn path_of(&self, relative: &[u8]) -> std::path::PathBuf {
        self.root.join(OsStr::from_bytes(relative))
    }

    /// A directory to name `relative` in, and its name there: the file's own directory when
    /// the last file was in it too, else the work tree (a switch replacing one file in each of
    /// 4,000 directories would open each for a single call).
    fn locate<'p>(&mut self, relative: &'p [u8]) -> io::Result<(&OwnedFd, &'p [u8])> {
        let flags = DIRECTORY_FLAGS;
        if self.root_fd.is_none() {
            self.root_fd = Some(rustix::fs::open(self.root, flags, Mode::empty())?);
        }
        let root_fd = self.root_fd.as_ref().expect("opened above");
        let Some(slash) = relative.iter().rposition(|&b| b == b'/') else {
            return Ok((root_fd, relative));
        };
        let (dir, name) = (&relative[..slash], &relative[slash + 1..]);
        if self.dir != dir {
            self.dir.clear();
            self.dir.extend_from_slice(dir);
            self.fd = None;
            return Ok((root_fd, relative));
        }
        if self.fd.is_none() {
            self.fd = Some(rustix::fs::openat(root_fd, dir, flags, Mode::empty())?);
        }
        Ok((self.fd.as_ref().expect("opened above"), name))
    }

    /// `lstat` of `relative`; `None` where nothing is.
    pub(crate) fn lstat(&mut self, relative: &[u8]) -> io::Result<Option<Found>> {
        let (fd, name) = match self.locate(relative) {
            Ok(located) => located,
            Err(e) if missing(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        match rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(raw) => Ok(Some(Found::from_raw(&raw))),
            Err(e) => {
                let e = io::Error::from(e);
                if missing(&e) {
                    Ok(None)
                } else {
                    Err(e)
                }
            }
        }
    }

    /// Removes the file or symbolic link at `relative`. `Ok(false)`: nothing was there;
    /// a directory there is an error of kind `IsADirectory`.
    pub(crate) fn unlink(&mut self, relative: &[u8]) -> io::Result<bool> {
        let (fd, name) = self.locate(relative)?;
        match rustix::fs::unlinkat(fd, name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::NOENT) => Ok(false),
            // POSIX allows EPERM for a directory; Linux says EISDIR.
            Err(rustix::io::Errno::ISDIR | rustix::io::Errno::PERM) => {
                match rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(raw) if FileType::from_raw_mode(raw.st_mode) == FileType::Directory => {
                        Err(io::ErrorKind::IsADirectory.into())
                    }
                    _ => Err(rustix::io::Errno::PERM.into()),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Creates the file `relative`, which must not exist, with `permissions` (before umask).
    pub(crate) fn create(&mut self, relative: &[u8], permissions: u32) -> io::Result<File> {
        let (fd, name) = self.locate(relative)?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
        let file = rustix::fs::openat(fd, name, flags, Mode::from_raw_mode(permissions))?;
        Ok(File::from(file))
    }

    /// Creates the symbolic link `relative` pointing at `target`.
    pub(crate) fn symlink(&mut self, target: &[u8], relative: &[u8]) -> io::Result<()> {
        let (fd, name) = self.locate(relative)?;
        Ok(rustix::fs::symlinkat(target, fd, name)?)
    }

    /// Creates the directory `relative`; one already there is fine.
    pub(crate) fn mkdir(&mut self, relative: &[u8]) -> io::Result<()> {
        let (fd, name) = self.locate(relative)?;
        match rustix::fs::mkdirat(fd, name, Mode::from_raw_mode(0o777)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// The stat data of an open file.
pub(crate) fn fstat(file: &File) -> io::Result<Stat> {
    Ok(stat_from(&rustix::fs::fstat(file.as_fd())?))
}

fn missing(e: &io::Error) -> bool {
    // ENOTDIR: a file where the path wants a directory; nothing is at the path either.
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// The stat data git keeps from the kernel's `stat` record, truncated to 32 bits as git does.
fn stat_from(raw: &rustix::fs::Stat) -> Stat {
    Stat {
        ctime: (raw.st_ctime as u32, raw.st_ctime_nsec as u32),
        mtime: (raw.st_mtime as u32, raw.st_mtime_nsec as u32),
        dev: raw.st_dev as u32,
        ino: raw.st_ino as u32,
        uid: raw.st_uid,
        gid: raw.st_gid,
        size: raw.st_size as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_relative_to_the_open_directory_as_whole_paths_do() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        std::fs::write(root.join("top"), b"1").expect("write");
        std::fs::write(root.join("a/b/f"), b"22").expect("write");
        std::os::unix::fs::symlink("b", root.join("a/link")).expect("symlink");
        let mut at = AtDir::new(root);
        for path in ["top", "a/b/f", "a/link", "a/b", "a/b/f", "top"] {
            let found = at.lstat(path.as_bytes()).expect("lstat").expect("there");
            let meta = std::fs::symlink_metadata(root.join(path)).expect("lstat");
            assert_eq!(found.stat, Stat::from_metadata(&meta), "{path}");
            assert_eq!(found.is_dir(), meta.is_dir(), "{path}");
            assert_eq!(
                found.kind == FileType::Symlink,
                meta.file_type().is_symlink()
            );
        }
        assert!(at.lstat(b"none").expect("lstat").is_none());
        assert!(at.lstat(b"no/such/dir").expect("lstat").is_none());
        assert!(at.lstat(b"top/under-a-file").expect("lstat").is_none());

        let mut file = at.create(b"a/b/new", 0o666).expect("create");
        std::io::Write::write_all(&mut file, b"333").expect("write");
        let stat = fstat(&file).expect("fstat");
        drop(file);
        let meta = std::fs::symlink_metadata(root.join("a/b/new")).expect("lstat");
        assert_eq!(stat, Stat::from_metadata(&meta));
        let again = at.create(b"a/b/new", 0o666).expect_err("exclusive");
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists);

        assert!(at.unlink(b"a/b/new").expect("unlink"));
        assert!(!at.unlink(b"a/b/new").expect("gone"));
        let dir_error = at.unlink(b"a/b").expect_err("a directory");
        assert_eq!(dir_error.kind(), io::ErrorKind::IsADirectory);
        at.symlink(b"target", b"a/l2").expect("symlink");
        assert_eq!(
            std::fs::read_link(root.join("a/l2")).expect("readlink"),
            Path::new("target")
        );
        at.mkdir(b"a/sub").expect("mkdir");
        at.mkdir(b"a/sub").expect("mkdir again");
        assert!(root.join("a/sub").is_dir());
    }
}
