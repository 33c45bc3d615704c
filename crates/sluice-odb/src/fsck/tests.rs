//! The checker's bookkeeping: severities, skip lists and findings in order. Every check is
//! compared with git's own index-pack in the integration tests.

use super::*;

fn id(n: u8) -> ObjectId {
    sluice_object::hash_object(HashKind::Sha1, ObjectKind::Blob, &[n]).unwrap()
}

#[test]
fn severities_options_and_skips_decide_the_outcome() {
    let tree = {
        let mut data = b"100644 .git\0".to_vec();
        data.extend_from_slice(id(1).as_bytes());
        data
    };
    // Strict by default: git's warning refuses.
    let checker = Checker::new(HashKind::Sha1, FsckOptions::default());
    assert_eq!(
        checker.check(ObjectKind::Tree, &id(9), &tree),
        Err(Refused { id: id(9) })
    );
    assert_eq!(
        checker.findings()[0].to_string(),
        format!("object {}: hasDotgit: contains '.git'", id(9))
    );
    let mut options = FsckOptions::default();
    options.set("HASDOTGIT", "warn").unwrap();
    let checker = Checker::new(HashKind::Sha1, options);
    assert_eq!(checker.check(ObjectKind::Tree, &id(9), &tree), Ok(()));
    assert_eq!(checker.findings()[0].severity, Severity::Warn);
    let mut options = FsckOptions::default();
    options.skip.insert(id(9));
    let checker = Checker::new(HashKind::Sha1, options);
    assert_eq!(checker.check(ObjectKind::Tree, &id(9), &tree), Ok(()));
    assert!(checker.findings().is_empty());
    let mut options = FsckOptions::default();
    assert!(matches!(
        options.set("bogus", "error"),
        Err(FsckError::UnknownMessage(_))
    ));
    assert!(matches!(
        options.set("badDate", "bogus"),
        Err(FsckError::UnknownSeverity(_))
    ));
}
