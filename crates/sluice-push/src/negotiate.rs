//! `push.negotiate`: before sending, the commits the server has in common with what is pushed
//! are found by a fetch negotiation (`fetch --negotiate-only` over upload-pack, as git runs it
//! for its send-pack), so that the pack leaves out history the server holds without
//! advertising it (under hidden refs, or unreachable there). Useful, not needed: when the
//! negotiation fails the push goes on with the advertisement alone, as git's does.

use super::{PushMessages, PushPlan, PushedRef};
use sluice_client::fetch::negotiate_only;
use sluice_object::ObjectId;
use sluice_remote::{ConnectOptions, Service};
use sluice_repo::Repository;

/// The commits the server has in common with the new values of `refs`, by negotiation; none
/// when nothing new is pushed, or when the negotiation fails (told to `messages`).
pub(super) fn commons(
    repo: &Repository,
    plan: &PushPlan,
    connect: &ConnectOptions,
    refs: &[PushedRef],
    messages: &dyn PushMessages,
) -> Vec<ObjectId> {
    let tips: Vec<String> = (refs.iter())
        .filter_map(|r| r.new)
        .map(|id| id.to_string())
        .collect();
    if tips.is_empty() {
        return Vec::new();
    }
    // Its own connection to upload-pack, even when the push itself is relayed.
    let connect = ConnectOptions {
        service: Service::UploadPack,
        stateless_rpc: false,
        ..connect.clone()
    };
    match negotiate_only(&plan.remote, repo, &tips, &connect) {
        Ok(commons) => commons,
        Err(error) => {
            messages.negotiation_failed(&error);
            Vec::new()
        }
    }
}
