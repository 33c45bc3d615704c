//! Which commits get a bitmap, spaced as git spaces them: every one of the newest hundred
//! commits, then gaps growing to a hundred commits, and past the first twenty thousand, gaps
//! growing further to five thousand. Fetches ask for recent history, so that is where bitmaps
//! are dense; older history is reached by ORing a few. Within each gap a commit whose bitmap
//! can be carried over from the pack being replaced is preferred (it costs no walk), then a
//! merge (it joins more history).

use sluice_object::ObjectId;

/// Every commit of the newest this many gets a bitmap.
const DENSE: usize = 100;
/// Up to this many commits in, gaps grow to `NEAR_GAP`.
const NEAR: usize = 20_000;
const NEAR_GAP: usize = 100;
/// The widest gap, far back in history.
const FAR_GAP: usize = 5_000;

/// The gap after the commit at `index` (0 = the newest).
fn gap_after(index: usize) -> usize {
    if index <= DENSE {
        0
    } else if index <= NEAR {
        (index - DENSE).min(NEAR_GAP)
    } else {
        (index - NEAR).clamp(NEAR_GAP, FAR_GAP)
    }
}

/// The commits to give bitmaps: `commits` are newest first, `tips` always get one;
/// `reusable` says which have a bitmap to carry over, `is_merge` which have several parents.
/// Also returns how far into `commits` the spacing went, which git's progress counts (0
/// where every commit is taken, and git shows no progress).
pub(crate) fn select(
    commits: &[ObjectId],
    tips: &[ObjectId],
    reusable: impl Fn(&ObjectId) -> bool,
    is_merge: impl Fn(&ObjectId) -> bool,
) -> (Vec<ObjectId>, usize) {
    let mut chosen: Vec<ObjectId> = tips.to_vec();
    let mut at = 0;
    if commits.len() < DENSE {
        chosen.extend_from_slice(commits);
    } else {
        loop {
            let gap = gap_after(at);
            if at + gap >= commits.len() {
                break;
            }
            let window = &commits[at..=at + gap];
            let pick = (window.iter().find(|c| reusable(c)))
                .or_else(|| window.iter().find(|c| is_merge(c)))
                .unwrap_or(&window[gap]);
            chosen.push(*pick);
            at += gap + 1;
        }
    }
    chosen.sort_unstable();
    chosen.dedup();
    (chosen, at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_object::HashKind;

    fn ids(n: usize) -> Vec<ObjectId> {
        (0..n)
            .map(|i| {
                sluice_object::hash_object(
                    HashKind::Sha1,
                    sluice_object::ObjectKind::Blob,
                    &i.to_be_bytes(),
                )
                .unwrap()
            })
            .collect()
    }

    #[test]
    fn small_histories_get_a_bitmap_per_commit() {
        let commits = ids(50);
        let (chosen, counted) = select(&commits, &[], |_| false, |_| false);
        assert_eq!((chosen.len(), counted), (50, 0));
    }

    #[test]
    fn long_histories_thin_out_and_prefer_reusable_commits() {
        let commits = ids(30_000);
        let (plain, _) = select(&commits, &[], |_| false, |_| false);
        assert!(plain.len() > 200 && plain.len() < 400, "{}", plain.len());
        let favourite = commits[150];
        let (chosen, _) = select(&commits, &[], |c| *c == favourite, |_| false);
        assert!(chosen.contains(&favourite));
        assert!(select(&commits, &[commits[29_999]], |_| false, |_| false)
            .0
            .contains(&commits[29_999]));
    }
}
