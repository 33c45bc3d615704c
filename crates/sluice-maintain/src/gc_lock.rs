//! Who maintains a repository now. `gc.pid`: which process runs gc on a repository, so that a second gc (a scheduled one, an
//! automatic one after a push or a commit) leaves it alone, as git's gc does. The file holds
//! `<pid> <hostname>`; it is written through its lock and removed when the gc ends. A gc that
//! finds it younger than 12 hours and naming a live process of this machine, or any process of
//! another machine (sharing the repository over a network file system), does not run; an older
//! one, or one naming a process gone, is left over from a gc that died, and is taken over.
//! `gc.log`: what the last gc that ran in the background said. `objects/maintenance.lock`:
//! a `maintenance run` under way.

use sluice_odb::lockfile::{write_locked, LockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long a `gc.pid` is believed (git's 12 hours: a gc never takes that long).
const BELIEVED: Duration = Duration::from_secs(12 * 3600);

/// Who runs gc, as `gc.pid` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// The machine's host name.
    pub host: String,
    /// The process there.
    pub pid: u64,
}

/// `gc.pid` written for this process; removed when dropped.
#[derive(Debug)]
pub struct GcLock {
    path: PathBuf,
}

impl Drop for GcLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Writes `git_dir`'s `gc.pid` for this process, unless (without `force`) it names a gc still
/// running: then `Err(running)`, and the file is left as it is.
pub fn lock_for_gc(git_dir: &Path, force: bool) -> Result<Result<GcLock, Running>, LockError> {
    let path = git_dir.join("gc.pid");
    let host = host_name();
    if !force {
        if let Some(running) = running(&path, &host) {
            return Ok(Err(running));
        }
    }
    let text = format!("{} {host}", std::process::id());
    write_locked(&path, text.as_bytes(), false)?;
    Ok(Ok(GcLock { path }))
}

/// The gc `gc.pid` names, if it is still believed to run.
fn running(path: &Path, our_host: &str) -> Option<Running> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let age = SystemTime::now()
        .duration_since(modified)
        .unwrap_or_default();
    if age > BELIEVED {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let mut words = text.split_whitespace();
    let pid: u64 = words.next()?.parse().ok()?;
    let host = words.next()?.to_owned();
    let alive = host != our_host || process_exists(pid);
    alive.then_some(Running { host, pid })
}

/// Whether process `pid` of this machine exists: its `/proc` entry on Linux; elsewhere it is
/// believed to (the file's age still expires it).
fn process_exists(pid: u64) -> bool {
    let proc = Path::new("/proc");
    match proc.join("self").exists() {
        true => proc.join(pid.to_string()).exists(),
        false => true,
    }
}

/// This machine's host name, as `gethostname` gives it (`unknown` when it cannot be read).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// `gc.log`: what the last gc that ran detached said, kept for the next gc to find.
pub fn gc_log(git_dir: &Path) -> PathBuf {
    git_dir.join("gc.log")
}

/// What the last gc that ran detached said (its `gc.log`), when it said anything and is not
/// older than `expiry` (`gc.logExpiry`): git's automatic gc then runs no more until the file
/// is removed, as it would most likely fail the same way.
pub fn last_gc_error(git_dir: &Path, expiry: SystemTime) -> std::io::Result<Option<String>> {
    let path = gc_log(git_dir);
    let modified = match std::fs::metadata(&path).and_then(|m| m.modified()) {
        Ok(modified) => modified,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if modified < expiry {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path)?;
    Ok((!text.is_empty()).then_some(text))
}

/// Takes `gc.log.lock` for the standard error of a gc about to run detached; `None` when
/// another detached gc is writing its log (it does the work). Its path with the file.
pub fn start_gc_log(git_dir: &Path) -> Option<(PathBuf, std::fs::File)> {
    let (log, file) = sluice_odb::lockfile::create_lock(&gc_log(git_dir));
    Some((log, file.ok()?))
}

/// Forgets what an earlier detached gc said: a gc in the foreground that went through clears
/// it, as git's does.
pub fn clear_gc_log(git_dir: &Path) {
    let _ = std::fs::remove_file(gc_log(git_dir));
}

/// The end of a gc that ran detached with its standard error in `log` (`gc.log.lock`): what it
/// said becomes `gc.log`; when it said nothing, `gc.log` and the lock go.
pub fn keep_gc_log(log: &Path) -> std::io::Result<()> {
    let said = std::fs::metadata(log)?.len() > 0;
    let kept = log.with_file_name("gc.log");
    match said {
        true => std::fs::rename(log, kept),
        false => {
            match std::fs::remove_file(&kept) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            std::fs::remove_file(log)
        }
    }
}

/// `<objects>/maintenance.lock`, held while `maintenance run` runs, so that two runs (a
/// scheduled one, one after a commit) never work on the repository at once; removed when
/// dropped.
#[derive(Debug)]
pub struct MaintenanceLock {
    path: PathBuf,
}

impl Drop for MaintenanceLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Takes the maintenance lock of the object directory `objects`; `Err(its path)` when another
/// run holds it (git then skips maintenance).
pub fn lock_for_maintenance(objects: &Path) -> std::io::Result<Result<MaintenanceLock, PathBuf>> {
    let (path, file) = sluice_odb::lockfile::create_lock(&objects.join("maintenance"));
    match file {
        Ok(_) => Ok(Ok(MaintenanceLock { path })),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(Err(path)),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gc_pid_of_a_live_process_holds_and_one_of_a_dead_process_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock_for_gc(dir.path(), false).unwrap().unwrap();
        let said = std::fs::read_to_string(dir.path().join("gc.pid")).unwrap();
        assert_eq!(said, format!("{} {}", std::process::id(), host_name()));
        // This process is alive: a second gc is refused, unless forced.
        let running = lock_for_gc(dir.path(), false).unwrap().unwrap_err();
        assert_eq!(running.pid, u64::from(std::process::id()));
        drop(held);
        assert!(!dir.path().join("gc.pid").exists());
        // A pid no process has (beyond Linux's largest) is a gc that died.
        let dead = format!("{} {}", u64::from(u32::MAX) + 1, host_name());
        std::fs::write(dir.path().join("gc.pid"), dead).unwrap();
        assert!(lock_for_gc(dir.path(), false).unwrap().is_ok());
    }
}
