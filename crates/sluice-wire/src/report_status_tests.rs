use super::*;

fn lines(packets: &[u8]) -> Vec<String> {
    let mut reader = crate::pktline::PktReader::new(packets);
    let mut lines = Vec::new();
    while let Ok(Some(crate::pktline::Packet::Data(data))) = reader.read() {
        lines.push(String::from_utf8_lossy(data).trim_end().to_owned());
    }
    lines
}

#[test]
fn what_is_written_reads_back() {
    let id = ObjectId::Sha1([7; 20]);
    let rewrites = vec![
        Rewrite {
            name: Some("refs/changes/1".to_owned()),
            new: Some(id),
            ..Rewrite::default()
        },
        Rewrite {
            name: Some("refs/changes/2".to_owned()),
            old: Some(id),
            forced: true,
            ..Rewrite::default()
        },
    ];
    let mut out = Vec::new();
    write_packet(&mut out, b"unpack ok\n").unwrap();
    write_ref_status(&mut out, "refs/for/main", None, &rewrites).unwrap();
    write_ref_status(&mut out, "refs/heads/x", Some("hook declined"), &[]).unwrap();
    write_ref_status(&mut out, "refs/heads/y", None, &[]).unwrap();
    let report = parse(&lines(&out), HashKind::Sha1).unwrap();
    assert_eq!(report.unpack_error, None);
    assert_eq!(report.refs.len(), 3);
    assert_eq!(report.refs[0].rewrites, rewrites);
    assert_eq!(report.refs[1].refused.as_deref(), Some("hook declined"));
    assert!(report.refs[2].refused.is_none() && report.refs[2].rewrites.is_empty());
}

#[test]
fn options_without_a_status_and_bad_lines_are_told() {
    let lines = ["unpack ok", "option refname x", "ok refs/heads/a"].map(str::to_owned);
    let report = parse(&lines, HashKind::Sha1).unwrap();
    assert_eq!(report.complaints.len(), 1);
    let lines = ["unpack ok", "what refs/heads/a"].map(str::to_owned);
    let bad = parse(&lines, HashKind::Sha1);
    assert_eq!(bad, Err(ReportError::BadStatus("what".to_owned())));
    assert_eq!(parse(&[], HashKind::Sha1), Err(ReportError::NoUnpack));
}
