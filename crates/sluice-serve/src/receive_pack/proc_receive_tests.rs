use super::*;

fn command(old: bool, new: bool, name: &str) -> Command {
    let (null, some) = (HashKind::Sha1.null_id(), ObjectId::Sha1([1; 20]));
    Command {
        old: if old { some } else { null },
        new: if new { some } else { null },
        name: name.to_owned(),
    }
}

fn rules(values: &[&str]) -> ProcRefs {
    let mut config = sluice_odb::Config::default();
    for value in values {
        let setting = format!("receive.procReceiveRefs={value}");
        config.set_parameter(&setting).unwrap();
    }
    ProcRefs::of(&config)
}

#[test]
fn prefixes_match_whole_components() {
    let refs = rules(&["refs/for"]);
    assert!(refs.matches(&command(false, true, "refs/for/main")));
    assert!(refs.matches(&command(false, true, "refs/for")));
    assert!(!refs.matches(&command(false, true, "refs/forward/main")));
    assert!(!refs.matches(&command(false, true, "refs/heads/main")));
}

#[test]
fn modifiers_narrow_to_creations_updates_or_deletions_and_bang_negates() {
    let refs = rules(&["m:refs/heads"]);
    assert!(refs.matches(&command(true, true, "refs/heads/main")));
    assert!(!refs.matches(&command(false, true, "refs/heads/main")));
    assert!(!refs.matches(&command(true, false, "refs/heads/main")));
    let refs = rules(&["ad:refs/heads"]);
    assert!(refs.matches(&command(false, true, "refs/heads/x")));
    assert!(refs.matches(&command(true, false, "refs/heads/x")));
    assert!(!refs.matches(&command(true, true, "refs/heads/x")));
    let refs = rules(&["!:refs/heads"]);
    assert!(refs.matches(&command(true, true, "refs/tags/v1")));
    assert!(!refs.matches(&command(true, true, "refs/heads/main")));
    assert!(!rules(&[]).matches(&command(true, true, "refs/heads/main")));
}
