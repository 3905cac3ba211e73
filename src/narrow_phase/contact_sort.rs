//! The contacts' sort by pair, which lets each update's contacts be merged with the last update's to
//! find what started and ended.
//!
//! The touching pairs of a build laid out by kinds need no sort: they come out in order (`by_kind.rs`),
//! and only the few pairs of colliders moved since the build are sorted, apart.
//!
//! On one thread, [`sort_contacts`] sorts them in place. On several, [`SplitSort`] splits the pairs
//! into ranges of their first collider (ranges of about as many contacts each, judged from a sample),
//! and each task collects and sorts one range; the ranges, in order, are the sorted contacts. As no two
//! contacts name the same pair, the order is the same however the work is split.

use bevy::prelude::*;
use bevy::tasks::TaskPool;

use super::PairContact;
use crate::parallel::{push_range_starts, range_of};
use crate::radix_sort::{bucket_sort_by_key, counting_sort_by_bucket, radix_sort_by_key};

/// At most this many tasks split the sort.
const MAX_TASKS: usize = 4;
/// At least this many contacts (or all of them), and fewer than twice as many, are sampled to split the
/// pairs into ranges of about as many contacts each.
const SAMPLES: usize = 1024;
/// The contacts are collected into their ranges this many at a time, with room made for all of them
/// before, so that the loop writes each one without a branch on its range.
const COLLECT_BLOCK: usize = 1024;

/// Sorts `pairs` by `(collider1, collider2)`.
///
/// `Entity` orders by its bits, which hold the generation above the index. The sort counts: one
/// counting sort by the first entity's index (its lower half), then a sort of each entity's few pairs,
/// two passes where the radix sort makes one per varying byte (about four); where the first entities'
/// generations differ (indices reused), a stable counting sort by the generation follows, the
/// generation being the more significant. Where entities have two pairs or more on average, stable
/// counting sorts by the second entity's index and generation come first instead of the sorts of each
/// entity's pairs, whose branches the predictor misses: on workload W2 (four pairs an entity) the
/// narrow phase took 1.41 to 1.46 ms against 1.56 to 1.58 ms; with half a pair an entity, as in W1,
/// the second counting sort cost more than it saved (at 100,000 colliders, 2.98 to 3.04 ms against
/// 2.84 to 2.88 ms). The radix sort remains for indices or generations spread too widely for a
/// counting array of a few times the pairs.
///
/// Whatever the layout of an entity's bits, each path orders the pairs by [`PairContact::sort_key`]:
/// each counting sort goes by one half of an entity's bits, the less significant first. That is the
/// order of `(collider1, collider2)` because `Entity` orders by its bits, which a test checks. The
/// result was checked after each counting path until that argument replaced the check: 3.9 million
/// instructions fewer in 70 updates of W1 at 10,000 colliders (callgrind), of 35.4 million. Pairs whose
/// first entities' generations differ, as where colliders are despawned and spawned (workload W6),
/// took the radix sort before: in 70 updates of W6 the sort took 83.2 million instructions before
/// this path and 38.6 million after; W1's 26.2 and 25.9 million, W2's 208.2 and 199.8 million
/// (callgrind).
pub(super) fn sort_contacts(
    pairs: &mut Vec<PairContact>,
    scratch: &mut Vec<PairContact>,
    starts: &mut Vec<u32>,
) {
    if pairs.is_empty() {
        return;
    }
    // The counting arrays stay within a few times the pairs, plus a fixed allowance.
    let len = pairs.len();
    let fits = |range: &EntityRange| range.lowers.max(range.uppers) <= 4 * len + 65_536;
    let first = EntityRange::of(pairs, |pair| pair.collider1);
    if !fits(&first) {
        radix_sort_by_key(pairs, scratch, PairContact::sort_key);
        return;
    }
    let second = (len >= 2 * first.lowers)
        .then(|| EntityRange::of(pairs, |pair| pair.collider2))
        .filter(fits);
    if let Some(second) = second {
        // Two pairs or more per `collider1` on average: stable counting sorts, the least significant
        // half first, in place of sorting each entity's pairs, whose comparisons the branch predictor
        // misses.
        second.sort_by_halves(pairs, scratch, starts, |pair| pair.collider2);
        first.sort_by_halves(pairs, scratch, starts, |pair| pair.collider1);
    } else if first.uppers == 1 {
        // Within a bucket every `collider1` is the same entity.
        let by_second = |pair: &PairContact| pair.collider2.to_bits();
        sort_by_first_index(pairs, scratch, starts, &first, by_second);
    } else {
        // Within a bucket the first entities share their index, not always their generation.
        sort_by_first_index(pairs, scratch, starts, &first, PairContact::sort_key);
        counting_sort_by_bucket(pairs, scratch, starts, first.uppers, |pair| {
            first.upper_bucket(pair.collider1)
        });
    }
    debug_assert!(pairs.is_sorted_by_key(PairContact::sort_key));
}

/// Sorts `pairs` by their first entity's index (in `first`), then each index's few pairs by `key`.
#[inline]
fn sort_by_first_index<K: Ord>(
    pairs: &mut Vec<PairContact>,
    scratch: &mut Vec<PairContact>,
    starts: &mut Vec<u32>,
    first: &EntityRange,
    key: impl Fn(&PairContact) -> K,
) {
    let bucket = |pair: &PairContact| first.lower_bucket(pair.collider1);
    bucket_sort_by_key(pairs, scratch, starts, first.lowers, bucket, key);
}

/// How many values the upper halves (the generations) and the lower halves (the indices) of some
/// entities' bits span, and the lowest of each.
#[derive(Clone, Copy, Debug)]
struct EntityRange {
    lowest_upper: u32,
    uppers: usize,
    lowest_lower: u32,
    lowers: usize,
}

impl EntityRange {
    /// The range of the `which` entity of `pairs`, which is not empty. The least and greatest bits
    /// give the generations' range, and the indices' where one generation spans all: one pass then,
    /// as many instructions as before generations were ranged (W2's sort took 8% more with the four
    /// halves' extremes in one pass); a second pass for the indices otherwise.
    #[inline]
    fn of(pairs: &[PairContact], which: impl Fn(&PairContact) -> Entity) -> Self {
        let (mut least, mut greatest) = (u64::MAX, 0);
        for pair in pairs {
            let bits = which(pair).to_bits();
            least = least.min(bits);
            greatest = greatest.max(bits);
        }
        let ((lowest_upper, mut lowest_lower), (highest_upper, mut highest_lower)) =
            (halves_of_bits(least), halves_of_bits(greatest));
        if lowest_upper != highest_upper {
            (lowest_lower, highest_lower) = (u32::MAX, 0);
            for pair in pairs {
                let lower = halves(which(pair)).1;
                lowest_lower = lowest_lower.min(lower);
                highest_lower = highest_lower.max(lower);
            }
        }
        Self {
            lowest_upper,
            uppers: (highest_upper - lowest_upper) as usize + 1,
            lowest_lower,
            lowers: (highest_lower - lowest_lower) as usize + 1,
        }
    }

    /// The bucket of `entity`'s lower half, below [`Self::lowers`].
    #[inline]
    fn lower_bucket(&self, entity: Entity) -> usize {
        (halves(entity).1 - self.lowest_lower) as usize
    }

    /// The bucket of `entity`'s upper half, below [`Self::uppers`].
    #[inline]
    fn upper_bucket(&self, entity: Entity) -> usize {
        (halves(entity).0 - self.lowest_upper) as usize
    }

    /// Sorts `pairs` stably by the `which` entity, of this range: by its lower half, then by its upper
    /// half unless all share it.
    fn sort_by_halves(
        &self,
        pairs: &mut Vec<PairContact>,
        scratch: &mut Vec<PairContact>,
        starts: &mut Vec<u32>,
        which: impl Fn(&PairContact) -> Entity,
    ) {
        counting_sort_by_bucket(pairs, scratch, starts, self.lowers, |pair| {
            self.lower_bucket(which(pair))
        });
        if self.uppers > 1 {
            counting_sort_by_bucket(pairs, scratch, starts, self.uppers, |pair| {
                self.upper_bucket(which(pair))
            });
        }
    }
}

/// An entity's bits as their upper and lower halves.
#[inline]
fn halves(entity: Entity) -> (u32, u32) {
    halves_of_bits(entity.to_bits())
}

/// Bits as their upper and lower halves.
#[inline]
fn halves_of_bits(bits: u64) -> (u32, u32) {
    ((bits >> 32) as u32, bits as u32)
}

/// The contacts' sort split over several threads, with its buffers kept between updates.
#[derive(Debug, Default)]
pub(super) struct SplitSort {
    /// One range of pairs a task: its contacts, then their sort's buffers.
    ranges: Vec<RangeBuffers>,
    /// The lowest first collider (as bits) of each range's pairs.
    range_starts: Vec<u64>,
    sample: Vec<u64>,
}

/// One range's contacts and the buffers of their sort.
#[derive(Debug, Default)]
struct RangeBuffers {
    contacts: Vec<PairContact>,
    scratch: Vec<PairContact>,
    starts: Vec<u32>,
}

impl SplitSort {
    /// Writes the contacts of all `parts` into `out`, sorted by pair as [`sort_contacts`] sorts them,
    /// one task a range of pairs on `pool`. `contacts_of` gives a part's contacts.
    pub(super) fn sort<P: Sync>(
        &mut self,
        pool: &TaskPool,
        parts: &[P],
        contacts_of: impl Fn(&P) -> &[PairContact] + Sync,
        out: &mut Vec<PairContact>,
    ) {
        out.clear();
        let total: usize = parts.iter().map(|part| contacts_of(part).len()).sum();
        let Some(&filler) = parts.iter().find_map(|part| contacts_of(part).first()) else {
            return;
        };
        let tasks = pool.thread_num().clamp(1, MAX_TASKS);
        self.split_pairs(parts, &contacts_of, total, tasks);
        self.ranges.resize_with(tasks, RangeBuffers::default);
        let (range_starts, contacts_of) = (&self.range_starts, &contacts_of);
        pool.scope(|scope| {
            for (range, buffers) in self.ranges.iter_mut().enumerate() {
                scope.spawn(async move {
                    buffers.collect(range, range_starts, parts.iter().map(contacts_of));
                    let RangeBuffers {
                        contacts,
                        scratch,
                        starts,
                    } = buffers;
                    sort_contacts(contacts, scratch, starts);
                });
            }
        });
        // Every slot is written below: only slots beyond the buffer's last length need a value first.
        out.resize(total, filler);
        let mut rest = out.as_mut_slice();
        pool.scope(|scope| {
            for buffers in &self.ranges {
                let (run, tail) = core::mem::take(&mut rest).split_at_mut(buffers.contacts.len());
                rest = tail;
                scope.spawn(async move { run.copy_from_slice(&buffers.contacts) });
            }
        });
    }

    /// Splits the pairs into `tasks` ranges of their first collider, of about as many contacts each,
    /// from a sample.
    fn split_pairs<P>(
        &mut self,
        parts: &[P],
        contacts_of: &impl Fn(&P) -> &[PairContact],
        total: usize,
        tasks: usize,
    ) {
        self.sample.clear();
        let stride = (total / SAMPLES).max(1);
        self.sample.extend(
            parts
                .iter()
                .flat_map(contacts_of)
                .step_by(stride)
                .map(|pair| pair.collider1.to_bits()),
        );
        self.range_starts.clear();
        self.range_starts.push(0);
        push_range_starts(&mut self.sample, tasks, &mut self.range_starts);
    }
}

impl RangeBuffers {
    /// Collects into `contacts` the contacts of `parts`, in order, whose pair is in range `range`
    /// (which `range_starts` begin).
    fn collect<'a>(
        &mut self,
        range: usize,
        range_starts: &[u64],
        parts: impl Iterator<Item = &'a [PairContact]>,
    ) {
        let contacts = &mut self.contacts;
        let mut len = 0;
        for block in parts.flat_map(|part| part.chunks(COLLECT_BLOCK)) {
            if contacts.len() < len + block.len() {
                contacts.resize(len + block.len(), block[0]);
            }
            for pair in block {
                // Written always, kept only in range: the pairs come in no order of their ranges.
                contacts[len] = *pair;
                len += usize::from(range_of(pair.collider1.to_bits(), &range_starts[1..]) == range);
            }
        }
        contacts.truncate(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Contact;
    use bevy::ecs::entity::{EntityGeneration, EntityIndex};
    use bevy::tasks::TaskPoolBuilder;

    /// An entity of index `index`, its index reused `versions` times.
    fn reused(index: u32, versions: u32) -> Entity {
        Entity::from_index_and_generation(
            EntityIndex::from_raw_u32(index).unwrap(),
            EntityGeneration::FIRST.after_versions(versions),
        )
    }

    /// `count` pseudo-random pairs over `entities` entities, a tenth of them on an index reused
    /// `versions` times; the contact's depth records the input order.
    fn pairs(count: u32, entities: u32, versions: u32) -> Vec<PairContact> {
        (0..count)
            .map(|k| {
                let entity = |i: u32| reused(i, if i.is_multiple_of(10) { versions } else { 0 });
                let (a, b) = (
                    entity((k * 7919) % entities),
                    entity((k * 104_729 + 1) % entities),
                );
                PairContact {
                    collider1: a.min(b),
                    collider2: a.max(b),
                    contact: Contact {
                        normal: Vec2::X,
                        depth: k as f32,
                    },
                }
            })
            .collect()
    }

    /// The pairs as sorted by a comparison sort, without repeats (the pipeline's pairs are unique).
    fn expected(pairs: &[PairContact]) -> Vec<PairContact> {
        let mut expected = pairs.to_vec();
        expected.sort_by_key(PairContact::key);
        expected.dedup_by_key(|pair| pair.key());
        expected
    }

    fn keys(pairs: &[PairContact]) -> Vec<(Entity, Entity)> {
        pairs.iter().map(PairContact::key).collect()
    }

    #[test]
    fn pairs_order_by_their_sort_keys_as_by_their_entities() {
        // What lets the sort go by `sort_key` and `Contacts` search by `(collider1, collider2)`:
        // `Entity` orders by its bits. Indices low, high and far apart, generations new and reused.
        let entities: Vec<Entity> = [0, 1, 2, 1_000, 65_535, 65_536, 200_000, u32::MAX - 1]
            .into_iter()
            .flat_map(|index| [0, 1, 3, 1_000].map(|versions| reused(index, versions)))
            .collect();
        let pairs: Vec<PairContact> = entities
            .iter()
            .flat_map(|&a| entities.iter().map(move |&b| (a, b)))
            .filter(|(a, b)| a < b)
            .map(|(a, b)| PairContact::between(a, b))
            .collect();
        for p in &pairs {
            for q in &pairs {
                assert_eq!(
                    p.sort_key().cmp(&q.sort_key()),
                    p.key().cmp(&q.key()),
                    "{:?} and {:?}",
                    p.key(),
                    q.key()
                );
            }
        }
    }

    #[test]
    fn contacts_sort_by_pair_with_and_without_reused_indices() {
        // Three pairs an entity, which the two counting sorts take, and half a pair, which the sort
        // of each entity's pairs takes; with and without reused indices. Generations spread too
        // widely for a counting array take the radix sort.
        for (count, versions) in [(6000, 0), (6000, 3), (1000, 0), (1000, 3), (1000, 100_000)] {
            let mut pairs = pairs(count, 2000, versions);
            let mut by_comparison = pairs.clone();
            by_comparison.sort_by_key(PairContact::key);
            sort_contacts(&mut pairs, &mut Vec::new(), &mut Vec::new());
            assert_eq!(
                keys(&pairs),
                keys(&by_comparison),
                "sorted by pair, {count} pairs, versions {versions}"
            );
        }
    }

    #[test]
    fn contacts_sort_by_pair_with_generations_mixed_at_random() {
        // Every entity of a random generation from 0 to 4, so that the first entities of many pairs
        // differ in generation and the counting sorts by index must be followed by one by generation:
        // half a pair an entity (a sort of each entity's pairs) and three (counting sorts only).
        let mut random = crate::test_rng::xorshift(0x853c_49e6_748f_ea9b);
        let mut next = move |bound: u32| (random() >> 32) as u32 % bound;
        for count in [1000, 6000] {
            let mut pairs: Vec<PairContact> = (0..count)
                .map(|_| {
                    PairContact::between(reused(next(2000), next(5)), reused(next(2000), next(5)))
                })
                .filter(|pair| pair.collider1 != pair.collider2)
                .collect();
            let mut expected = pairs.clone();
            expected.sort_by_key(PairContact::key);
            let generations_of_firsts: std::collections::HashSet<u32> = pairs
                .iter()
                .map(|pair| pair.collider1.generation().to_bits())
                .collect();
            assert_eq!(
                generations_of_firsts.len(),
                5,
                "first entities of every generation"
            );
            sort_contacts(&mut pairs, &mut Vec::new(), &mut Vec::new());
            assert_eq!(keys(&pairs), keys(&expected), "{count} pairs");
        }
    }

    /// `count` pairs of one entity, which orders below every other (`Entity`'s bits are opaque: of two
    /// indices far apart, one orders below everything between them), with as many others.
    fn crowd(count: u32) -> Vec<PairContact> {
        let first = reused(1, 0).min(reused(200_000, 0));
        (0..count)
            .map(|other| PairContact {
                collider1: first,
                collider2: reused(other * 3 + 2, 0),
                contact: Contact {
                    normal: Vec2::Y,
                    depth: 0.0,
                },
            })
            .collect()
    }

    #[test]
    fn split_sort_gives_the_one_thread_order() {
        // Pairs over 20,000 entities with and without reused indices (the sort of each range takes
        // its path by what its pairs share), and a crowd of pairs of one entity. Uneven parts, one of
        // them empty, as the tests' tasks leave them.
        let crowd = crowd(3000);
        for versions in [0, 3] {
            let all = expected(
                &pairs(40_000, 20_000, versions)
                    .into_iter()
                    .chain(crowd.iter().copied())
                    .collect::<Vec<_>>(),
            );
            // Scrambled, so that the parts hold the pairs in no order.
            let mut scrambled = all.clone();
            for k in (1..scrambled.len()).rev() {
                scrambled.swap(k, (k * 7919 + 13) % (k + 1));
            }
            let mut one_thread = scrambled.clone();
            sort_contacts(&mut one_thread, &mut Vec::new(), &mut Vec::new());
            assert_eq!(
                keys(&one_thread),
                keys(&all),
                "one thread, versions {versions}"
            );
            let parts: Vec<&[PairContact]> = {
                let (first, rest) = scrambled.split_at(scrambled.len() / 6);
                let (second, third) = rest.split_at(rest.len() / 2);
                vec![first, &[], second, third]
            };
            let mut split = SplitSort::default();
            for threads in [2, 3, 5] {
                let pool = TaskPoolBuilder::new().num_threads(threads).build();
                // Twice, as buffers kept from a larger sort are used again.
                for _ in 0..2 {
                    let mut out = vec![one_thread[0]; 50_000];
                    split.sort(&pool, &parts, |part| part, &mut out);
                    assert_eq!(out, one_thread, "{threads} threads, versions {versions}");
                }
                assert!(
                    split.ranges.iter().all(|range| !range.contacts.is_empty()),
                    "the work is split, {threads} threads"
                );
            }
        }
    }

    #[test]
    fn split_sort_of_pairs_of_one_first_collider_fills_one_range() {
        // Every sample is the same collider: the ranges after the first all start at it, so the last
        // takes every pair and the others stay empty.
        let crowd = crowd(20_000);
        let mut one_thread = crowd.clone();
        sort_contacts(&mut one_thread, &mut Vec::new(), &mut Vec::new());
        let pool = TaskPoolBuilder::new().num_threads(4).build();
        let mut split = SplitSort::default();
        let mut out = Vec::new();
        split.sort(&pool, &[crowd.as_slice()], |part| part, &mut out);
        assert_eq!(out, one_thread, "sorted as on one thread");
        let lens: Vec<usize> = split
            .ranges
            .iter()
            .map(|range| range.contacts.len())
            .collect();
        assert_eq!(lens, [0, 0, 0, 20_000], "every pair in the last range");
    }

    #[test]
    fn split_sort_of_nothing_is_empty() {
        let pool = TaskPoolBuilder::new().num_threads(2).build();
        let mut out = pairs(10, 10, 0);
        let parts: [&[PairContact]; 2] = [&[], &[]];
        SplitSort::default().sort(&pool, &parts, |part| part, &mut out);
        assert!(out.is_empty(), "no contacts");
    }
}
