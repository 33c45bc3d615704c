//! Marking the objects of a walk with the islands that reach them: the refs' tips (and what
//! their tags peel to) marked with their island, the marks carried down every edge of the walked
//! graph (commit to tree and parents, tree to entries) in topological order, so that each object
//! ends with exactly the islands whose tips reach it through objects being packed.

use super::{IslandRules, Islands};
use crate::GenerateError;
use rayon::prelude::*;
use sluice_graph::Walked;
use sluice_object::parse::{parse_commit, parse_tag, tree_entries};
use sluice_object::progress::Progress;
use sluice_object::{IdMap, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use std::collections::{BTreeMap, HashMap};

/// The islands of `rules` over `refs`, marked on the objects of `walked`.
pub fn mark(
    odb: &ObjectDb,
    rules: &IslandRules,
    refs: &[(String, ObjectId)],
    walked: &Walked,
    progress: &dyn Progress,
) -> Result<Islands, GenerateError> {
    let (tips, over_captured) = island_tips(rules, refs);
    let core = (rules.core.as_deref()).and_then(|name| tips.iter().position(|(n, _)| n == name));
    let words = (tips.len() / 64 + 1).max(1);
    let mut sets = Sets::new(words);
    // The marks of each object, by its place in the walk; tips outside it count for nothing
    // (nothing is carried through an object not packed).
    let place: IdMap<u32> = (walked.objects.iter().enumerate())
        .map(|(i, o)| (o.id, i as u32))
        .collect();
    let mut marks = vec![0u32; walked.objects.len()];
    for (island, (_, ids)) in tips.iter().enumerate() {
        for id in ids {
            for id in peeled(odb, *id)? {
                if let Some(&at) = place.get(&id) {
                    marks[at as usize] = sets.with(marks[at as usize], island);
                }
            }
        }
    }
    let edges = Edges::of(odb, walked, &place)?;
    progress.phase(
        "Propagating island marks",
        Some(walked.objects.len() as u64),
    );
    for at in edges.topological() {
        progress.add(1);
        let set = marks[at as usize];
        if set == 0 {
            continue;
        }
        for &child in edges.children(at) {
            marks[child as usize] = sets.union(marks[child as usize], set);
        }
    }
    progress.finish();
    let marks = (walked.objects.iter().zip(marks))
        .filter(|(_, set)| *set != 0)
        .map(|(o, set)| (o.id, set))
        .collect();
    Ok(Islands {
        count: tips.len(),
        core,
        marks,
        sets: sets.all,
        over_captured,
    })
}

/// Each island's name and tips, in name order, islands of the very same tips counted once
/// (as git merges them); and how many refs matched a rule of too many capture groups.
fn island_tips(
    rules: &IslandRules,
    refs: &[(String, ObjectId)],
) -> (Vec<(String, Vec<ObjectId>)>, usize) {
    let mut by_name: BTreeMap<String, Vec<ObjectId>> = BTreeMap::new();
    let mut over_captured = 0;
    for (name, id) in refs {
        if let Some((island, over)) = rules.island_of(name) {
            over_captured += usize::from(over);
            by_name.entry(island).or_default().push(*id);
        }
    }
    let mut islands: Vec<(String, Vec<ObjectId>)> = Vec::new();
    let mut of_tips: HashMap<Vec<ObjectId>, usize> = HashMap::new();
    for (name, mut ids) in by_name {
        ids.sort_unstable();
        ids.dedup();
        match of_tips.get(&ids) {
            // The core island keeps its own name when another has the same tips.
            Some(&same) if Some(&name) == rules.core.as_ref() => islands[same].0 = name,
            Some(_) => {}
            None => {
                of_tips.insert(ids.clone(), islands.len());
                islands.push((name, ids));
            }
        }
    }
    (islands, over_captured)
}

/// `id`, and if it is a tag, what it peels to, step by step.
fn peeled(odb: &ObjectDb, id: ObjectId) -> Result<Vec<ObjectId>, GenerateError> {
    let mut chain = vec![id];
    let mut at = id;
    // A cycle of tags cannot be made (each names the other's id), but a bound costs nothing.
    while chain.len() < 64 {
        match odb.read(&at)? {
            Some((ObjectKind::Tag, data)) => match parse_tag(odb.hash(), &data) {
                Ok(tag) => {
                    at = tag.object;
                    chain.push(at);
                }
                Err(_) => break,
            },
            _ => break,
        }
    }
    Ok(chain)
}

/// The edges of the walked graph between objects of the walk: a commit to its tree and
/// parents, a tree to its entries (no gitlink); by place in the walk.
struct Edges {
    starts: Vec<u32>,
    targets: Vec<u32>,
}

impl Edges {
    fn of(odb: &ObjectDb, walked: &Walked, place: &IdMap<u32>) -> Result<Edges, GenerateError> {
        let hash = odb.hash();
        let children = (walked.objects.par_iter())
            .map(|object| {
                let within = |id: &ObjectId| place.get(id).copied();
                let data = match object.kind {
                    ObjectKind::Commit | ObjectKind::Tree => match odb.read(&object.id)? {
                        Some((kind, data)) if kind == object.kind => data,
                        _ => return Err(GenerateError::MissingObject(object.id)),
                    },
                    ObjectKind::Blob | ObjectKind::Tag => return Ok(Vec::new()),
                };
                Ok(match object.kind {
                    ObjectKind::Commit => match parse_commit(hash, &data) {
                        Ok(commit) => (std::iter::once(&commit.tree).chain(&commit.parents))
                            .filter_map(within)
                            .collect(),
                        Err(_) => Vec::new(),
                    },
                    _ => (tree_entries(hash, &data).map_while(Result::ok))
                        .filter(|entry| !entry.is_gitlink())
                        .filter_map(|entry| within(&entry.id))
                        .collect(),
                })
            })
            .collect::<Result<Vec<Vec<u32>>, GenerateError>>()?;
        let mut starts = Vec::with_capacity(children.len() + 1);
        let mut targets = Vec::new();
        for list in children {
            starts.push(targets.len() as u32);
            targets.extend(list);
        }
        starts.push(targets.len() as u32);
        Ok(Edges { starts, targets })
    }

    fn children(&self, at: u32) -> &[u32] {
        &self.targets[self.starts[at as usize] as usize..self.starts[at as usize + 1] as usize]
    }

    /// Every object after all that point to it (Kahn's order).
    fn topological(&self) -> Vec<u32> {
        let count = self.starts.len() - 1;
        let mut pointed = vec![0u32; count];
        for &target in &self.targets {
            pointed[target as usize] += 1;
        }
        let mut order: Vec<u32> = (0..count as u32)
            .filter(|&i| pointed[i as usize] == 0)
            .collect();
        let mut next = 0;
        while next < order.len() {
            let at = order[next];
            next += 1;
            for &child in self.children(at) {
                pointed[child as usize] -= 1;
                if pointed[child as usize] == 0 {
                    order.push(child);
                }
            }
        }
        order
    }
}

/// The distinct sets of islands, each stored once (most objects share the set of every
/// island, or one of a few): set 0 is the empty set.
struct Sets {
    words: usize,
    all: Vec<Box<[u64]>>,
    known: HashMap<Box<[u64]>, u32>,
    unions: HashMap<(u32, u32), u32>,
}

impl Sets {
    fn new(words: usize) -> Sets {
        let empty: Box<[u64]> = vec![0; words].into();
        Sets {
            words,
            all: vec![empty.clone()],
            known: HashMap::from([(empty, 0)]),
            unions: HashMap::new(),
        }
    }

    fn intern(&mut self, set: Box<[u64]>) -> u32 {
        if let Some(&n) = self.known.get(&set) {
            return n;
        }
        let n = self.all.len() as u32;
        self.all.push(set.clone());
        self.known.insert(set, n);
        n
    }

    /// Set `set` with island `island` added.
    fn with(&mut self, set: u32, island: usize) -> u32 {
        let mut bits = self.all[set as usize].clone();
        bits[island / 64] |= 1 << (island % 64);
        self.intern(bits)
    }

    fn union(&mut self, a: u32, b: u32) -> u32 {
        if a == b || b == 0 {
            return a;
        }
        if a == 0 {
            return b;
        }
        if let Some(&n) = self.unions.get(&(a, b)) {
            return n;
        }
        let bits: Box<[u64]> = (0..self.words)
            .map(|w| self.all[a as usize][w] | self.all[b as usize][w])
            .collect();
        let n = self.intern(bits);
        self.unions.insert((a, b), n);
        n
    }
}
