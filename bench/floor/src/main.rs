//! The checkout floor: creates and writes the files a checkout would (sizes and modes from a
//! manifest of `git ls-tree -r -l` lines), split into contiguous halves (or N parts) over
//! threads, one fstat per file, reading no object. What a checkout costs beyond this is the
//! checkout's own work.
//!
//! Usage: checkout-floor <manifest> <destination> [threads]

use std::io::{BufRead, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let manifest = std::fs::File::open(&args[1]).expect("manifest");
    let dest = Path::new(&args[2]).to_owned();
    let threads: usize = args.get(3).map_or(2, |t| t.parse().expect("threads"));
    let mut files: Vec<(u32, u64, String)> = Vec::new();
    for line in std::io::BufReader::new(manifest).lines() {
        let line = line.expect("line");
        // "<mode> <type> <id> <size>\t<path>"
        let (meta, path) = line.split_once('\t').expect("tab");
        let parts: Vec<&str> = meta.split_whitespace().collect();
        if parts[1] != "blob" {
            continue;
        }
        let mode = u32::from_str_radix(parts[0], 8).expect("mode");
        let size = parts[3].parse().unwrap_or(0);
        files.push((mode, size, path.to_owned()));
    }
    let chunk = files.len().div_ceil(threads.max(1));
    let buf = vec![b'x'; 1 << 20];
    std::thread::scope(|s| {
        for part in files.chunks(chunk.max(1)) {
            let (dest, buf) = (&dest, &buf);
            s.spawn(move || {
                let mut made = std::collections::HashSet::new();
                for (mode, size, path) in part {
                    let full = dest.join(path);
                    let parent = full.parent().expect("parent").to_owned();
                    if made.insert(parent.clone()) {
                        std::fs::create_dir_all(&parent).expect("mkdir");
                    }
                    if *mode == 0o120000 {
                        let _ = std::os::unix::fs::symlink("target", &full);
                        continue;
                    }
                    let perm = if *mode == 0o100755 { 0o777 } else { 0o666 };
                    let mut file = std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .mode(perm)
                        .open(&full)
                        .expect("create");
                    let mut left = *size as usize;
                    while left > 0 {
                        let n = left.min(buf.len());
                        file.write_all(&buf[..n]).expect("write");
                        left -= n;
                    }
                    let _ = file.metadata().expect("fstat");
                }
            });
        }
    });
}
