//! How long operations report progress. Libraries never print: they call a [`Progress`] that the
//! binary renders (or not, when quiet or not on a terminal).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Receives progress of a long operation. Called from several threads at once.
pub trait Progress: Sync {
    /// A new phase begins, titled as git titles it ("Receiving objects"), with its total if known.
    fn phase(&self, title: &str, total: Option<u64>);
    /// `count` more items of the current phase are done.
    fn add(&self, count: u64);
    /// `bytes` more bytes were moved in the current phase, for a throughput figure.
    fn add_bytes(&self, bytes: u64);
    /// The current phase is complete.
    fn finish(&self);
    /// The current phase is complete, its last line ending in `ending` rather than "done" (git's
    /// index-pack: "completed with 2 local objects"). Where progress is not drawn, as
    /// [`Progress::finish`].
    fn finish_with(&self, ending: &str) {
        let _ = ending;
        self.finish();
    }
    /// A new phase, as [`Progress::phase`], shown only once it has run for [`DELAY`]: git's
    /// delayed progress, for work that is usually quick (a checkout's "Updating files").
    fn delayed_phase(&self, title: &str, total: Option<u64>) {
        self.phase(title, total);
    }
    /// A line said between phases, where progress is shown (git's pack-objects says how many
    /// threads its delta search uses).
    fn note(&self, _line: &str) {}
}

/// How long a delayed phase runs before it is shown (git's `start_delayed_progress`).
pub const DELAY: Duration = Duration::from_secs(2);

/// A [`Progress`] that reports nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Discard;

impl Progress for Discard {
    fn phase(&self, _title: &str, _total: Option<u64>) {}
    fn add(&self, _count: u64) {}
    fn add_bytes(&self, _bytes: u64) {}
    fn finish(&self) {}
}

/// A [`Progress`] that passes on counts but not bytes: git gives a throughput only for data
/// that moves (a pack arriving), not for one read from a file in place.
pub struct CountsOnly<'a>(pub &'a dyn Progress);

impl Progress for CountsOnly<'_> {
    fn phase(&self, title: &str, total: Option<u64>) {
        self.0.phase(title, total);
    }
    fn add(&self, count: u64) {
        self.0.add(count);
    }
    fn add_bytes(&self, _bytes: u64) {}
    fn finish(&self) {
        self.0.finish();
    }
    fn finish_with(&self, ending: &str) {
        self.0.finish_with(ending);
    }
    fn delayed_phase(&self, title: &str, total: Option<u64>) {
        self.0.delayed_phase(title, total);
    }
    fn note(&self, line: &str) {
        self.0.note(line);
    }
}

/// Where rendered progress text goes: a terminal's stderr, or a side band to a remote client.
pub trait ProgressSink: Send + Sync + 'static {
    /// Shows the current state of a phase: `line` redraws the phase's line; when `done` the
    /// phase is over and `line` is its last, its ending included (", done."), for the sink to
    /// end with a newline.
    fn show(&self, line: &str, done: bool);
    /// Shows a line of its own between phases.
    fn note(&self, _line: &str) {}
}

#[derive(Default)]
struct Phase {
    title: String,
    total: Option<u64>,
    started: Option<Instant>,
    /// A delayed phase: nothing is drawn before this moment.
    hidden_until: Option<Instant>,
    last_line: String,
    active: bool,
    /// What the last line ends with instead of "done".
    ending: Option<String>,
}

struct Shared {
    sink: Box<dyn ProgressSink>,
    count: AtomicU64,
    bytes: AtomicU64,
    phase: Mutex<Phase>,
    stop: AtomicBool,
}

/// Progress rendered as git renders it ("Receiving objects:  45% (x/y), 1.2 MiB | 3.4 MiB/s",
/// then ", done."), into a [`ProgressSink`]. A ticker thread redraws a few times a second, so
/// the hot path of a worker is one atomic addition.
pub struct TextProgress {
    shared: Option<Arc<Shared>>,
}

impl std::fmt::Debug for TextProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextProgress").finish_non_exhaustive()
    }
}

impl TextProgress {
    /// Progress shown in `sink`, or nothing for `None`.
    pub fn new(sink: Option<Box<dyn ProgressSink>>) -> Self {
        let Some(sink) = sink else {
            return TextProgress { shared: None };
        };
        let shared = Arc::new(Shared {
            sink,
            count: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            phase: Mutex::new(Phase::default()),
            stop: AtomicBool::new(false),
        });
        let ticker = Arc::clone(&shared);
        std::thread::spawn(move || {
            while !ticker.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                ticker.draw(false);
            }
        });
        TextProgress {
            shared: Some(shared),
        }
    }
}

impl Drop for TextProgress {
    fn drop(&mut self) {
        if let Some(shared) = &self.shared {
            shared.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// Sizes as git prints them (its `strbuf_humanise`): bytes up to 1024, then KiB and MiB with
/// two decimals rounded (git adds 5 bytes, and 5243 bytes, before it cuts), GiB cut.
pub fn human_bytes(bytes: u64) -> String {
    if bytes > 1 << 30 {
        let hundredths = (bytes & ((1 << 30) - 1)) / 10_737_419;
        format!("{}.{hundredths:02} GiB", bytes >> 30)
    } else if bytes > 1 << 20 {
        let x = bytes + 5243;
        format!("{}.{:02} MiB", x >> 20, ((x & ((1 << 20) - 1)) * 100) >> 20)
    } else if bytes > 1 << 10 {
        let x = bytes + 5;
        format!("{}.{:02} KiB", x >> 10, ((x & ((1 << 10) - 1)) * 100) >> 10)
    } else if bytes == 1 {
        "1 byte".into()
    } else {
        format!("{bytes} bytes")
    }
}

impl Shared {
    fn line(&self, phase: &Phase) -> String {
        let count = self.count.load(Ordering::Relaxed);
        let bytes = self.bytes.load(Ordering::Relaxed);
        let mut line = match phase.total {
            Some(total) if total > 0 => {
                let percent = count.min(total) * 100 / total;
                format!("{}: {percent:3}% ({count}/{total})", phase.title)
            }
            _ => format!("{}: {count}", phase.title),
        };
        if bytes > 0 {
            let elapsed = phase.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
            let rate = if elapsed > 0.0 {
                (bytes as f64 / elapsed) as u64
            } else {
                0
            };
            line.push_str(&format!(
                ", {} | {}/s",
                human_bytes(bytes),
                human_bytes(rate)
            ));
        }
        line
    }

    fn draw(&self, done: bool) {
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        if !phase.active {
            return;
        }
        if !done
            && phase
                .hidden_until
                .is_some_and(|until| Instant::now() < until)
        {
            return;
        }
        let line = self.line(&phase);
        if !done && line == phase.last_line {
            return;
        }
        match done {
            true => {
                let ending = phase.ending.as_deref().unwrap_or("done");
                self.sink.show(&format!("{line}, {ending}."), true);
            }
            false => self.sink.show(&line, false),
        }
        phase.last_line = line;
        if done {
            phase.active = false;
        }
    }
}

impl TextProgress {
    fn start(&self, title: &str, total: Option<u64>, delay: Option<Duration>) {
        let Some(shared) = &self.shared else { return };
        shared.count.store(0, Ordering::Relaxed);
        shared.bytes.store(0, Ordering::Relaxed);
        let mut phase = shared.phase.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        *phase = Phase {
            title: title.to_owned(),
            total,
            started: Some(now),
            hidden_until: delay.map(|delay| now + delay),
            last_line: String::new(),
            active: true,
            ending: None,
        };
    }
}

impl Progress for TextProgress {
    fn phase(&self, title: &str, total: Option<u64>) {
        self.start(title, total, None);
    }

    fn delayed_phase(&self, title: &str, total: Option<u64>) {
        self.start(title, total, Some(DELAY));
    }

    fn note(&self, line: &str) {
        if let Some(shared) = &self.shared {
            shared.sink.note(line);
        }
    }

    fn add(&self, count: u64) {
        if let Some(shared) = &self.shared {
            shared.count.fetch_add(count, Ordering::Relaxed);
        }
    }

    fn add_bytes(&self, bytes: u64) {
        if let Some(shared) = &self.shared {
            shared.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    fn finish_with(&self, ending: &str) {
        if let Some(shared) = &self.shared {
            let mut phase = shared.phase.lock().unwrap_or_else(|e| e.into_inner());
            phase.ending = Some(ending.to_owned());
        }
        self.finish();
    }

    fn finish(&self) {
        if let Some(shared) = &self.shared {
            // As git's: a phase that counted nothing and was never drawn (a push whose
            // objects the server has, a pack without deltas to resolve) is not shown at all.
            // Nor is a delayed phase that ends before its delay is over.
            let counted = shared.count.load(Ordering::Relaxed) > 0;
            let mut phase = shared.phase.lock().unwrap_or_else(|e| e.into_inner());
            let hidden = phase
                .hidden_until
                .is_some_and(|until| Instant::now() < until);
            match !phase.last_line.is_empty() || counted && !hidden {
                true => {
                    drop(phase);
                    shared.draw(true);
                }
                false => phase.active = false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{human_bytes, Deferred, Progress, ProgressSink, TextProgress, DELAY};
    use std::sync::{Arc, Mutex};

    #[test]
    fn sizes_read_like_git() {
        assert_eq!(human_bytes(0), "0 bytes");
        assert_eq!(human_bytes(1), "1 byte");
        assert_eq!(human_bytes(1536), "1.50 KiB");
        assert_eq!(human_bytes(5 << 20), "5.00 MiB");
        // git rounds KiB and MiB, and says 1024 bytes in bytes.
        assert_eq!(human_bytes(16761), "16.37 KiB");
        assert_eq!(human_bytes(1024), "1024 bytes");
        assert_eq!(human_bytes((1 << 20) + (1 << 20) * 999 / 1000), "2.00 MiB");
    }

    /// The lines a sink was given to end a phase.
    #[derive(Clone, Default)]
    struct Ended(Arc<Mutex<Vec<String>>>);

    impl ProgressSink for Ended {
        fn show(&self, line: &str, done: bool) {
            if done {
                self.0.lock().unwrap().push(line.to_owned());
            }
        }
    }

    /// As git's: a phase that counted nothing is not shown, nor is a delayed phase that ends
    /// within its delay; one that runs past it is.
    #[test]
    fn phases_that_counted_nothing_or_ended_within_their_delay_are_not_shown() {
        let ended = Ended::default();
        let progress = TextProgress::new(Some(Box::new(ended.clone())));
        progress.phase("Counting objects", Some(0));
        progress.finish();
        progress.delayed_phase("Updating files", Some(3));
        progress.add(3);
        progress.finish();
        progress.phase("Receiving objects", Some(2));
        progress.add(2);
        progress.finish();
        progress.delayed_phase("Updating files", Some(1));
        std::thread::sleep(DELAY + std::time::Duration::from_millis(300));
        progress.add(1);
        progress.finish();
        let said = ended.0.lock().unwrap().clone();
        assert_eq!(
            said,
            [
                "Receiving objects: 100% (2/2), done.",
                "Updating files: 100% (1/1), done."
            ]
        );
    }

    /// A deferred delayed phase is replayed only if it ran for the delay.
    #[test]
    fn a_quick_deferred_delayed_phase_is_not_replayed() {
        let ended = Ended::default();
        let shown = TextProgress::new(Some(Box::new(ended.clone())));
        let deferred = Deferred::default();
        deferred.delayed_phase("Updating files", Some(2));
        deferred.add(2);
        deferred.finish();
        deferred.replay(&shown);
        deferred.phase("Updating files", Some(2));
        deferred.add(2);
        deferred.finish();
        deferred.replay(&shown);
        assert_eq!(
            *ended.0.lock().unwrap(),
            ["Updating files: 100% (2/2), done."]
        );
    }
}

/// Progress of work that runs while another phase is on screen: counted silently, shown once
/// the screen is free (a clone's checkout, which runs while the deltas are resolved).
#[derive(Default)]
pub struct Deferred {
    phase: Mutex<Option<DeferredPhase>>,
    done: std::sync::atomic::AtomicU64,
}

/// The phase a [`Deferred`] holds: its title and total, when it started, and for a delayed
/// one, how long it ran (once it ended).
#[derive(Clone)]
struct DeferredPhase {
    title: String,
    total: Option<u64>,
    started: Instant,
    delayed: bool,
    took: Option<Duration>,
}

impl Deferred {
    /// Shows the phase, as far as it got, on `to`: a delayed one only if it ran for [`DELAY`]
    /// or more, or has not ended.
    pub fn replay(&self, to: &dyn Progress) {
        let phase = self.phase.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let Some(phase) = phase.filter(|phase| phase.total != Some(0)) else {
            return;
        };
        if phase.delayed && phase.took.is_some_and(|took| took < DELAY) {
            return;
        }
        to.phase(&phase.title, phase.total);
        to.add(self.done.load(std::sync::atomic::Ordering::Relaxed));
        to.finish();
    }

    fn start(&self, title: &str, total: Option<u64>, delayed: bool) {
        *self.phase.lock().unwrap_or_else(|e| e.into_inner()) = Some(DeferredPhase {
            title: title.to_owned(),
            total,
            started: Instant::now(),
            delayed,
            took: None,
        });
        self.done.store(0, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Progress for Deferred {
    fn phase(&self, title: &str, total: Option<u64>) {
        self.start(title, total, false);
    }

    fn delayed_phase(&self, title: &str, total: Option<u64>) {
        self.start(title, total, true);
    }

    fn add(&self, count: u64) {
        self.done
            .fetch_add(count, std::sync::atomic::Ordering::Relaxed);
    }

    fn add_bytes(&self, _bytes: u64) {}

    fn finish(&self) {
        if let Some(phase) = self
            .phase
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            phase.took = Some(phase.started.elapsed());
        }
    }
}

/// Progress passed on to another, calling `then` once when the first phase ends: for a pack
/// read from a stream, when the whole of it has been read (index-pack's
/// `--report-end-of-input`).
pub struct FirstPhaseEnd<'a, F: Fn() + Sync> {
    inner: &'a dyn Progress,
    then: F,
    pending: AtomicBool,
}

impl<'a, F: Fn() + Sync> FirstPhaseEnd<'a, F> {
    /// Passes progress on to `inner` and calls `then` when its first phase ends.
    pub fn new(inner: &'a dyn Progress, then: F) -> Self {
        FirstPhaseEnd {
            inner,
            then,
            pending: AtomicBool::new(true),
        }
    }
}

impl<F: Fn() + Sync> Progress for FirstPhaseEnd<'_, F> {
    fn phase(&self, title: &str, total: Option<u64>) {
        self.inner.phase(title, total);
    }
    fn delayed_phase(&self, title: &str, total: Option<u64>) {
        self.inner.delayed_phase(title, total);
    }
    fn note(&self, line: &str) {
        self.inner.note(line);
    }
    fn add(&self, count: u64) {
        self.inner.add(count);
    }
    fn add_bytes(&self, bytes: u64) {
        self.inner.add_bytes(bytes);
    }
    fn finish(&self) {
        self.finish_with("done");
    }
    fn finish_with(&self, ending: &str) {
        self.inner.finish_with(ending);
        if self.pending.swap(false, Ordering::Relaxed) {
            (self.then)();
        }
    }
}
