//! `repack -a -d --filter=<spec> [--filter-to=<base>]` and gc's `gc.repackFilter`, twinned with
//! git 2.47 (2.39 has neither): the new pack holds what the filter keeps, a pack of its own
//! (beside it, or at `<base>-<checksum>.pack`) the rest of the replaced packs' objects, a cruft
//! pack beside them only what no ref reaches; a bitmap asked for fails as in git, and bad
//! arguments are refused in git's words. Compared: exit code, the last line of stderr, and
//! the objects of every pack, kind by kind; `fsck` of what each leaves.
//!
//! Beside a cruft pack Sluice departs from git 2.47 on purpose: git puts the objects the
//! filter left out, reachable ones included, into the cruft pack (and writes an empty filtered
//! pack), where a later gc past the expiry would delete them from under their commits; Sluice
//! keeps them in the filtered pack and the cruft pack holds only what nothing reaches.

use crate::util::{gits, list_dir, Env};
use std::path::Path;

/// A command's arguments, and the settings made before it runs.
type Case<'a> = (Vec<&'a str>, &'a [(&'a str, &'a str)]);

/// Every pack under `dir` (its `.idx` files) as the sorted ids and kinds it holds, and whether
/// it has an `.mtimes` (a cruft pack) or a `.promisor`; the packs sorted too, so that names do
/// not count.
pub(crate) fn packs_in(env: &Env, dir: &Path) -> Vec<String> {
    let mut packs: Vec<String> = list_dir(dir)
        .into_iter()
        .filter(|name| name.ends_with(".idx"))
        .map(|name| {
            let idx = dir.join(&name);
            let listing = env.git(dir, &["verify-pack", "-v", idx.to_str().unwrap()]);
            let mut objects: Vec<String> = String::from_utf8(listing)
                .unwrap()
                .lines()
                .filter_map(|l| {
                    let mut words = l.split_whitespace();
                    let (id, kind) = (words.next()?, words.next()?);
                    (id.len() == 40).then(|| format!("{id} {kind}"))
                })
                .collect();
            objects.sort();
            let cruft = idx.with_extension("mtimes").exists();
            let promisor = idx.with_extension("promisor").exists();
            format!(
                "cruft: {cruft} promisor: {promisor}\n{}",
                objects.join("\n")
            )
        })
        .collect();
    packs.sort();
    packs
}

/// A bare repository of eight commits (packed), an unreachable blob packed beside them, and
/// a loose one.
fn source(env: &Env) -> std::path::PathBuf {
    let work = env.init("work", false);
    for i in 0..8 {
        std::fs::write(
            work.join(format!("f{}", i % 3)),
            format!("{i}\n").repeat(50),
        )
        .unwrap();
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    env.git(
        env.path(),
        &["clone", "-q", "--bare", "--no-local", "work", "source.git"],
    );
    let source = env.path().join("source.git");
    let unreachable = env.git_with_input(&source, &["hash-object", "-w", "--stdin"], b"gone\n");
    let id = String::from_utf8(unreachable.stdout).unwrap();
    let packed = env.git_with_input(
        &source,
        &["pack-objects", "objects/pack/pack"],
        id.as_bytes(),
    );
    assert!(packed.status.success());
    env.git_with_input(&source, &["hash-object", "-w", "--stdin"], b"loose\n");
    source
}

#[test]
fn filtered_repacks_split_the_packs_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let version = String::from_utf8(env.git(env.path(), &["version"])).unwrap();
        if version.contains(" 2.39.") {
            continue;
        }
        let source = source(&env);
        let to = env.path().join("elsewhere");
        std::fs::create_dir(&to).unwrap();
        let to_base = to.join("pack").display().to_string();
        let filter_to = format!("--filter-to={to_base}");
        let cases: Vec<Case<'_>> = vec![
            (vec!["repack", "-a", "-d", "--filter=blob:none"], &[]),
            (vec!["repack", "-a", "-d", "--filter=blob:limit=100"], &[]),
            (
                vec!["repack", "-a", "-d", "--filter=blob:none", &filter_to],
                &[],
            ),
            (vec!["repack", "-a", "-d", "-b", "--filter=blob:none"], &[]),
            (vec!["repack", "-a", "-d", "--filter=bogus"], &[]),
            (vec!["repack", "-a", "-d", &filter_to], &[]),
            (
                vec!["gc", "-q", "--no-cruft"],
                &[("gc.repackFilter", "blob:none")],
            ),
        ];
        for (args, config) in cases {
            let mut said = Vec::new();
            for (twin, sluice) in [("theirs", false), ("ours", true)] {
                let repo = env.path().join(format!("{twin}.git"));
                let _ = std::fs::remove_dir_all(&repo);
                crate::util::copy_tree(&source, &repo);
                for (key, value) in config {
                    env.git(&repo, &["config", key, value]);
                }
                env.git(&repo, &["config", "repack.writeBitmaps", "false"]);
                for name in list_dir(&to) {
                    std::fs::remove_file(to.join(name)).unwrap();
                }
                let out = env
                    .sluice_or_git_command(sluice, &repo, &args)
                    .output()
                    .unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr);
                let last = stderr.lines().last().unwrap_or_default().to_owned();
                if out.status.success() && !args.contains(&filter_to.as_str()) {
                    env.git(&repo, &["fsck", "--no-dangling"]);
                }
                let loose = env.git(&repo, &["count-objects"]);
                said.push(format!(
                    "{:?} {last}\n{}{:?}\nelsewhere: {:?}",
                    out.status.code(),
                    String::from_utf8_lossy(&loose)
                        .split(',')
                        .next()
                        .unwrap_or_default(),
                    packs_in(&env, &repo.join("objects/pack")),
                    packs_in(&env, &to),
                ));
            }
            assert_eq!(said[1], said[0], "{} {args:?} {config:?}", git.display());
        }
    }
}

/// `repack -a -d --cruft --filter` and gc with `gc.repackFilter` (cruft by default): the new
/// pack holds what `rev-list --filter` lists, the cruft pack exactly what `fsck --unreachable`
/// named before, the filtered pack the rest; `fsck --strict` finds everything reachable.
#[test]
fn beside_a_cruft_pack_the_filtered_objects_stay_out_of_it() {
    let env = Env::new();
    let source = source(&env);
    let listed = |repo: &Path, args: &[&str]| -> Vec<String> {
        let text = String::from_utf8(env.git(repo, args)).unwrap();
        let mut ids: Vec<String> = (text.lines())
            .filter_map(|l| {
                l.split_whitespace()
                    .find(|w| w.len() == 40)
                    .map(str::to_owned)
            })
            .collect();
        ids.sort();
        ids
    };
    let unreachable = listed(&source, &["fsck", "--unreachable", "--no-reflogs"]);
    let args = [
        "rev-list",
        "--objects",
        "--all",
        "--filter=blob:none",
        "--no-object-names",
    ];
    let kept = listed(&source, &args);
    let cases: [Case<'_>; 2] = [
        (
            vec!["repack", "-a", "-d", "--cruft", "--filter=blob:none"],
            &[],
        ),
        (vec!["gc", "-q"], &[("gc.repackFilter", "blob:none")]),
    ];
    for (k, (args, config)) in cases.into_iter().enumerate() {
        let repo = env.path().join(format!("case{k}.git"));
        crate::util::copy_tree(&source, &repo);
        for (key, value) in config {
            env.git(&repo, &["config", key, value]);
        }
        env.git(&repo, &["config", "repack.writeBitmaps", "false"]);
        let out = env.sluice(&repo, &args, b"");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            crate::util::stderr(&out)
        );
        env.git(&repo, &["fsck", "--strict", "--no-dangling"]);
        let packs = packs_in(&env, &repo.join("objects/pack"));
        assert_eq!(packs.len(), 3, "{args:?}: {packs:?}");
        let ids = |pack: &String| -> Vec<String> {
            pack.lines().skip(1).map(|l| l[..40].to_owned()).collect()
        };
        let cruft = packs.iter().find(|p| p.starts_with("cruft: true")).unwrap();
        assert_eq!(ids(cruft), unreachable, "{args:?}");
        assert!(packs.iter().any(|p| ids(p) == kept), "{args:?}: {packs:?}");
    }
}
