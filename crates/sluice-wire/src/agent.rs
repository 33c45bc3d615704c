//! What a program calls itself to the other side (`agent=` in the capabilities, the HTTP
//! `User-Agent`): `GIT_USER_AGENT` where it is set, as git reads it, else the program's name.

/// `GIT_USER_AGENT`, or `default`.
pub fn user_agent(default: &str) -> String {
    std::env::var("GIT_USER_AGENT")
        .ok()
        .filter(|agent| !agent.is_empty())
        .unwrap_or_else(|| default.to_owned())
}
