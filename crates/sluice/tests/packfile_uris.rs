//! Packfile URIs: a server offers blobs at URLs (`uploadpack.blobPackfileUri`), and git's
//! upload-pack, asked by a client that downloads `http` URLs, runs `pack-objects
//! --uri-protocol=http`. With Sluice as that pack-objects the client gets the same refs and
//! objects, and downloads the same offered pack, as from git's own; pack-objects alone names
//! the offered blobs before its pack and refuses a bad setting as git's does.

use crate::transports::{serve_with, Kind};
use crate::util::{gits, run_with_input, stderr, stdout, Env};

#[test]
fn gits_upload_pack_offers_packfile_uris_through_sluices_pack_objects() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let exec = crate::util::stand_in(&env, &["pack-objects"]);
        // git's web server for the offered pack only: the fetches themselves run over file://.
        let served = serve_with(&env, Kind::Http, &git_bin, &[]);
        let base = served.url.trim_end_matches("source.git");
        let server = env.init("server", false);
        for name in ["my-blob", "other-blob"] {
            std::fs::write(server.join(name), format!("{name}\n")).unwrap();
        }
        env.git(&server, &["add", "."]);
        env.git(&server, &["commit", "-q", "-m", "x"]);
        // The offered blob in a pack of its own, where git's web server serves packs; the
        // server keeps its own copy loose (a packed one git sends itself).
        let blob = String::from_utf8(env.git(&server, &["hash-object", "my-blob"])).unwrap();
        let offered = env.init("offered.git", true);
        let base_name = offered.join("objects/pack/pack");
        let args = ["pack-objects", "-q", base_name.to_str().unwrap()];
        let pack = stdout(&env.git_with_input(&server, &args, blob.as_bytes()));
        let (blob, pack) = (blob.trim(), pack.trim());
        let uri = format!("{base}offered.git/objects/pack/pack-{pack}.pack");
        let setting = format!("{blob} {pack} {uri}");
        env.git(&server, &["config", "uploadpack.blobPackfileUri", &setting]);
        // git's upload-pack sends packfile URIs only with sideband-all.
        env.git(&server, &["config", "uploadpack.allowSidebandAll", "true"]);

        // pack-objects alone: the same line before the pack.
        let lines = [false, true].map(|sluice| {
            let args = ["pack-objects", "--revs", "--stdout", "--uri-protocol=http"];
            let command = env.sluice_or_git_command(sluice, &server, &args);
            let out = run_with_input(command, b"HEAD\n");
            assert!(out.status.success(), "{}", stderr(&out));
            let end = out.stdout.windows(4).position(|w| w == b"PACK").unwrap();
            String::from_utf8(out.stdout[..end].to_vec()).unwrap()
        });
        assert_eq!(lines[1], lines[0], "with {git_bin:?}");
        assert_eq!(lines[1], format!("{pack} {uri}\n"));

        // Clones through git's upload-pack, with git's pack-objects and with Sluice's.
        let url = format!("file://{}", server.display());
        let seen = [false, true].map(|stand_in| {
            let name = format!("client-{stand_in}");
            let args = ["-c", "protocol.version=2", "-c", "fetch.uriProtocols=http"];
            let args = [&args[..], &["clone", "-q", &url, &name]].concat();
            let mut command = env.git_command(env.path(), &args);
            if stand_in {
                command.env("GIT_EXEC_PATH", &exec);
            }
            let out = run_with_input(command, b"");
            assert!(out.status.success(), "{}", stderr(&out));
            let client = env.path().join(&name);
            env.git(&client, &["fsck", "--strict", "--no-progress"]);
            // The offered pack downloaded beside the one sent (whose name is its checksum).
            let packs = crate::util::list_dir(&client.join(".git/objects/pack"));
            let downloaded = packs
                .iter()
                .any(|name| name == &format!("pack-{pack}.pack"));
            (crate::pack_objects::held(&env, &client), downloaded)
        });
        assert_eq!(seen[1], seen[0], "with {git_bin:?}");
        assert!(seen[1].1, "the offered pack was not downloaded");
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(calls.contains("--uri-protocol=http"), "{calls}");
    }
}

#[test]
fn a_bad_packfile_uri_setting_is_refused_as_git_refuses_it() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let repo = env.init("repo", false);
        env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "x"]);
        let id = String::from_utf8(env.git(&repo, &["rev-parse", "HEAD"])).unwrap();
        let id = id.trim();
        let twice = format!("{id} {id} https://a");
        let values = ["anything", &format!("{id} nothex https://a"), &twice];
        for value in values {
            let setting = format!("uploadpack.blobPackfileUri={value}");
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let mut args = vec!["-c", &setting];
                if value == twice {
                    args.extend(["-c", &setting]);
                }
                args.extend(["pack-objects", "--revs", "--stdout"]);
                let command = env.sluice_or_git_command(sluice, &repo, &args);
                let out = run_with_input(command, b"HEAD\n");
                seen.push((out.status.code(), stderr(&out), out.stdout.is_empty()));
            }
            assert_eq!(seen[1], seen[0], "{value} with {git_bin:?}");
            assert_eq!(seen[1].0, Some(128), "{value}");
        }
    }
}
