//! Integration tests: real git builds every repository and judges every result.

mod util;

mod advertisement;
mod bad_servers;
mod checkout;
mod checkout_switch;
mod clone;
mod command_options;
mod connectivity;
mod fetch_head;
mod fetch_pack;
mod fetch_refs;
mod fsck;
mod git_plumbing;
mod hostile_packs;
mod http_client;
mod http_push;
mod index_pack;
mod ls_refs;
mod object_database;
mod pack_hook;
mod pipelined_clone;
mod push;
mod push_transports;
mod quarantine;
mod receive_pack;
mod ref_transactions;
mod references;
mod serve;
mod shallow_servers;
mod thin_and_collisions;
mod transports;
mod upload_filters;
mod upload_pack;
mod v2_request_end;
mod verify_pack;
