//! The checkout floor: creates and writes the files a checkout would (sizes and modes from a
//! manifest of `git ls-tree -r -l` lines), split into contiguous parts over threads, one fstat
//! per file, reading no object. What a checkout costs beyond this is the checkout's own work.
//!
//! With `--from <manifest>`, the floor of a switch instead: the destination is a work tree of
//! that manifest's tree, and each file of the target is looked at with an `lstat` where both
//! trees hold the same blob (as a forced checkout must, to find local changes), or unlinked,
//! created and written where they differ; files only the old tree has are unlinked. Both
//! manifests are in git's order, so one merge pairs them.
//!
//! Every call is made relative to the file's directory, held open, as Sluice makes them.
//!
//! Usage: checkout-floor <manifest> <destination> [threads] [--from <manifest>]

use rustix::fs::{AtFlags, Mode, OFlags};
use std::io::BufRead;
use std::os::fd::OwnedFd;
use std::path::Path;

/// One blob of a manifest.
struct Entry {
    mode: u32,
    id: String,
    size: u64,
    path: String,
}

/// What the floor does to one path.
enum Step<'a> {
    Write(&'a Entry),
    Look(&'a Entry),
    Remove(&'a Entry),
}

fn read_manifest(path: &str) -> Vec<Entry> {
    let manifest = std::fs::File::open(path).expect("manifest");
    let mut files = Vec::new();
    for line in std::io::BufReader::new(manifest).lines() {
        let line = line.expect("line");
        // "<mode> <type> <id> <size>\t<path>"
        let (meta, path) = line.split_once('\t').expect("tab");
        let parts: Vec<&str> = meta.split_whitespace().collect();
        if parts[1] != "blob" {
            continue;
        }
        files.push(Entry {
            mode: u32::from_str_radix(parts[0], 8).expect("mode"),
            id: parts[2].to_owned(),
            size: parts[3].parse().unwrap_or(0),
            path: path.to_owned(),
        });
    }
    files
}

/// The steps of a switch from `old` to `new`, both in git's order.
fn switch_steps<'a>(old: &'a [Entry], new: &'a [Entry]) -> Vec<Step<'a>> {
    let (mut i, mut j) = (0, 0);
    let mut steps = Vec::with_capacity(new.len());
    while i < old.len() || j < new.len() {
        let order = match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) => a.path.cmp(&b.path),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => {
                steps.push(Step::Remove(&old[i]));
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                steps.push(Step::Write(&new[j]));
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                let same = old[i].mode == new[j].mode && old[i].id == new[j].id;
                steps.push(if same {
                    Step::Look(&new[j])
                } else {
                    Step::Write(&new[j])
                });
                i += 1;
                j += 1;
            }
        }
    }
    steps
}

/// One thread's open directory: the last one a file was in.
struct Here<'d> {
    root: &'d Path,
    dir: String,
    fd: Option<OwnedFd>,
}

impl Here<'_> {
    /// The directory of `path`, opened (and made, when `make`), and the file's name.
    fn enter<'p>(&mut self, path: &'p str, make: bool) -> (&OwnedFd, &'p str) {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        if self.fd.is_none() || self.dir != dir {
            let full = self.root.join(dir);
            if make {
                std::fs::create_dir_all(&full).expect("mkdir");
            }
            let fd = rustix::fs::open(&full, OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
                .expect("open directory");
            self.fd = Some(fd);
            self.dir = dir.to_owned();
        }
        (self.fd.as_ref().expect("opened"), name)
    }
}

fn run(step: &Step, here: &mut Here, switching: bool, buf: &[u8]) {
    match step {
        Step::Look(entry) => {
            let (dir, name) = here.enter(&entry.path, false);
            let _ = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW);
        }
        Step::Remove(entry) => {
            let (dir, name) = here.enter(&entry.path, false);
            let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
        }
        Step::Write(entry) => {
            let (dir, name) = here.enter(&entry.path, true);
            if switching {
                // Replaced, never written through, as git does.
                let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
            }
            if entry.mode == 0o120000 {
                let _ = rustix::fs::symlinkat("target", dir, name);
                return;
            }
            let perm = if entry.mode == 0o100755 { 0o777 } else { 0o666 };
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
            let file =
                rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(perm)).expect("create");
            let mut left = entry.size as usize;
            while left > 0 {
                let n = rustix::io::write(&file, &buf[..left.min(buf.len())]).expect("write");
                left -= n;
            }
            let _ = rustix::fs::fstat(&file).expect("fstat");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let files = read_manifest(&args[1]);
    let dest = Path::new(&args[2]).to_owned();
    let threads: usize = args.get(3).map_or(2, |t| t.parse().expect("threads"));
    let from = match args.get(4).map(String::as_str) {
        Some("--from") => Some(read_manifest(&args[5])),
        _ => None,
    };
    let steps: Vec<Step> = match &from {
        None => files.iter().map(Step::Write).collect(),
        Some(old) => switch_steps(old, &files),
    };
    let switching = from.is_some();
    let chunk = steps.len().div_ceil(threads.max(1));
    let buf = vec![b'x'; 1 << 20];
    std::thread::scope(|s| {
        for part in steps.chunks(chunk.max(1)) {
            let (dest, buf) = (&dest, &buf);
            s.spawn(move || {
                let mut here = Here {
                    root: dest,
                    dir: String::new(),
                    fd: None,
                };
                for step in part {
                    run(step, &mut here, switching, buf);
                }
            });
        }
    });
}
