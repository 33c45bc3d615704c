//! Who a reflog entry names, as git writes it: `Name <email> <seconds> <zone>`.

use sluice_odb::Config;

/// The committer identity of a reflog entry made now: `GIT_COMMITTER_NAME` and
/// `GIT_COMMITTER_EMAIL`, else `user.name` and `user.email`, with the current time in UTC.
pub fn reflog_identity(config: &Config) -> String {
    reflog_identity_for(config, None)
}

/// As [`reflog_identity`], with `(name, email)` of a user a front end authenticated taking the
/// place of `user.name` and `user.email` (git http-backend sets the committer variables only
/// when they are unset).
pub fn reflog_identity_for(config: &Config, pusher: Option<(&str, &str)>) -> String {
    format!(
        "{} {} +0000",
        committer_for(config, pusher),
        crate::date::now()
    )
}

/// The committer as git names one: `Name <email>`, from `GIT_COMMITTER_NAME` and
/// `GIT_COMMITTER_EMAIL`, else `user.name` and `user.email`.
pub fn committer(config: &Config) -> String {
    committer_for(config, None)
}

fn committer_for(config: &Config, pusher: Option<(&str, &str)>) -> String {
    let pick = |var: &str, pushed: Option<&str>, key: &str, fallback: &str| {
        std::env::var(var)
            .ok()
            .or_else(|| pushed.map(str::to_owned))
            .or_else(|| config.get(key).map(str::to_owned))
            .unwrap_or_else(|| fallback.to_owned())
    };
    let name = pick(
        "GIT_COMMITTER_NAME",
        pusher.map(|p| p.0),
        "user.name",
        "Sluice",
    );
    let email = pick(
        "GIT_COMMITTER_EMAIL",
        pusher.map(|p| p.1),
        "user.email",
        "sluice@localhost",
    );
    format!("{name} <{email}>")
}
