//! The touching pairs as of the last update that tested every candidate, and which of them a collider's
//! move has retired since.
//!
//! When few colliders move (a level of walls and a few characters), an update tests only the pairs that
//! involve a collider moved since the grid's build; every other pair touches exactly as it did. Those
//! stay here, untouched: when a collider first moves, its pairs here are retired (found through an
//! index by entity, made at the first such update), and its pairs tested from then on are kept apart
//! ([`Contacts`](super::Contacts)' moving pairs). So such an update costs what the moved colliders'
//! pairs cost, not a pass over every touching pair. On workload W3 (100,000 colliders still, 1,000
//! moving, 51,000 touching pairs), where the merge of the kept pairs with the tested ones and the
//! events' comparison with the last update's pairs read and wrote every touching pair each frame, the
//! narrow phase went from 0.30 to 0.34 ms to 0.038 to 0.044 ms, the events stage from 0.137 to 0.009
//! ms, and the pipeline from 0.75 to 1.01 ms to 0.36 to 0.45 ms (three alternating runs each); W1,
//! where every update tests every candidate, within the noise.

use core::borrow::Borrow;

use bevy::prelude::*;

use super::PairContact;

/// The pairs touching as of the last update that tested every candidate, sorted by pair, and the
/// retired ones among them.
#[derive(Debug, Default)]
pub(super) struct SettledPairs {
    /// Sorted by `(collider1, collider2)`.
    pairs: Vec<PairContact>,
    /// By position in `pairs`, whether the pair is retired; empty while none is (see [`Self::index`]).
    retired: Vec<bool>,
    retired_count: usize,
    /// By entity index, where the positions of the entity's pairs start in `positions`, one element
    /// more than the highest index; empty until the first retirement after the pairs were replaced.
    starts: Vec<u32>,
    positions: Vec<u32>,
    /// How many colliders, of those moved since the grid's build, had their pairs retired.
    retired_movers: usize,
}

impl SettledPairs {
    /// Empties the pairs for a new set, forgetting the retirements, and returns them to be filled and
    /// sorted: the caller tested every candidate.
    pub(super) fn replace(&mut self) -> &mut Vec<PairContact> {
        self.retired.clear();
        self.retired_count = 0;
        self.starts.clear();
        self.positions.clear();
        self.retired_movers = 0;
        self.pairs.clear();
        &mut self.pairs
    }

    /// Hands the pairs over into `into` (swapped with it) when none is retired, leaving none here, and
    /// returns whether it did: cheaper than copying them.
    pub(super) fn take_if_all_live(&mut self, into: &mut Vec<PairContact>) -> bool {
        if self.retired_count > 0 {
            return false;
        }
        core::mem::swap(into, &mut self.pairs);
        self.replace();
        true
    }

    /// Every pair, retired or not, sorted.
    pub(super) fn all(&self) -> &[PairContact] {
        &self.pairs
    }

    /// Whether the pair at `position` is still live.
    #[inline]
    fn is_live(&self, position: usize) -> bool {
        !self.retired.get(position).copied().unwrap_or(false)
    }

    /// How many pairs are live.
    pub(super) fn live_count(&self) -> usize {
        self.pairs.len() - self.retired_count
    }

    /// The live pairs, sorted.
    pub(super) fn live(&self) -> impl Iterator<Item = &PairContact> + '_ {
        (self.pairs.iter().enumerate())
            .filter(|&(position, _)| self.is_live(position))
            .map(|(_, pair)| pair)
    }

    /// The live pair of `key`'s two entities, `(lower, higher)`.
    pub(super) fn get(&self, key: (Entity, Entity)) -> Option<&PairContact> {
        let position = self
            .pairs
            .binary_search_by(|pair| pair.key().cmp(&key))
            .ok()?;
        self.is_live(position).then(|| &self.pairs[position])
    }

    /// Retires the live pairs of the colliders moved since the grid's build that are new since the last
    /// call (`moved`, in the order they first moved: the first ones were retired already) and sets
    /// `retired` to their positions, sorted: the pairs themselves are [`Self::all`]'s at those
    /// positions.
    pub(super) fn retire_new_movers(
        &mut self,
        moved: impl ExactSizeIterator<Item = Entity>,
        retired: &mut Vec<u32>,
    ) {
        retired.clear();
        let total = moved.len();
        debug_assert!(
            total >= self.retired_movers,
            "the colliders moved since the build only grow between builds"
        );
        if total <= self.retired_movers {
            return;
        }
        self.index();
        for entity in moved.skip(self.retired_movers) {
            let index = entity.index_u32() as usize;
            let Some(range) = self.starts.get(index..index + 2) else {
                continue;
            };
            for &position in &self.positions[range[0] as usize..range[1] as usize] {
                if !self.retired[position as usize] {
                    self.retired[position as usize] = true;
                    retired.push(position);
                }
            }
        }
        self.retired_movers = total;
        self.retired_count += retired.len();
        retired.sort_unstable();
    }

    /// Makes the index by entity and the table of retired pairs, unless made since the pairs were
    /// replaced: a counting sort of the pairs' positions by each of their two entities' indices.
    fn index(&mut self) {
        if !self.starts.is_empty() || self.pairs.is_empty() {
            return;
        }
        self.retired.resize(self.pairs.len(), false);
        let highest = (self.pairs.iter())
            .map(|pair| pair.collider1.index_u32().max(pair.collider2.index_u32()))
            .max()
            .unwrap_or(0) as usize;
        self.starts.resize(highest + 2, 0);
        for pair in &self.pairs {
            self.starts[pair.collider1.index_u32() as usize + 1] += 1;
            self.starts[pair.collider2.index_u32() as usize + 1] += 1;
        }
        for index in 1..self.starts.len() {
            self.starts[index] += self.starts[index - 1];
        }
        self.positions.resize(2 * self.pairs.len(), 0);
        // Each entity's next free place, in a copy of the starts kept in `starts` shifted by one: after
        // the fill, `starts[index + 1]` ends where `starts[index]` began, as a last pass restores.
        for (position, pair) in self.pairs.iter().enumerate() {
            for entity in [pair.collider1, pair.collider2] {
                let next = &mut self.starts[entity.index_u32() as usize];
                self.positions[*next as usize] = position as u32;
                *next += 1;
            }
        }
        for index in (1..self.starts.len()).rev() {
            self.starts[index] = self.starts[index - 1];
        }
        self.starts[0] = 0;
    }
}

/// Two sorted lists of pairs, which share none, merged in order.
pub(super) fn merged<P: Borrow<PairContact>>(
    first: impl IntoIterator<Item = P>,
    second: impl IntoIterator<Item = P>,
) -> impl Iterator<Item = P> {
    let (mut first, mut second) = (first.into_iter().peekable(), second.into_iter().peekable());
    core::iter::from_fn(move || match (first.peek(), second.peek()) {
        (Some(a), Some(b)) if b.borrow().sort_key() < a.borrow().sort_key() => second.next(),
        (Some(_), _) => first.next(),
        (None, _) => second.next(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrow_phase::tests::{entity, pair, sorted};

    fn settled(pairs: &[PairContact]) -> SettledPairs {
        let mut settled = SettledPairs::default();
        let target = settled.replace();
        target.extend_from_slice(pairs);
        target.sort_unstable_by_key(PairContact::key);
        settled
    }

    fn live(settled: &SettledPairs) -> Vec<PairContact> {
        settled.live().copied().collect()
    }

    #[test]
    fn retiring_a_mover_retires_its_pairs_on_either_side_once() {
        let mut settled = settled(&[pair(1, 2), pair(1, 5), pair(3, 5), pair(6, 7)]);
        let mut retired = Vec::new();
        settled.retire_new_movers([entity(5)].into_iter(), &mut retired);
        let retired_pairs: Vec<_> = retired.iter().map(|&p| settled.all()[p as usize]).collect();
        assert_eq!(
            retired_pairs,
            sorted(vec![pair(1, 5), pair(3, 5)]),
            "5's pairs, as first or second collider, sorted"
        );
        assert_eq!(
            live(&settled),
            sorted(vec![pair(1, 2), pair(6, 7)]),
            "the others live"
        );
        assert_eq!(settled.live_count(), 2, "two live pairs");
        // 5 is not new; 1 and 9 are (9 has no pair, and an index past the table's end).
        settled.retire_new_movers([entity(5), entity(1), entity(9)].into_iter(), &mut retired);
        let retired_pairs: Vec<_> = retired.iter().map(|&p| settled.all()[p as usize]).collect();
        assert_eq!(
            retired_pairs,
            vec![pair(1, 2)],
            "1-5 was retired already: only 1-2 is new"
        );
        assert_eq!(live(&settled), vec![pair(6, 7)], "only 6-7 lives");
        assert!(settled.get(pair(1, 2).key()).is_none(), "1-2 retired");
        assert_eq!(
            settled.get(pair(6, 7).key()),
            Some(&pair(6, 7)),
            "6-7 found"
        );
    }

    #[test]
    fn replacing_the_pairs_forgets_the_retirements_and_the_index() {
        let mut settled = settled(&[pair(1, 2), pair(3, 4)]);
        let mut retired = Vec::new();
        settled.retire_new_movers([entity(1)].into_iter(), &mut retired);
        assert_eq!(retired.len(), 1, "1-2 retired");
        let target = settled.replace();
        target.extend(sorted(vec![pair(1, 2), pair(2, 9)]));
        assert_eq!(
            live(&settled),
            sorted(vec![pair(1, 2), pair(2, 9)]),
            "all live again"
        );
        settled.retire_new_movers([entity(9)].into_iter(), &mut retired);
        let retired_pairs: Vec<_> = retired.iter().map(|&p| settled.all()[p as usize]).collect();
        assert_eq!(
            retired_pairs,
            vec![pair(2, 9)],
            "the index is made anew, for entity 9 beyond the old table's end"
        );
    }

    #[test]
    fn pairs_are_handed_over_whole_only_when_all_live() {
        let mut settled = settled(&[pair(1, 2), pair(3, 4)]);
        let mut out = Vec::new();
        let mut retired = Vec::new();
        settled.retire_new_movers([entity(3)].into_iter(), &mut retired);
        assert!(!settled.take_if_all_live(&mut out), "3-4 is retired");
        assert!(out.is_empty(), "nothing handed over");
        let mut settled = self::settled(&[pair(1, 2), pair(3, 4)]);
        assert!(settled.take_if_all_live(&mut out), "all live");
        assert_eq!(out, sorted(vec![pair(1, 2), pair(3, 4)]), "handed over");
        assert_eq!(settled.live_count(), 0, "none left");
    }

    #[test]
    fn the_index_matches_a_scan_on_many_pairs() {
        let mut next = crate::test_rng::xorshift(7);
        let mut pairs: Vec<PairContact> = (0..2_000)
            .map(|_| {
                let a = (next() % 500) as u32;
                let b = (a + 1 + (next() % 499) as u32) % 500;
                pair(a, b)
            })
            .collect();
        pairs.sort_unstable_by_key(PairContact::key);
        pairs.dedup_by_key(|pair| pair.key());
        let mut settled = settled(&pairs);
        let mut retired = Vec::new();
        let movers: Vec<Entity> = (0..500).step_by(7).map(entity).collect();
        for count in [10, 40, movers.len()] {
            settled.retire_new_movers(movers[..count].iter().copied(), &mut retired);
        }
        let moved = |e: Entity| movers.contains(&e);
        let expected: Vec<PairContact> = (pairs.iter())
            .filter(|pair| !moved(pair.collider1) && !moved(pair.collider2))
            .copied()
            .collect();
        assert_eq!(
            live(&settled),
            expected,
            "live: the pairs of two still colliders"
        );
        assert_eq!(settled.live_count(), expected.len(), "and their count");
    }

    #[test]
    fn merge_keeps_the_order() {
        let out: Vec<_> = merged(
            sorted(vec![pair(1, 2), pair(3, 4), pair(7, 8)]),
            sorted(vec![pair(1, 5), pair(2, 3), pair(9, 10)]),
        )
        .collect();
        assert_eq!(
            out,
            sorted(vec![
                pair(1, 2),
                pair(1, 5),
                pair(2, 3),
                pair(3, 4),
                pair(7, 8),
                pair(9, 10)
            ]),
            "sorted by pair"
        );
    }
}
