//! Smart HTTP is stateless: the refs a client was shown and the request that asks for their
//! objects are separate requests, which may land on different nodes and different
//! generations of a stored repository. A request is served as the generation its client saw
//! would serve it: a tip advertised by any recent generation may be wanted (protocol v0's
//! check) and its objects are there, even after a force push and a maintenance run moved
//! them. Judged by git: the pack answered is indexed by `git index-pack` and the wanted
//! commit is whole (`git fsck --strict`).

use crate::serve::Server;
use crate::store::{imported, node, sluice, with_commit};
use crate::util::{pkt, read_pkt, stderr, Env};
use std::io::{Read, Write};

/// Sends an HTTP/1.0 request to `node` (the answer ends when the connection closes) and
/// returns the status line and the body.
fn request(node: &Server, head: &str, body: &[u8]) -> (String, Vec<u8>) {
    let mut stream = std::net::TcpStream::connect(node.http()).unwrap();
    let timeout = Some(std::time::Duration::from_secs(60));
    stream.set_read_timeout(timeout).unwrap();
    let head = format!(
        "{head}\r\nHost: test\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let status = String::from_utf8_lossy(&answer[..end])
        .lines()
        .next()
        .unwrap()
        .to_owned();
    (status, answer[end + 4..].to_vec())
}

/// The id `main` has in a protocol v0 advertisement of `p.git` by `node`.
fn advertised_main(node: &Server) -> String {
    let get = "GET /p.git/info/refs?service=git-upload-pack HTTP/1.0";
    let (status, body) = request(node, get, b"");
    assert!(status.contains("200"), "{status}");
    let mut lines = &body[..];
    // `# service=git-upload-pack` and its flush, then the refs up to a flush.
    assert!(read_pkt(&mut lines).is_some() && read_pkt(&mut lines).is_none());
    let main = std::iter::from_fn(|| read_pkt(&mut lines)).find_map(|line| {
        line.trim_end()
            .strip_suffix(" refs/heads/main")
            .map(str::to_owned)
    });
    main.unwrap_or_else(|| panic!("no main in {}", String::from_utf8_lossy(&body)))
}

/// A protocol v0 `POST …/git-upload-pack` for `want` (no capabilities: no side band), sent to
/// `node`: its status and body.
fn post_want_v0(node: &Server, want: &str) -> (String, Vec<u8>) {
    let body = [
        pkt(&format!("want {want}\n")),
        "0000".to_owned(),
        pkt("done\n"),
    ]
    .concat();
    let post = "POST /p.git/git-upload-pack HTTP/1.0\r\n\
                Content-Type: application/x-git-upload-pack-request";
    request(node, post, body.as_bytes())
}

/// A protocol v2 `fetch` of `want` sent to `node`: the pack from the answer's side band.
fn fetch_v2(node: &Server, want: &str) -> Vec<u8> {
    let body = [
        pkt("command=fetch\n"),
        "0001".to_owned(),
        pkt(&format!("want {want}\n")),
        pkt("done\n"),
        "0000".to_owned(),
    ]
    .concat();
    let post = "POST /p.git/git-upload-pack HTTP/1.0\r\nGit-Protocol: version=2\r\n\
                Content-Type: application/x-git-upload-pack-request";
    let (status, body) = request(node, post, body.as_bytes());
    assert!(status.contains("200"), "{status}");
    let start = body.windows(13).position(|w| w == b"000dpackfile\n");
    let mut rest =
        &body[start.unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(&body))) + 13..];
    let mut pack = Vec::new();
    while rest.len() >= 4 {
        let len = usize::from_str_radix(std::str::from_utf8(&rest[..4]).unwrap(), 16).unwrap();
        if len < 4 {
            break;
        }
        if rest[4] == 1 {
            pack.extend_from_slice(&rest[5..len]);
        }
        rest = &rest[len..];
    }
    pack
}

/// Indexes `pack` into a new repository `name` under `env`, points a ref at `want` and
/// checks with git that the commit is whole.
fn assert_whole(env: &Env, name: &str, pack: &[u8], want: &str) {
    let repo = env.init(name, true);
    let out = crate::util::run_with_input(
        env.git_command(&repo, &["index-pack", "--stdin", "--fix-thin"]),
        pack,
    );
    assert!(out.status.success(), "{name}: {}", stderr(&out));
    env.git(&repo, &["update-ref", "refs/heads/got", want]);
    env.git(&repo, &["fsck", "--strict", "--no-dangling"]);
}

/// Force-pushes an unrelated commit to `main` through `node` (git://), so that the commit
/// `main` named is no longer reachable from any ref but the one tag that holds an ancestor.
fn force_push_orphan(env: &Env, node: &Server) {
    let url = crate::store::git_url(node, "p.git");
    let dir = with_commit(env, &url, "pusher", "main", "pusher");
    env.git(&dir, &["checkout", "-q", "--orphan", "fresh"]);
    std::fs::write(dir.join("new.txt"), "new").unwrap();
    env.git(&dir, &["add", "."]);
    env.git(&dir, &["commit", "-q", "-m", "unrelated"]);
    env.git(&dir, &["push", "-q", "--force", "origin", "fresh:main"]);
}

fn maintain(env: &Env, store: &str) {
    let url = format!("{store}/p.git");
    let out = sluice(env, env.path(), &["store", "maintain", "-q", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_stateless_request_is_served_as_the_generation_its_client_saw() {
    let env = Env::new();
    let (_, store, _) = imported(&env);
    let nodes: Vec<Server> = (0..3)
        .map(|i| node(&env, &store, &format!("cache{i}"), &[]))
        .collect();
    // The refs, from the first node; then main is forced elsewhere through the second and
    // the repository maintained (what no ref reaches goes into a cruft pack).
    let seen = advertised_main(&nodes[0]);
    force_push_orphan(&env, &nodes[1]);
    maintain(&env, &store);
    assert_ne!(advertised_main(&nodes[2]), seen);
    // The third node, which never served the generation the client saw, serves its want.
    let (status, body) = post_want_v0(&nodes[2], &seen);
    assert!(status.contains("200"), "{status}");
    assert!(
        body.starts_with(b"0008NAK\n"),
        "{}",
        String::from_utf8_lossy(&body)
    );
    assert_whole(&env, "v0", &body[8..], &seen);
    assert_whole(&env, "v2", &fetch_v2(&nodes[2], &seen), &seen);
    // The store is whole, what the tip that left reaches included.
    let out = sluice(
        &env,
        env.path(),
        &["store", "fsck", &format!("{store}/p.git")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // What no generation advertised is still refused, with git's words.
    let stranger = "1234".repeat(10);
    let (_, body) = post_want_v0(&nodes[2], &stranger);
    let said = String::from_utf8_lossy(&body);
    assert!(said.contains(&format!("not our ref {stranger}")), "{said}");
}
