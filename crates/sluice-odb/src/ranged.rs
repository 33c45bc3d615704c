//! Packs whose bytes are read from elsewhere on demand (a store's ranged GETs): a node serving
//! a large repository need not download a pack whole before answering a fetch that reads a few
//! of its objects.
//!
//! On disk, such a pack is a sparse `.pack` file of its full size, filled chunk by chunk as its
//! bytes are read, beside a `.ranged` file that says where the bytes come from and which
//! chunks are here:
//!
//! ```text
//! sluice-ranged 1 <chunk size> <pack size> <inode:birth of the .pack> <key>\n   (to 512 bytes)
//! one byte per chunk: 0 missing, 1 here
//! ```
//!
//! A chunk is marked here only after its bytes are written, so a reader never takes the zeros
//! of a hole for data. Several processes may share the files: each re-reads the marks of a
//! chunk it lacks before fetching it, and fetching one twice only writes the same bytes twice.
//! Every read of such a pack goes through [`RangedFile::ensure`] first.

use std::fs::{File, OpenOptions};
use std::io;
use std::ops::Range;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Where the bytes of ranged packs come from.
pub trait PackSource: Send + Sync + std::fmt::Debug {
    /// The bytes `range` of the pack stored as `key`: exactly that many, or an error.
    fn read_range(&self, key: &str, range: Range<u64>) -> io::Result<Vec<u8>>;
}

/// The length of the `.ranged` file's header.
const HEADER_LEN: u64 = 512;
/// What the header starts with.
const MAGIC: &str = "sluice-ranged 1";

/// The `.ranged` file of the pack at `pack` (its `.pack` path).
pub fn marks_path(pack: &Path) -> PathBuf {
    pack.with_extension("ranged")
}

/// Makes `pack` a ranged pack of `size` bytes whose bytes come from `key`, in chunks of
/// `chunk` bytes: an empty sparse file and its marks, which name the file they belong to (its
/// inode), so that a pair never mixes two makings. When `pack` exists already (another process
/// made it), it is left as it is.
pub fn create(pack: &Path, key: &str, size: u64, chunk: u64) -> io::Result<()> {
    if chunk == 0 || key.contains('\n') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "bad ranged pack",
        ));
    }
    let temp = |path: &Path| {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".tmp-{}", std::process::id()));
        PathBuf::from(name)
    };
    let (data, marks) = (temp(pack), temp(&marks_path(pack)));
    crate::tempfiles::register(&data);
    crate::tempfiles::register(&marks);
    let made = make_pair(pack, (&data, &marks), key, (size, chunk));
    for path in [&data, &marks] {
        let _ = std::fs::remove_file(path);
        crate::tempfiles::forget(path);
    }
    made
}

/// [`create`] through the temporary files `data` and `marks`.
fn make_pair(
    pack: &Path,
    (data, marks): (&Path, &Path),
    key: &str,
    (size, chunk): (u64, u64),
) -> io::Result<()> {
    let file = File::create(data)?;
    file.set_len(size)?;
    let identity = identity(&file.metadata()?);
    let mut header = format!("{MAGIC} {chunk} {size} {identity} {key}\n").into_bytes();
    if header.len() as u64 > HEADER_LEN {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "key too long"));
    }
    header.resize(HEADER_LEN as usize, b' ');
    header.resize((HEADER_LEN + size.div_ceil(chunk)) as usize, 0);
    std::fs::write(marks, header)?;
    // Only one maker wins the name; the marks are its.
    match std::fs::hard_link(data, pack) {
        Ok(()) => std::fs::rename(marks, marks_path(pack)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// A ranged pack open for reading.
#[derive(Debug)]
pub struct RangedFile {
    /// The `.pack` file, to fill.
    data: File,
    /// The `.ranged` file, to read and set marks in.
    marks: File,
    key: String,
    chunk: u64,
    size: u64,
    /// Chunks known to be here (a chunk once here stays).
    here: Vec<AtomicBool>,
    /// One fetch at a time per pack in this process.
    fetching: Mutex<()>,
    source: Arc<dyn PackSource>,
}

impl RangedFile {
    /// The ranged pack at `pack`, if it is one (its `.ranged` file exists), reading what it
    /// lacks from `source`.
    pub fn open(pack: &Path, source: &Arc<dyn PackSource>) -> io::Result<Option<RangedFile>> {
        let marks = match OpenOptions::new()
            .read(true)
            .write(true)
            .open(marks_path(pack))
        {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut header = vec![0u8; HEADER_LEN as usize];
        marks.read_exact_at(&mut header, 0)?;
        let (chunk, size, made, key) = parse_header(&header).ok_or_else(|| {
            let why = format!("{}: not a ranged pack's marks", marks_path(pack).display());
            io::Error::new(io::ErrorKind::InvalidData, why)
        })?;
        let data = OpenOptions::new().read(true).write(true).open(pack)?;
        let meta = data.metadata()?;
        // Marks of another making of the file would call its holes here.
        if meta.len() != size || identity(&meta) != made {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: not the file its marks describe", pack.display()),
            ));
        }
        let chunks = size.div_ceil(chunk) as usize;
        // What other readers fetched before: a pack already filled costs no read of its marks
        // per object.
        let mut here = vec![0u8; chunks];
        marks.read_exact_at(&mut here, HEADER_LEN)?;
        Ok(Some(RangedFile {
            data,
            marks,
            key,
            chunk,
            size,
            here: (here.into_iter())
                .map(|m| AtomicBool::new(m != 0))
                .collect(),
            fetching: Mutex::new(()),
            source: Arc::clone(source),
        }))
    }

    /// Makes the bytes `range` of the pack present, fetching the chunks that are not, in one
    /// read per run of missing chunks.
    pub fn ensure(&self, range: Range<u64>) -> io::Result<()> {
        let range = range.start.min(self.size)..range.end.min(self.size);
        if range.is_empty() {
            return Ok(());
        }
        let chunks = (range.start / self.chunk)..range.end.div_ceil(self.chunk);
        if chunks
            .clone()
            .all(|c| self.here[c as usize].load(Ordering::Acquire))
        {
            return Ok(());
        }
        let _one = self.fetching.lock().unwrap_or_else(|e| e.into_inner());
        let mut marks = vec![0u8; (chunks.end - chunks.start) as usize];
        self.marks
            .read_exact_at(&mut marks, HEADER_LEN + chunks.start)?;
        let missing = |c: u64| {
            !self.here[c as usize].load(Ordering::Acquire)
                && marks[(c - chunks.start) as usize] == 0
        };
        let mut c = chunks.start;
        while c < chunks.end {
            if !missing(c) {
                self.here[c as usize].store(true, Ordering::Release);
                c += 1;
                continue;
            }
            let run_start = c;
            while c < chunks.end && missing(c) {
                c += 1;
            }
            self.fetch(run_start..c)?;
        }
        Ok(())
    }

    /// Fetches the chunks `chunks`, writes them and marks them here.
    fn fetch(&self, chunks: Range<u64>) -> io::Result<()> {
        let bytes = (chunks.start * self.chunk)..(chunks.end * self.chunk).min(self.size);
        let data = self.source.read_range(&self.key, bytes.clone())?;
        if data.len() as u64 != bytes.end - bytes.start {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: {} bytes for a range of {:?}",
                    self.key,
                    data.len(),
                    bytes
                ),
            ));
        }
        self.data.write_all_at(&data, bytes.start)?;
        let ones = vec![1u8; (chunks.end - chunks.start) as usize];
        self.marks.write_all_at(&ones, HEADER_LEN + chunks.start)?;
        for c in chunks {
            self.here[c as usize].store(true, Ordering::Release);
        }
        Ok(())
    }
}

/// Which file this is: its inode and when it was made (an inode number is reused once a file
/// is removed).
fn identity(meta: &std::fs::Metadata) -> String {
    let born = (meta.created().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{}:{born}", meta.ino())
}

/// The chunk size, pack size, identity of the `.pack` and key of a `.ranged` header.
fn parse_header(header: &[u8]) -> Option<(u64, u64, String, String)> {
    let line = header.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let rest = line.strip_prefix(MAGIC)?.strip_prefix(' ')?;
    let mut fields = rest.splitn(4, ' ');
    let chunk: u64 = fields.next()?.parse().ok().filter(|&c| c > 0)?;
    let size: u64 = fields.next()?.parse().ok()?;
    let made = fields.next()?.to_owned();
    let key = fields.next()?.to_owned();
    Some((chunk, size, made, key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    const KEY: &str = "repos/p.git/pack-1.pack";

    /// A source that serves `bytes` and counts its reads.
    #[derive(Debug)]
    struct Served {
        bytes: Vec<u8>,
        reads: AtomicUsize,
    }

    impl PackSource for Served {
        fn read_range(&self, key: &str, range: Range<u64>) -> io::Result<Vec<u8>> {
            assert_eq!(key, KEY);
            self.reads.fetch_add(1, Ordering::Relaxed);
            Ok(self.bytes[range.start as usize..range.end as usize].to_vec())
        }
    }

    #[test]
    fn chunks_are_fetched_once_in_runs_and_seen_by_a_second_reader() {
        let dir = tempfile::tempdir().unwrap();
        let pack = dir.path().join("pack-1.pack");
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8 + 1).collect();
        create(&pack, KEY, bytes.len() as u64, 1000).unwrap();
        let served = Arc::new(Served {
            bytes: bytes.clone(),
            reads: AtomicUsize::new(0),
        });
        let source: Arc<dyn PackSource> = served.clone();
        let ranged = RangedFile::open(&pack, &source).unwrap().unwrap();
        ranged.ensure(2500..2600).unwrap();
        assert_eq!(served.reads.load(Ordering::Relaxed), 1);
        let on_disk = std::fs::read(&pack).unwrap();
        assert_eq!(on_disk[2000..3000], bytes[2000..3000]);
        assert!(
            on_disk[..2000].iter().all(|&b| b == 0),
            "only the chunk asked for"
        );
        // Chunks 1 to 4, of which 2 is here: two runs, two reads.
        ranged.ensure(1500..4500).unwrap();
        assert_eq!(served.reads.load(Ordering::Relaxed), 3);
        // Another reader (as another process) takes the marks and reads nothing again.
        let again = RangedFile::open(&pack, &source).unwrap().unwrap();
        again.ensure(1000..5000).unwrap();
        assert_eq!(served.reads.load(Ordering::Relaxed), 3);
        again.ensure(0..10_000).unwrap();
        assert_eq!(std::fs::read(&pack).unwrap(), bytes);
    }

    #[test]
    fn a_source_that_returns_too_little_marks_nothing() {
        #[derive(Debug)]
        struct Short;
        impl PackSource for Short {
            fn read_range(&self, _: &str, _: Range<u64>) -> io::Result<Vec<u8>> {
                Ok(vec![7; 3])
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let pack = dir.path().join("pack-1.pack");
        create(&pack, "k", 5000, 1000).unwrap();
        let source: Arc<dyn PackSource> = Arc::new(Short);
        let ranged = RangedFile::open(&pack, &source).unwrap().unwrap();
        assert!(ranged.ensure(0..10).is_err());
        let marks = std::fs::read(marks_path(&pack)).unwrap();
        assert!(marks[HEADER_LEN as usize..].iter().all(|&b| b == 0));
    }

    #[test]
    fn a_second_making_leaves_the_first_and_stray_marks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let pack = dir.path().join("pack-1.pack");
        create(&pack, KEY, 5000, 1000).unwrap();
        let source: Arc<dyn PackSource> = Arc::new(Served {
            bytes: vec![9; 5000],
            reads: AtomicUsize::new(0),
        });
        RangedFile::open(&pack, &source)
            .unwrap()
            .unwrap()
            .ensure(0..10)
            .unwrap();
        create(&pack, KEY, 5000, 1000).unwrap();
        assert_eq!(
            std::fs::read(&pack).unwrap()[..10],
            [9; 10],
            "the first making stays"
        );
        let names = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(names, 2, "no temporary file left");
        // The file made again (a cache wiped but for its marks): the marks are not its.
        std::fs::remove_file(&pack).unwrap();
        File::create(&pack).unwrap().set_len(5000).unwrap();
        assert!(RangedFile::open(&pack, &source).is_err());
    }

    #[test]
    fn a_plain_pack_is_not_ranged() {
        let dir = tempfile::tempdir().unwrap();
        let pack = dir.path().join("pack-1.pack");
        std::fs::write(&pack, b"PACK").unwrap();
        let source: Arc<dyn PackSource> = Arc::new(Served {
            bytes: Vec::new(),
            reads: AtomicUsize::new(0),
        });
        assert!(RangedFile::open(&pack, &source).unwrap().is_none());
    }
}
