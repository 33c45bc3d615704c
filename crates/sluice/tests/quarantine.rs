//! The quarantine of a push (the ground of receive-pack): a received pack and loose objects
//! stay out of the repository, visible to hooks through git's environment, until they are
//! moved in; a refused push leaves nothing. Judged with git.

use crate::util::{Env, FastImport};
use sluice_odb::pack_store::{self, Destination, StoreOptions};
use sluice_odb::quarantine::Quarantine;
use sluice_pack::{IndexOptions, PackIndexer};
use sluice_repo::Repository;
use std::path::Path;

/// A repository with `old` and `main` (three commits past it), and a clone of it that has
/// only `old`, as a push would find it; returns both and the pack of what the clone lacks.
fn push_scene(env: &Env) -> (std::path::PathBuf, std::path::PathBuf, Vec<u8>) {
    let src = env.init("src", true);
    let mut fi = FastImport::new();
    for i in 0..4 {
        let text = format!("version {i}\n");
        fi.commit(
            "main",
            &format!("c{i}"),
            &[("file", "100644", text.as_bytes())],
        );
    }
    env.fast_import(&src, fi.finish());
    env.git(&src, &["branch", "old", "main~3"]);
    // Exactly what `old` reaches (a local clone would link every object).
    let dst = env.init("dst.git", true);
    let old = env.git_with_input(
        &src,
        &["pack-objects", "--revs", "--stdout", "-q"],
        b"old\n",
    );
    let indexed = env.git_with_input(&dst, &["index-pack", "--stdin"], &old.stdout);
    assert!(indexed.status.success());
    let old = String::from_utf8(env.git(&src, &["rev-parse", "old"])).unwrap();
    env.git(&dst, &["update-ref", "refs/heads/old", old.trim()]);
    let out = env.git_with_input(
        &src,
        &["pack-objects", "--revs", "--stdout", "-q"],
        b"main\n^old\n",
    );
    assert!(out.status.success());
    (src, dst, out.stdout)
}

fn has(env: &Env, repo: &Path, id: &str, vars: &[(String, std::ffi::OsString)]) -> bool {
    let mut command = env.git_command(repo, &["cat-file", "-e", id]);
    command.envs(vars.iter().map(|(k, v)| (k, v)));
    command.output().unwrap().status.success()
}

fn receive_into(quarantine: &Quarantine, repo: &Path, pack: &[u8]) {
    let repository = Repository::discover(repo).unwrap();
    let options = StoreOptions::from_config(repository.config(), repository.hash()).unwrap();
    let indexer = PackIndexer::new(IndexOptions::default());
    let mut input = pack;
    pack_store::receive(
        &mut input,
        quarantine.dir(),
        &Destination::default(),
        &indexer,
        &options,
        None,
        &|_| Ok(()),
    )
    .unwrap();
}

#[test]
fn quarantined_objects_enter_only_when_moved_in() {
    let env = Env::new();
    let (src, dst, pack) = push_scene(&env);
    let main = String::from_utf8(env.git(&src, &["rev-parse", "main"])).unwrap();
    let main = main.trim();
    let objects = dst.join("objects");
    let quarantine = Quarantine::create(&objects).unwrap();
    assert!(quarantine.dir().starts_with(&objects));
    assert!(quarantine
        .dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("tmp_objdir-incoming-"));
    receive_into(&quarantine, &dst, &pack);
    // A loose object too, written as a hook would write it.
    let hook_env = quarantine.hook_environment();
    let mut hash = env.git_command(&dst, &["hash-object", "-w", "--stdin"]);
    hash.envs(hook_env.iter().map(|(k, v)| (k, v)));
    let loose = crate::util::run_with_input(hash, b"written by a hook\n");
    assert!(loose.status.success());
    let loose = String::from_utf8(loose.stdout).unwrap();
    let loose = loose.trim();

    // The repository does not see them; a hook does.
    assert!(!has(&env, &dst, main, &[]));
    assert!(!has(&env, &dst, loose, &[]));
    assert!(has(&env, &dst, main, &hook_env));
    assert!(has(&env, &dst, loose, &hook_env));

    let dir = quarantine.dir().to_owned();
    quarantine.migrate().unwrap();
    assert!(!dir.exists());
    assert!(has(&env, &dst, main, &[]));
    assert!(has(&env, &dst, loose, &[]));
    env.git(&dst, &["update-ref", "refs/heads/main", main]);
    env.git(&dst, &["fsck", "--strict", "--no-dangling"]);
}

#[test]
fn a_refused_push_leaves_nothing() {
    let env = Env::new();
    let (src, dst, pack) = push_scene(&env);
    let main = String::from_utf8(env.git(&src, &["rev-parse", "main"])).unwrap();
    let before = env.git(&dst, &["count-objects", "-v"]);
    let listing = |dir: &Path| crate::util::file_names(dir);
    let objects_before = listing(&dst.join("objects"));
    {
        let quarantine = Quarantine::create(&dst.join("objects")).unwrap();
        receive_into(&quarantine, &dst, &pack);
        // Dropped without moving in: the push was refused.
    }
    assert_eq!(listing(&dst.join("objects")), objects_before);
    assert_eq!(env.git(&dst, &["count-objects", "-v"]), before);
    assert!(!has(&env, &dst, main.trim(), &[]));
    env.git(&dst, &["fsck", "--strict"]);
}
