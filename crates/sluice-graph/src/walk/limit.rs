//! The limited commit walk: which commits the wants reach and the haves do not.

use super::{WalkError, Walker, POPPED, QUEUED, SLOP, UNINTERESTING};
use sluice_object::{IdSet, ObjectId};
use std::collections::BinaryHeap;

/// Orders the walk queue: newest commit first, then first queued first.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Queued {
    time: i64,
    order: std::cmp::Reverse<u64>,
    id: ObjectId,
}

impl Walker<'_> {
    /// The limited commit walk; returns the wanted commits, newest first.
    pub(super) fn limit(
        &mut self,
        wants: &[ObjectId],
        haves: &[ObjectId],
        shallow: &IdSet,
    ) -> Result<Vec<ObjectId>, WalkError> {
        let mut queue = BinaryHeap::new();
        let mut order = 0u64;
        let mut interesting_queued = 0usize;
        let mut push = |walker: &mut Self,
                        queue: &mut BinaryHeap<Queued>,
                        id: ObjectId,
                        uninteresting: bool,
                        interesting_queued: &mut usize|
         -> Result<(), WalkError> {
            let node = walker.load_commit(&id)?;
            if uninteresting {
                node.flags |= UNINTERESTING;
            }
            if node.flags & (QUEUED | POPPED) != 0 {
                return Ok(());
            }
            node.flags |= QUEUED;
            if node.flags & UNINTERESTING == 0 {
                *interesting_queued += 1;
            }
            order += 1;
            queue.push(Queued {
                time: node.time,
                order: std::cmp::Reverse(order),
                id,
            });
            Ok(())
        };
        for id in haves {
            self.mark_uninteresting(id, &mut interesting_queued);
            push(self, &mut queue, *id, true, &mut interesting_queued)?;
        }
        for id in wants {
            push(self, &mut queue, *id, false, &mut interesting_queued)?;
        }
        let mut emitted = Vec::new();
        let mut slop = SLOP;
        while let Some(Queued { id, .. }) = queue.pop() {
            let node = self
                .commits
                .get_mut(&id)
                .expect("queued commits are loaded");
            node.flags = (node.flags & !QUEUED) | POPPED;
            let uninteresting = node.flags & UNINTERESTING != 0;
            if !uninteresting {
                interesting_queued -= 1;
            }
            let parents = if shallow.contains(&id) {
                Vec::new()
            } else {
                node.parents.clone()
            };
            for parent in &parents {
                if uninteresting {
                    self.load_commit(parent)?;
                    self.mark_uninteresting(parent, &mut interesting_queued);
                }
                push(
                    self,
                    &mut queue,
                    *parent,
                    uninteresting,
                    &mut interesting_queued,
                )?;
            }
            if !uninteresting {
                emitted.push(id);
                self.progress.add(1);
            }
            if interesting_queued == 0 {
                slop -= 1;
                if slop == 0 || queue.is_empty() {
                    break;
                }
            } else {
                slop = SLOP;
            }
        }
        emitted.retain(|id| self.commits[id].flags & UNINTERESTING == 0);
        Ok(emitted)
    }

    /// Marks `id` uninteresting, and through already-walked commits, their ancestors.
    fn mark_uninteresting(&mut self, id: &ObjectId, interesting_queued: &mut usize) {
        let mut stack = vec![*id];
        while let Some(id) = stack.pop() {
            let Some(node) = self.commits.get_mut(&id) else {
                continue;
            };
            if node.flags & UNINTERESTING != 0 {
                continue;
            }
            node.flags |= UNINTERESTING;
            if node.flags & QUEUED != 0 {
                *interesting_queued -= 1;
            }
            if node.flags & POPPED != 0 {
                stack.extend(node.parents.iter().copied());
            }
        }
    }
}
