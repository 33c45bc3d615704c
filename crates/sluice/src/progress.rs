//! Progress on stderr as git shows it, and `SLUICE_TRACE_PERFORMANCE` phase timing.

use sluice_object::progress::{Progress, ProgressSink, TextProgress};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Instant;

/// When to show progress, from `-q`, `-v`, `--progress` and whether stderr is a terminal.
pub fn enabled(requested: bool, forced: bool) -> bool {
    forced || (requested && std::io::stderr().is_terminal())
}

/// Progress lines on stderr as git draws them: each update ends with `\r`, so the cursor
/// waits at the start of the line and a message printed meanwhile (the server's `remote: `
/// lines) overwrites the progress instead of landing in the middle of it; an update shorter
/// than the one before is padded with spaces to hide the rest of the old one.
#[derive(Default)]
struct Stderr {
    /// The length of the line last drawn.
    last: Mutex<usize>,
}

impl ProgressSink for Stderr {
    fn show(&self, line: &str, done: bool) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let pad = " ".repeat(last.saturating_sub(line.len()));
        let mut err = std::io::stderr().lock();
        let _ = if done {
            *last = 0;
            writeln!(err, "{line}{pad}")
        } else {
            *last = line.len();
            write!(err, "{line}{pad}\r")
        };
        let _ = err.flush();
    }

    fn note(&self, line: &str) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = 0;
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }
}

/// Progress on stderr, or nothing when disabled. With `SLUICE_TRACE_PERFORMANCE` set, each
/// phase's wall time and peak resident memory are printed when it ends (as git's
/// `GIT_TRACE_PERFORMANCE` does for
/// commands), whether or not progress is shown.
pub struct TerminalProgress {
    text: TextProgress,
    trace: Option<Mutex<(String, Instant)>>,
}

impl TerminalProgress {
    /// Progress that renders when `enabled`.
    pub fn new(enabled: bool) -> Self {
        let trace = std::env::var_os("SLUICE_TRACE_PERFORMANCE")
            .filter(|v| !v.is_empty() && v != "0")
            .map(|_| Mutex::new((String::new(), Instant::now())));
        let sink: Option<Box<dyn ProgressSink>> = enabled.then(|| Box::new(Stderr::default()) as _);
        TerminalProgress {
            text: TextProgress::new(sink),
            trace,
        }
    }
}

impl Progress for TerminalProgress {
    fn phase(&self, title: &str, total: Option<u64>) {
        if let Some(trace) = &self.trace {
            reset_peak_memory();
            *trace.lock().unwrap_or_else(|e| e.into_inner()) = (title.to_owned(), Instant::now());
        }
        self.text.phase(title, total);
    }

    fn delayed_phase(&self, title: &str, total: Option<u64>) {
        if let Some(trace) = &self.trace {
            reset_peak_memory();
            *trace.lock().unwrap_or_else(|e| e.into_inner()) = (title.to_owned(), Instant::now());
        }
        self.text.delayed_phase(title, total);
    }

    fn note(&self, line: &str) {
        self.text.note(line);
    }

    fn add(&self, count: u64) {
        self.text.add(count);
    }

    fn add_bytes(&self, bytes: u64) {
        self.text.add_bytes(bytes);
    }

    fn finish(&self) {
        self.finish_with("done");
    }

    fn finish_with(&self, ending: &str) {
        self.text.finish_with(ending);
        if let Some(trace) = &self.trace {
            let (title, start) = &*trace.lock().unwrap_or_else(|e| e.into_inner());
            let peak = peak_memory().map_or(String::new(), |kb| {
                format!(", peak {:.1} MB", kb as f64 / 1024.0)
            });
            eprintln!(
                "trace: performance: {:.3} s: {title}{peak}",
                start.elapsed().as_secs_f64()
            );
        }
    }
}

/// Starts a new measure of the process's peak resident memory (Linux: the high-water mark is
/// reset to the current size), so that each traced phase reports its own peak.
fn reset_peak_memory() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The process's peak resident memory since the last reset, in KiB (Linux's `VmHWM`).
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
