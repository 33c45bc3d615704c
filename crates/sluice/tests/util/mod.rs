//! Test helpers: hermetic git and sluice invocations in temporary directories, repositories
//! built with real git, and a pack builder for packs git will not make (hostile or unusual).

#![allow(dead_code)]

pub mod pack_builder;
pub mod seaweed;
pub mod terminal;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The gits to test against: Debian's and the newer one, whichever are installed
/// (`SLUICE_TEST_GITS` overrides, colon-separated).
pub fn gits() -> Vec<PathBuf> {
    if let Ok(list) = std::env::var("SLUICE_TEST_GITS") {
        return std::env::split_paths(&list).collect();
    }
    let found: Vec<PathBuf> = ["/usr/bin/git", "/usr/local/bin/git"]
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect();
    assert!(!found.is_empty(), "no git installed");
    found
}

/// The newest git available, for tests that need only one.
pub fn git_bin() -> PathBuf {
    gits().pop().expect("a git")
}

/// A temporary workspace with a hermetic environment: its own HOME, no system config, fixed
/// identities and dates.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub git: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        Self::with_git(git_bin())
    }

    pub fn with_git(git: PathBuf) -> Env {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("home")).expect("home");
        Env { dir, git }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    fn apply(&self, command: &mut Command) {
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path().join("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "A U Thor")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_AUTHOR_DATE", "1700000000 +0000")
            .env("GIT_COMMITTER_NAME", "C O Mitter")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_COMMITTER_DATE", "1700000000 +0000")
            .env("LANG", "C")
            .env("LC_ALL", "C");
    }

    pub fn git_command(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(&self.git);
        self.apply(&mut command);
        command.current_dir(cwd).args(args);
        command
    }

    /// Runs git, which must succeed; returns stdout.
    pub fn git(&self, cwd: &Path, args: &[&str]) -> Vec<u8> {
        let output = run_with_input(self.git_command(cwd, args), b"");
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    }

    /// Runs git with `input` on stdin; returns the whole output, success or not.
    pub fn git_with_input(&self, cwd: &Path, args: &[&str], input: &[u8]) -> Output {
        run_with_input(self.git_command(cwd, args), input)
    }

    /// The major and minor version of this environment's git, for the few places where
    /// git's own behaviour changed between the installed versions.
    pub fn git_version(&self) -> (u32, u32) {
        let out = stdout(&self.git_with_input(self.path(), &["--version"], b""));
        let mut numbers = out
            .trim()
            .trim_start_matches("git version ")
            .split('.')
            .map(|part| part.parse::<u32>().unwrap_or(0));
        (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0))
    }

    pub fn sluice_command(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sluice"));
        self.apply(&mut command);
        command.current_dir(cwd).args(args);
        command
    }

    /// Runs sluice with `input` on stdin.
    pub fn sluice(&self, cwd: &Path, args: &[&str], input: &[u8]) -> Output {
        run_with_input(self.sluice_command(cwd, args), input)
    }

    /// The command for sluice or, with the same arguments and environment, for git: the two
    /// sides of a test that compares them.
    pub fn sluice_or_git_command(&self, sluice: bool, cwd: &Path, args: &[&str]) -> Command {
        if sluice {
            self.sluice_command(cwd, args)
        } else {
            self.git_command(cwd, args)
        }
    }

    /// Runs [`Self::sluice_or_git_command`] with nothing on stdin.
    pub fn sluice_or_git(&self, sluice: bool, cwd: &Path, args: &[&str]) -> Output {
        run_with_input(self.sluice_or_git_command(sluice, cwd, args), b"")
    }

    /// Makes a repository with `git init` at `name`.
    pub fn init(&self, name: &str, bare: bool) -> PathBuf {
        let path = self.path().join(name);
        let path_str = path.to_str().expect("utf-8 temp path");
        if bare {
            self.git(self.path(), &["init", "-q", "--bare", path_str]);
        } else {
            self.git(self.path(), &["init", "-q", path_str]);
        }
        path
    }

    /// Commits `count` versions of the file `file` in the work repository `repo`, the i-th
    /// holding `i` and a newline, each commit named `c<i>`.
    pub fn commit_versions(&self, repo: &Path, file: &str, count: usize) {
        for i in 0..count {
            std::fs::write(repo.join(file), format!("{i}\n")).unwrap();
            self.git(repo, &["add", file]);
            self.git(repo, &["commit", "-q", "-m", &format!("c{i}")]);
        }
    }

    /// Feeds a fast-import stream to the repository at `repo`.
    pub fn fast_import(&self, repo: &Path, stream: &[u8]) {
        let output = self.git_with_input(repo, &["fast-import", "--quiet"], stream);
        assert!(
            output.status.success(),
            "fast-import failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// A bare clone of `repo` into `name` by `sluice clone` from its `file://` URL, which must
/// succeed and pass `git fsck --strict`; returns where it is.
pub fn sluice_clone_checked(env: &Env, repo: &Path, name: &str) -> PathBuf {
    let clone = env.path().join(name);
    let url = format!("file://{}", repo.display());
    let out = env.sluice(
        env.path(),
        &["clone", "-q", "--bare", &url, clone.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    env.git(&clone, &["fsck", "--strict"]);
    clone
}

/// Writes an executable shell script at `path` (a stand-in for a program: ssh, a hook).
pub fn script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// How long any command in a test may run: a hang is a failure, not a stuck test run.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(300);

pub fn run_with_input(mut command: Command, input: &[u8]) -> Output {
    use std::io::{Read, Write};
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    // Write and read from threads so a child that stops reading early, or fills a pipe,
    // cannot deadlock the test.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut out_pipe = child.stdout.take().expect("stdout");
    let mut err_pipe = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out_pipe.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("command {command:?} did not finish within {DEADLINE:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let _ = writer.join();
    Output {
        status,
        stdout: out_reader.join().expect("stdout reader"),
        stderr: err_reader.join().expect("stderr reader"),
    }
}

/// A fast-import stream builder for repositories with chosen history.
#[derive(Default)]
pub struct FastImport {
    out: Vec<u8>,
    marks: usize,
    time: u64,
}

impl FastImport {
    pub fn new() -> Self {
        FastImport {
            out: Vec::new(),
            marks: 0,
            time: 1_700_000_000,
        }
    }

    /// A commit on `branch` setting `files` (path, mode, content); returns its mark.
    pub fn commit(&mut self, branch: &str, message: &str, files: &[(&str, &str, &[u8])]) -> usize {
        use std::io::Write;
        self.marks += 1;
        self.time += 60;
        let mark = self.marks;
        let out = &mut self.out;
        writeln!(out, "commit refs/heads/{branch}").unwrap();
        writeln!(out, "mark :{mark}").unwrap();
        writeln!(out, "author A <a@example.com> {} +0000", self.time).unwrap();
        writeln!(out, "committer C <c@example.com> {} +0000", self.time).unwrap();
        writeln!(out, "data {}\n{message}", message.len()).unwrap();
        for (path, mode, content) in files {
            writeln!(out, "M {mode} inline {path}").unwrap();
            writeln!(out, "data {}", content.len()).unwrap();
            out.extend_from_slice(content);
            out.push(b'\n');
        }
        out.push(b'\n');
        mark
    }

    /// A lightweight tag.
    pub fn tag(&mut self, name: &str, mark: usize) {
        use std::io::Write;
        writeln!(self.out, "reset refs/tags/{name}\nfrom :{mark}\n").unwrap();
    }

    pub fn finish(&self) -> &[u8] {
        &self.out
    }
}

/// Deterministic pseudo-random bytes (xorshift), for incompressible blobs.
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// Lines of text that change a little with `version`, so packs get deltas.
pub fn text(version: usize, lines: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for line in 0..lines {
        let tag = if line % 17 == version % 17 {
            version
        } else {
            0
        };
        out.extend_from_slice(format!("line {line} of the file, revision {tag}\n").as_bytes());
    }
    out
}

/// The files in a directory (names only), sorted.
pub fn list_dir(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A message names each cause once: "a: b: b" means a cause was printed twice.
pub fn assert_says_each_cause_once(message: &str) {
    let parts: Vec<&str> = message.trim_end().split(": ").collect();
    for len in 1..=parts.len() / 2 {
        for at in 0..=parts.len() - 2 * len {
            assert!(
                parts[at..at + len] != parts[at + len..at + 2 * len],
                "a cause repeats in: {message}"
            );
        }
    }
}

/// The Python interpreter itself, found once through `python3` on the PATH. A version manager's
/// shim (pyenv's is a bash script) took 2.4 s to start on a loaded machine, longer than the
/// 2-second server timeouts some tests set for their stand-in servers.
pub fn python() -> &'static str {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 on the PATH");
        let path = String::from_utf8(out.stdout).expect("a UTF-8 path");
        match path.trim() {
            "" => "python3".to_owned(),
            path => path.to_owned(),
        }
    })
}

/// How many files of `repo`'s pack directory (a bare repository's) end in `.<extension>`.
pub fn pack_files(repo: &Path, extension: &str) -> usize {
    std::fs::read_dir(repo.join("objects/pack"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == extension)
        })
        .count()
}

/// Runs `sluice <args>` in `repo` and kills it after `delay_ms`: git must then find the
/// repository complete and its refs unchanged, and the same command run to its end succeed.
pub fn kill_and_recover(env: &Env, repo: &Path, args: &[&str], delay_ms: u64) {
    let before = env.git(repo, &["for-each-ref"]);
    let mut child = env.sluice_command(repo, args).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(delay_ms));
    let _ = child.kill();
    let _ = child.wait();
    let fsck = env
        .git_command(repo, &["fsck", "--strict"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&fsck.stderr).into_owned();
    assert!(
        fsck.status.success(),
        "{args:?} killed after {delay_ms} ms: {said}"
    );
    assert_eq!(env.git(repo, &["for-each-ref"]), before);
    let out = env.sluice(repo, args, b"");
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{args:?} after a kill at {delay_ms} ms: {said}"
    );
    env.git(repo, &["fsck", "--strict"]);
}

/// The names of the files in `dir`, sorted.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Copies the directory `from` to `to` as `cp -a` does (modes, times and links kept): the
/// twin copies of a repository that git and Sluice then work on side by side.
pub fn copy_tree(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success(), "cp -a {from:?} {to:?}");
}

/// Exit code, stdout and stderr of a push, without the line git's transport adds when it
/// abandons a connection ("the remote end hung up unexpectedly"), which Sluice does not copy.
pub fn said_by_push(out: &Output) -> (Option<i32>, String, String) {
    let stderr = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| *l != "fatal: the remote end hung up unexpectedly")
        .map(|l| format!("{l}\n"))
        .collect();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), stdout, stderr)
}

/// `<env>/exec`, holding links to git's programs but `git` and those `except` (for the caller
/// to write), and git's own exec path.
pub fn exec_dir(env: &Env, except: &[&str]) -> (PathBuf, PathBuf) {
    let real = stdout(&env.git_with_input(env.path(), &["--exec-path"], b""));
    let real = PathBuf::from(real.trim());
    let exec = env.path().join("exec");
    std::fs::create_dir(&exec).unwrap();
    for entry in std::fs::read_dir(&real).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name != "git" && !except.iter().any(|e| name == *e) {
            std::os::unix::fs::symlink(entry.path(), exec.join(&name)).unwrap();
        }
    }
    (exec, real)
}

/// An exec path for git (`GIT_EXEC_PATH`) whose `git` runs Sluice for the commands `ours`, as
/// git's own commands call them (`git pack-objects …`, `git maintenance run …`), and git for
/// the rest; each call routed to Sluice is logged, a line each, in `<env>/calls`.
pub fn stand_in(env: &Env, ours: &[&str]) -> PathBuf {
    let (exec, real) = exec_dir(env, &[]);
    let text = format!(
        "#!/bin/sh\ncase \"$1\" in\n  {ours})\n    echo \"$*\" >> '{log}'\n    \
         exec '{sluice}' \"$@\" ;;\nesac\nexec '{git}' \"$@\"\n",
        ours = ours.join("|"),
        log = env.path().join("calls").display(),
        sluice = env!("CARGO_BIN_EXE_sluice"),
        git = real.join("git").display(),
    );
    script(&exec.join("git"), &text);
    exec
}

/// Writes `count` small blobs no ref reaches into `repo` as loose objects (with git), so that
/// `gc --auto` finds loose objects in the fan-out directory it samples.
pub fn unreachable_blobs(env: &Env, repo: &Path, count: usize) {
    // `hash-object --stdin-paths` reads files: each blob is written to one first.
    let dir = tempfile::tempdir_in(env.path()).unwrap();
    let mut paths = String::new();
    for i in 0..count {
        let path = dir.path().join(i.to_string());
        std::fs::write(&path, format!("unreachable {i}\n")).unwrap();
        paths.push_str(&format!("{}\n", path.display()));
    }
    let args = ["hash-object", "-w", "--stdin-paths"];
    let out = env.git_with_input(repo, &args, paths.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
}

/// One pkt-line of `reader`, as text (`None`: a flush or delimiter).
pub fn read_pkt(reader: &mut impl std::io::Read) -> Option<String> {
    let mut size = [0u8; 4];
    reader.read_exact(&mut size).unwrap();
    let size = usize::from_str_radix(std::str::from_utf8(&size).unwrap(), 16).unwrap();
    if size < 4 {
        return None;
    }
    let mut data = vec![0u8; size - 4];
    reader.read_exact(&mut data).unwrap();
    Some(String::from_utf8_lossy(&data).into_owned())
}

/// `text` as one pkt-line.
pub fn pkt(text: &str) -> String {
    format!("{:04x}{text}", text.len() + 4)
}
