//! Pass 1's per-entry tables (entries, resolved ids), in one part or two: a pack scanned in
//! two halves at once keeps the second half's tables as they are. Joining them copied the
//! second half into the first, and for that moment held it twice: the peak of index-pack's
//! memory (on git/git's pack, 27 MB of 849k entries' tables).

use std::ops::{Index, IndexMut};

/// A table indexed by entry number, stored in up to two parts.
#[derive(Debug, Default)]
pub(crate) struct Table<T> {
    first: Vec<T>,
    second: Vec<T>,
}

impl<T> Table<T> {
    /// A table in one part.
    pub(crate) fn new(first: Vec<T>) -> Self {
        Table {
            first,
            second: Vec::new(),
        }
    }

    /// Entries in all.
    pub(crate) fn len(&self) -> usize {
        self.first.len() + self.second.len()
    }

    /// Whether there is none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry at `i`, if there is one.
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        match i.checked_sub(self.first.len()) {
            None => self.first.get(i),
            Some(j) => self.second.get(j),
        }
    }

    /// Adds an entry at the end.
    pub(crate) fn push(&mut self, value: T) {
        match self.second.is_empty() {
            true => self.first.push(value),
            false => self.second.push(value),
        }
    }

    /// The first part (all of a table in one part).
    pub(crate) fn first_part(&self) -> &[T] {
        &self.first
    }

    /// The entries as one vector (moved when the table is in one part, as a scan's own is).
    pub(crate) fn into_vec(self) -> Vec<T> {
        let mut first = self.first;
        first.extend(self.second);
        first
    }

    /// Appends `rest` as the table's second part (or to it).
    pub(crate) fn append_part(&mut self, mut rest: Vec<T>) {
        if self.second.is_empty() {
            if self.first.is_empty() {
                self.first = rest;
            } else {
                self.second = rest;
            }
        } else {
            self.second.append(&mut rest);
        }
    }

    /// Every entry, in order.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + Clone {
        self.first.iter().chain(self.second.iter())
    }
}

impl<T> Index<usize> for Table<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        match i.checked_sub(self.first.len()) {
            None => &self.first[i],
            Some(j) => &self.second[j],
        }
    }
}

impl<T> IndexMut<usize> for Table<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        match i.checked_sub(self.first.len()) {
            None => &mut self.first[i],
            Some(j) => &mut self.second[j],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_parts_read_as_one() {
        let mut table = Table::new(vec![0, 1, 2]);
        table.append_part(vec![3, 4]);
        table.push(5);
        assert_eq!(table.len(), 6);
        assert_eq!(
            table.iter().copied().collect::<Vec<_>>(),
            [0, 1, 2, 3, 4, 5]
        );
        assert_eq!((table[2], table[3], table[5]), (2, 3, 5));
        assert_eq!(table.get(6), None);
        table[4] = 40;
        assert_eq!(table.get(4), Some(&40));
        let mut one = Table::new(Vec::new());
        one.append_part(vec![7]);
        one.push(8);
        assert_eq!(one.first_part(), [7, 8]);
    }
}
