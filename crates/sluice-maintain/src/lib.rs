//! Maintenance: keeping a repository in shape without losing anything it needs, which
//! [`sluice_repo::Roots`] defines for every command that deletes (refs, `HEAD` and the index of
//! every worktree, every reflog entry); `prune`, which removes the loose objects nothing
//! reaches (older than a grace period, and not reached from a younger one either); and
//! `reflog`, which expires old reflog entries as gc does; `maintenance`, git maintenance's
//! tasks; `register`, the list of repositories a scheduler visits; `schedule`, the scheduler
//! that visits them.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod gc;
mod gc_command;
pub mod gc_lock;
pub mod maintenance;
mod maintenance_command;
pub mod prune;
pub mod reflog;
pub mod register;
pub mod schedule;
pub mod worktree_prune;

pub use gc::{
    after_push, gc, past_auto_limits, AfterPush, GcError, GcOptions, GcOutcome, PastLimit,
};
pub use gc_command::{run_gc_command, GcCommandError, GcHost, GcPlace};
pub use maintenance::{
    run_tasks, select_tasks, MaintenanceError, Prefetch, Schedule, Task, TaskFailure, TaskRefused,
    TasksRun,
};
pub use maintenance_command::{
    run_maintenance_command, MaintenanceCommandError, MaintenanceEnd, MaintenanceHost,
    MaintenanceRequest,
};
pub use prune::{prune, PruneError, PruneOptions, Pruned};
pub use reflog::{
    expire_all, expire_all_with, expire_named, Ages, BadAge, ExpireFlags, ExpireOptions, Expired,
    Judged, ReflogError,
};
pub use register::{register, unregister, RegisterError};
pub use schedule::{random_minute, start, stop, ScheduleError, Scheduled, Scheduler, Schedulers};
