//! `git maintenance start` and `stop`: the user's scheduler (on Linux, systemd's user timers
//! where they work, else cron, as git chooses) told to run `for-each-repo
//! --config=maintenance.repo maintenance run --schedule=<frequency>` hourly, daily and weekly.
//! Git's unit names and crontab markers are kept, so that git and Sluice each take over, or
//! stop, the other's schedule. `GIT_TEST_MAINT_SCHEDULER` (`<scheduler>:<command>,…`, as git's
//! own tests set it) says which schedulers exist and which command stands for each.

use sluice_repo::Repository;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The first and last lines of the crontab's region that belongs to git maintenance.
const BEGIN: &str = "# BEGIN GIT MAINTENANCE SCHEDULE";
const END: &str = "# END GIT MAINTENANCE SCHEDULE";
/// The frequencies, in the order each scheduler is told of them.
const FREQUENCIES: [&str; 3] = ["hourly", "daily", "weekly"];

/// Why the schedule could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    /// `--scheduler=` names none git knows.
    #[error("unrecognized --scheduler argument '{0}'")]
    Unknown(String),
    /// The scheduler asked for is not on this machine.
    #[error("{0} scheduler is not available")]
    Unavailable(&'static str),
    /// `auto`, and neither scheduler works here.
    #[error("neither systemd timers nor crontab are available")]
    NoneAvailable,
    /// Another `start` or `stop` holds the lock.
    #[error("another process is scheduling background maintenance")]
    Locked,
    /// A scheduler's command could not be run, or failed.
    #[error("{0}")]
    Failed(String),
    /// A file could not be written or removed.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A scheduler `--scheduler` may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    /// systemd where it works, else cron.
    Auto,
    /// cron, through `crontab`.
    Crontab,
    /// systemd's user timers, through `systemctl --user`.
    SystemdTimer,
    /// macOS's launchd (never available here).
    Launchctl,
    /// Windows' task scheduler (never available here).
    Schtasks,
}

impl Scheduler {
    /// The scheduler `--scheduler=<name>` names.
    pub fn named(name: &str) -> Result<Scheduler, ScheduleError> {
        Ok(match name {
            "auto" => Scheduler::Auto,
            "crontab" => Scheduler::Crontab,
            "systemd" | "systemd-timer" => Scheduler::SystemdTimer,
            "launchctl" => Scheduler::Launchctl,
            "schtasks" => Scheduler::Schtasks,
            _ => return Err(ScheduleError::Unknown(name.to_owned())),
        })
    }
}

/// The schedulers of this machine: for each that exists, the command that stands for it.
#[derive(Debug, Clone, Default)]
pub struct Schedulers {
    crontab: Option<String>,
    systemctl: Option<String>,
}

impl Schedulers {
    /// From `GIT_TEST_MAINT_SCHEDULER` when it is set (only the schedulers it lists exist),
    /// else by asking the machine: `crontab` can be run, `systemctl --user list-timers` works.
    pub fn of_this_machine() -> Schedulers {
        if let Ok(given) = std::env::var("GIT_TEST_MAINT_SCHEDULER") {
            let mut schedulers = Schedulers::default();
            for (name, command) in given.split(',').filter_map(|item| item.split_once(':')) {
                match name {
                    "crontab" => schedulers.crontab = Some(command.to_owned()),
                    "systemctl" => schedulers.systemctl = Some(command.to_owned()),
                    _ => {}
                }
            }
            return schedulers;
        }
        let works = |program: &str, args: &[&str]| {
            (Command::new(program).args(args))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success())
        };
        let crontab = Command::new("crontab")
            .arg("-l")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        Schedulers {
            crontab: crontab.then(|| "crontab".to_owned()),
            systemctl: works("systemctl", &["--user", "list-timers"])
                .then(|| "systemctl".to_owned()),
        }
    }
}

/// What the scheduler runs: this program with git's arguments.
#[derive(Debug, Clone)]
pub struct Scheduled {
    /// The program (Sluice itself).
    pub program: PathBuf,
    /// The minute past the hour the runs start at (git picks one at random, so that not
    /// every machine fetches at once).
    pub minute: u32,
}

impl Scheduled {
    /// The command line for `frequency` (`%i` in a systemd unit), as git writes it.
    fn command(&self, frequency: &str) -> String {
        format!(
            "\"{}\" -c credential.interactive=false -c core.askPass=true for-each-repo \
             --keep-going --config=maintenance.repo maintenance run --schedule={frequency}",
            self.program.display()
        )
    }
}

/// The scheduler `scheduler` stands for here (`Auto`: systemd's timers where they work, else
/// cron), or why there is none.
pub fn resolve(scheduler: Scheduler, schedulers: &Schedulers) -> Result<Scheduler, ScheduleError> {
    match scheduler {
        Scheduler::Auto if schedulers.systemctl.is_some() => Ok(Scheduler::SystemdTimer),
        Scheduler::Auto if schedulers.crontab.is_some() => Ok(Scheduler::Crontab),
        Scheduler::Auto => Err(ScheduleError::NoneAvailable),
        Scheduler::Crontab if schedulers.crontab.is_none() => {
            Err(ScheduleError::Unavailable("crontab"))
        }
        Scheduler::SystemdTimer if schedulers.systemctl.is_none() => {
            Err(ScheduleError::Unavailable("systemctl"))
        }
        Scheduler::Launchctl => Err(ScheduleError::Unavailable("launchctl")),
        Scheduler::Schtasks => Err(ScheduleError::Unavailable("schtasks")),
        given => Ok(given),
    }
}

/// `maintenance start`: `scheduler` (as [`resolve`] gave it) runs maintenance, every other
/// scheduler here stops running it. Registering the repository is the caller's next step, as
/// in git.
pub fn start(
    repo: &Repository,
    scheduler: Scheduler,
    schedulers: &Schedulers,
    scheduled: &Scheduled,
) -> Result<(), ScheduleError> {
    let chosen = resolve(scheduler, schedulers)?;
    update(repo, Some(chosen), schedulers, scheduled)
}

/// `maintenance stop`: no scheduler here runs maintenance any more (the repositories stay
/// registered).
pub fn stop(
    repo: &Repository,
    schedulers: &Schedulers,
    scheduled: &Scheduled,
) -> Result<(), ScheduleError> {
    update(repo, None, schedulers, scheduled)
}

/// Under the schedule lock, turns every available scheduler but `chosen` off (cron first, as
/// git orders them), then `chosen` on.
fn update(
    repo: &Repository,
    chosen: Option<Scheduler>,
    schedulers: &Schedulers,
    scheduled: &Scheduled,
) -> Result<(), ScheduleError> {
    let _lock = ScheduleLock::take(&repo.objects().dir().join("schedule.lock"))?;
    if let (Some(command), false) = (&schedulers.crontab, chosen == Some(Scheduler::Crontab)) {
        crontab(command, None)?;
    }
    if let (Some(command), false) = (
        &schedulers.systemctl,
        chosen == Some(Scheduler::SystemdTimer),
    ) {
        systemd(command, None)?;
    }
    match (chosen, &schedulers.crontab, &schedulers.systemctl) {
        (Some(Scheduler::Crontab), Some(command), _) => crontab(command, Some(scheduled)),
        (Some(Scheduler::SystemdTimer), _, Some(command)) => systemd(command, Some(scheduled)),
        _ => Ok(()),
    }
}

/// The lock git takes on `<objects>/schedule` while it changes the schedule.
struct ScheduleLock(PathBuf);

impl ScheduleLock {
    fn take(path: &Path) -> Result<ScheduleLock, ScheduleError> {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(_) => Ok(ScheduleLock(path.to_owned())),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(ScheduleError::Locked),
            Err(source) => Err(ScheduleError::File {
                path: path.to_owned(),
                source,
            }),
        }
    }
}

impl Drop for ScheduleLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A scheduler's command (words split on spaces, as git splits it) with `args` after.
fn scheduler_command(command: &str, args: &[&str]) -> Command {
    let mut words = command.split(' ').filter(|w| !w.is_empty());
    let mut run = Command::new(words.next().unwrap_or(command));
    run.args(words).args(args);
    run
}

/// Rewrites the user's crontab: its lines kept but git maintenance's region, which is written
/// anew at the end when `scheduled` is given.
fn crontab(command: &str, scheduled: Option<&Scheduled>) -> Result<(), ScheduleError> {
    let listed = scheduler_command(command, &["-l"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|_| {
            ScheduleError::Failed(
                "failed to run 'crontab -l'; your system might not support 'cron'".to_owned(),
            )
        })?;
    // An empty crontab makes `crontab -l` fail: its output is what counts.
    let mut table = String::new();
    let mut in_region = false;
    for line in String::from_utf8_lossy(&listed.stdout).lines() {
        match line {
            BEGIN if !in_region => in_region = true,
            END if in_region => in_region = false,
            _ if !in_region => {
                table.push_str(line);
                table.push('\n');
            }
            _ => {}
        }
    }
    if let Some(scheduled) = scheduled {
        table.push_str(&format!(
            "{BEGIN}\n# The following schedule was created by Git\n# Any edits made in this \
             region might be\n# replaced in the future by a Git command.\n\n"
        ));
        let minute = scheduled.minute;
        for (frequency, hours, days) in [
            ("hourly", "1-23", "*"),
            ("daily", "0", "1-6"),
            ("weekly", "0", "0"),
        ] {
            let run = scheduled.command(frequency);
            table.push_str(&format!("{minute} {hours} * * {days} {run}\n"));
        }
        table.push_str(&format!("\n{END}\n"));
    }
    let edit = temporary_file("git_cron_edit_tmp", &table)?;
    let status = scheduler_command(command, &[edit.0.to_str().unwrap_or_default()])
        .stdin(Stdio::null())
        .status();
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(_) => Err(ScheduleError::Failed("'crontab' died".to_owned())),
        Err(_) => Err(ScheduleError::Failed(
            "failed to run 'crontab'; your system might not support 'cron'".to_owned(),
        )),
    }
}

/// A file removed when dropped.
struct Temporary(PathBuf);

impl Drop for Temporary {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn temporary_file(prefix: &str, text: &str) -> Result<Temporary, ScheduleError> {
    let unique = format!(".{prefix}{}-{}", std::process::id(), clock_nanos());
    let path = std::env::temp_dir().join(unique);
    std::fs::write(&path, text).map_err(|source| ScheduleError::File {
        path: path.clone(),
        source,
    })?;
    Ok(Temporary(path))
}

/// Nanoseconds of the clock: enough to tell apart two files of one process, and to pick a
/// minute.
fn clock_nanos() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
}

/// A minute past the hour, at random, as git picks it.
pub fn random_minute() -> u32 {
    clock_nanos() % 60
}

/// Where systemd looks for the user's units: `$XDG_CONFIG_HOME/systemd/user`, else
/// `~/.config/systemd/user`.
fn systemd_dir() -> Result<PathBuf, ScheduleError> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("HOME") {
            Some(home) => PathBuf::from(home).join(".config"),
            None => return Err(ScheduleError::Failed("$HOME not set".to_owned())),
        },
    };
    Ok(base.join("systemd").join("user"))
}

/// The head every unit file git writes starts with.
const UNIT_HEAD: &str = "# This file was created and is maintained by Git.\n# Any edits made \
                         in this file might be replaced in the future\n# by a Git command.\n\n\
                         [Unit]\nDescription=Optimize Git repositories data\n\n";

/// Turns systemd's timers on (`scheduled`: their units written, then each timer enabled and
/// started) or off (each stopped and disabled, the units removed).
fn systemd(command: &str, scheduled: Option<&Scheduled>) -> Result<(), ScheduleError> {
    let dir = systemd_dir()?;
    let file = |name: &str| dir.join(format!("git-maintenance@{name}"));
    let written = |path: PathBuf, text: String| {
        std::fs::write(&path, text).map_err(|source| ScheduleError::File { path, source })
    };
    if let Some(scheduled) = scheduled {
        std::fs::create_dir_all(&dir).map_err(|source| ScheduleError::File {
            path: dir.clone(),
            source,
        })?;
        let minute = scheduled.minute;
        let calendars = [
            format!("*-*-* 1..23:{minute:02}:00"),
            format!("Tue..Sun *-*-* 0:{minute:02}:00"),
            format!("Mon 0:{minute:02}:00"),
        ];
        for (frequency, calendar) in FREQUENCIES.iter().zip(calendars) {
            let timer = format!(
                "{UNIT_HEAD}[Timer]\nOnCalendar={calendar}\nPersistent=true\n\n[Install]\n\
                 WantedBy=timers.target\n"
            );
            written(file(&format!("{frequency}.timer")), timer)?;
        }
        let service = format!(
            "{UNIT_HEAD}[Service]\nType=oneshot\nExecStart={}\nLockPersonality=yes\n\
             MemoryDenyWriteExecute=yes\nNoNewPrivileges=yes\nRestrictAddressFamilies=AF_UNIX \
             AF_INET AF_INET6 AF_VSOCK\nRestrictNamespaces=yes\nRestrictRealtime=yes\n\
             RestrictSUIDSGID=yes\nSystemCallArchitectures=native\n\
             SystemCallFilter=@system-service\n",
            scheduled.command("%i")
        );
        written(file(".service"), service)?;
    }
    let action = if scheduled.is_some() {
        "enable"
    } else {
        "disable"
    };
    for frequency in FREQUENCIES {
        let unit = format!("git-maintenance@{frequency}.timer");
        let status = scheduler_command(command, &["--user", action, "--now", &unit])
            .stdin(Stdio::null())
            .status();
        let ok = status.is_ok_and(|s| s.success());
        // Turning off what is not there is no failure.
        if !ok && scheduled.is_some() {
            return Err(ScheduleError::Failed(format!(
                "failed to start systemd timer git-maintenance@{frequency}.timer"
            )));
        }
    }
    if scheduled.is_none() {
        // Git's older template timer too, so that no version's units are left behind.
        for name in [
            ".timer",
            "hourly.timer",
            "daily.timer",
            "weekly.timer",
            ".service",
        ] {
            let _ = std::fs::remove_file(file(name));
        }
    }
    Ok(())
}
