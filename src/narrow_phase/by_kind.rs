//! The exact tests, grouped by the two shapes' kinds, so that the choice of test is made once a group
//! rather than once a pair, where the branch predictor cannot guess it.
//!
//! The candidates are grouped a block at a time: the colliders a block names are still in the cache
//! when its groups are tested. On workload W1 the narrow phase took 0.256 to 0.259 ms at 10,000
//! colliders before and takes 0.228 to 0.230 ms (three alternating runs of each binary); at 1,000,000
//! it took 41 ms either way. Grouping all the candidates at once, into one buffer per group, gave
//! 0.236 ms at 10,000 and 57 ms at 1,000,000, where each group's loop read the colliders again from
//! memory. A first version of that read each pair's kinds from the entries and counting-sorted all the
//! candidates in two passes: its grouping cost what the tests saved.
//!
//! The pairs of a grown build, which updates that keep the grid filter, come laid out by their kinds
//! already where the colliders fit the cache ([`KindGroups`]): those need no grouping pass, and no
//! sort either, as each comes with its rank in the order of the contacts: on workload W1 at 10,000
//! colliders the contacts' sort took about 0.05 ms of the narrow phase's 0.16 ms, and the narrow phase
//! takes 0.129 to 0.133 ms without it.

use core::sync::atomic::{AtomicU64, Ordering};

use bevy::prelude::*;

use crate::broad_phase::ColliderEntry;
use crate::geometry::*;
use crate::prefetch::{AHEAD, prefetch_ahead, worth_prefetching};

use super::PairContact;
use super::ranked_changes::RankedChanges;
use crate::kept::for_each_kept;
use crate::radix_sort::{bucket_sort_by_key, counting_sort_by_bucket, radix_sort_by_key};

/// How many groups: one per unordered pair of the three kinds.
const GROUPS: usize = 6;

/// How many candidates are grouped and tested at a time: few enough that the colliders they name stay
/// in the cache between the grouping and the tests, many enough that each group's loop runs long.
const BLOCK: usize = 1024;

/// Tests candidate pairs a block at a time, grouped by their kinds; keeps its buffers between calls.
#[derive(Debug, Default)]
pub(super) struct TestsByKind {
    /// One buffer per pair of kinds, each pair placed as [`placed`] places it.
    groups: [Vec<(u32, u32)>; GROUPS],
    /// The touching pairs of laid-out candidates, each at its rank in the contacts' order
    /// ([`KindGroups`]), and which ranks hold one, 64 to a word.
    by_rank: Vec<PairContact>,
    ranked: Vec<u64>,
    /// What changed since the last update, from both updates' ranks ([`RankedChanges`]).
    pub(super) ranked_changes: RankedChanges,
}

impl TestsByKind {
    /// Tests `candidates` (pairs of slots in `entries`) and pushes the touching ones to `out`,
    /// oriented from the lower entity to the higher.
    pub(super) fn test(
        &mut self,
        candidates: &[(u32, u32)],
        entries: &[ColliderEntry],
        mode: OverlapMode,
        out: &mut Vec<PairContact>,
    ) {
        // The second slots run ahead of the first by up to a row of the grid's cells, and both are new
        // to the cache in large worlds (`prefetch.rs`): a loop for each choice, so that the one that
        // does not ask costs nothing for it.
        if worth_prefetching(entries) {
            self.test_blocks::<true>(candidates, entries, mode, out);
        } else {
            self.test_blocks::<false>(candidates, entries, mode, out);
        }
    }

    /// As [`Self::test`], for candidates laid out already by `groups` (see [`KindGroups`]): no
    /// grouping pass, and no sort. Each touching pair is placed at its rank in the contacts' order,
    /// and the ranks are read in order into `out`, with `moved` (touching pairs sorted by pair, none
    /// of them among the candidates) merged in: `out` gets them all, sorted by pair.
    ///
    /// When `every_candidate` (the update tests all its candidates, not only those of the colliders
    /// moved since the build), records the ranks for [`RankedChanges`]; otherwise forgets them.
    #[expect(
        clippy::too_many_arguments,
        reason = "the narrow phase's buffers, borrowed apart"
    )]
    pub(super) fn test_grouped(
        &mut self,
        candidates: &[(u32, u32)],
        groups: &KindGroups,
        entries: &[ColliderEntry],
        mode: OverlapMode,
        moved: &[PairContact],
        every_candidate: bool,
        out: &mut Vec<PairContact>,
    ) {
        let Self {
            by_rank,
            ranked,
            ranked_changes,
            ..
        } = self;
        if by_rank.len() < groups.rank_count {
            by_rank.resize(groups.rank_count, UNPLACED);
        }
        ranked.clear();
        ranked.resize(groups.rank_count.div_ceil(64), 0);
        let mut start = 0;
        for block in &groups.lengths {
            for (group, &len) in block.iter().enumerate() {
                let end = start + usize::from(len);
                let ranks = &groups.ranks[start..end];
                test_group(group, &candidates[start..end], entries, mode, |k, pair| {
                    let rank = ranks[k] as usize;
                    by_rank[rank] = pair;
                    ranked[rank / 64] |= 1 << (rank % 64);
                });
                start = end;
            }
        }
        debug_assert_eq!(start, candidates.len(), "the groups cover the candidates");
        read_ranks_in_order(ranked, by_rank, moved, out);
        if every_candidate {
            ranked_changes.record(groups.ranking_number, ranked, by_rank, moved);
        } else {
            ranked_changes.forget();
        }
    }

    /// [`Self::test`]'s loop, asking for the colliders of the candidate [`AHEAD`] on when `PREFETCH`.
    #[inline(always)]
    fn test_blocks<const PREFETCH: bool>(
        &mut self,
        candidates: &[(u32, u32)],
        entries: &[ColliderEntry],
        mode: OverlapMode,
        out: &mut Vec<PairContact>,
    ) {
        for block in candidates.chunks(BLOCK) {
            group_block::<PREFETCH>(block, entries, &mut self.groups);
            for (group, pairs) in self.groups.iter().enumerate() {
                test_group(group, pairs, entries, mode, |_, pair| out.push(pair));
            }
        }
    }
}

/// What fills the places of [`TestsByKind`]'s pairs by rank before any pair is placed there, and the
/// room [`read_ranks_in_order`] makes before it writes each pair to its place; never read.
const UNPLACED: PairContact = PairContact {
    collider1: Entity::PLACEHOLDER,
    collider2: Entity::PLACEHOLDER,
    contact: Contact {
        normal: Vec2::ZERO,
        depth: 0.0,
    },
};

/// Appends to `out` the pairs of `by_rank` at the ranks marked in `ranked` (a bit a rank, 64 to a
/// word), in the ranks' order, with `moved` (sorted by pair, none of them at a marked rank) merged in:
/// all of them sorted by pair, as the ranks follow the pairs' order.
///
/// `out` is sized first, by counting the marks, and each pair written to its place. Pushed one at a
/// time, each pair went through the stack and `out`'s length was stored and loaded again for every
/// pair, as the compiler cannot tell that the pairs' stores leave the length alone: `valgrind
/// --tool=cachegrind` counted 63.2 million instructions and 13.0 million reads in the narrow phase's
/// system over 70 updates of workload W1 at 10,000 colliders, against 59.1 and 9.8 million now. The
/// pairs from an iterator over a range, which `Vec::extend` writes in place without filling `out`
/// first, took 64.0 million instructions, their branches costing more than the fill.
fn read_ranks_in_order(
    ranked: &[u64],
    by_rank: &[PairContact],
    moved: &[PairContact],
    out: &mut Vec<PairContact>,
) {
    let marked: usize = ranked.iter().map(|word| word.count_ones() as usize).sum();
    let start = out.len();
    out.resize(start + marked + moved.len(), UNPLACED);
    let room = &mut out[start..];
    // No pair's key is `u128::MAX` (an entity's index is never `u32::MAX`), so it stands for "no moved
    // pair left" and compares above every pair.
    let key_of_moved = |m: usize| moved.get(m).map_or(u128::MAX, PairContact::sort_key);
    let (mut at, mut m) = (0, 0);
    let mut next_moved = key_of_moved(0);
    for (word_index, &word) in ranked.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let pair = by_rank[word_index * 64 + bits.trailing_zeros() as usize];
            bits &= bits - 1;
            let key = pair.sort_key();
            while next_moved < key {
                room[at] = moved[m];
                (at, m) = (at + 1, m + 1);
                next_moved = key_of_moved(m);
            }
            room[at] = pair;
            at += 1;
        }
    }
    room[at..].copy_from_slice(&moved[m..]);
}

/// Pairs laid out as [`TestsByKind::test`] groups them, so that the narrow phase need not: a block of
/// [`BLOCK`] pairs at a time, each block's pairs grouped by their kinds and placed as their group's
/// contact function takes them. The broad phase lays out the pairs of a build once, and keeps the
/// layout through its filter of the pairs whose boxes overlap on each update that keeps the grid.
///
/// A pair whose collider changed kind since (a `Collider` replaced by one of another shape while the
/// grid is kept) is tested all the same, through [`WorldShape::contact`] (see [`test_group`]).
///
/// Each pair also has its rank among the build's pairs in the order of `(collider1, collider2)`, the
/// contacts' order, which the entities of a kept grid's slots keep: the narrow phase places each
/// touching pair at its rank and reads them in order ([`TestsByKind::test_grouped`]), without a sort.
#[derive(Debug, Default)]
pub(crate) struct KindGroups {
    /// For each block, how many pairs each group holds, in the groups' order.
    lengths: Vec<[u16; GROUPS]>,
    /// Each pair's rank among the laid-out pairs of the build in the contacts' order (by
    /// `(collider1, collider2)`), below `rank_count`.
    ranks: Vec<u32>,
    rank_count: usize,
    /// Which ranking `ranks` are: a number no other layout's ranks share (see [`next_ranking`]).
    ranking_number: u64,
    /// The groups of the block being laid out.
    scratch: [Vec<(u32, u32)>; GROUPS],
    /// The buffers of [`Self::rank_pairs`].
    ranking: Ranking,
}

/// The buffers of [`KindGroups::arrange`]'s ranking, kept between builds.
#[derive(Debug, Default)]
struct Ranking {
    /// Each entry's entity's bits with its slot above [`KIND_BITS`] bits holding its kind, sorted, and
    /// the sort's buffer.
    entities: Vec<(u64, u32)>,
    entities_scratch: Vec<(u64, u32)>,
    /// For each slot, the rank of its entity among the entries' entities above [`KIND_BITS`] bits
    /// holding its shape's [`kind_index`]: two slots' keys compare as their entities do.
    slot_keys: Vec<u32>,
    /// Each pair's entities' ranks, the lower first, with the pair's place; the sort's buffers.
    pairs: Vec<(u32, u32, u32)>,
    pairs_scratch: Vec<(u32, u32, u32)>,
    starts: Vec<u32>,
}

impl Ranking {
    /// Ranks the entries by their entities and sets [`Self::slot_keys`].
    fn rank_slots(&mut self, entries: &[ColliderEntry]) {
        debug_assert!(entries.len() <= (u32::MAX >> KIND_BITS) as usize);
        let Self {
            entities,
            entities_scratch,
            slot_keys,
            ..
        } = self;
        // Each slot goes with its kind, read here in the entries' order.
        entities.clear();
        entities.extend((entries.iter().zip(0..)).map(|(entry, slot)| {
            let kind = kind_index(&entry.shape) as u32;
            (entry.entity.to_bits(), slot << KIND_BITS | kind)
        }));
        radix_sort_by_key(entities, entities_scratch, |&(bits, _)| u128::from(bits));
        slot_keys.resize(entries.len(), 0);
        for (rank, &(_, slot_and_kind)) in (0u32..).zip(entities.iter()) {
            let slot = (slot_and_kind >> KIND_BITS) as usize;
            slot_keys[slot] = rank << KIND_BITS | slot_and_kind & KIND_MASK;
        }
    }
}

/// The low bits of a slot key ([`Ranking::slot_keys`]) that hold its kind.
const KIND_BITS: u32 = 2;
/// Those bits, set.
const KIND_MASK: u32 = (1 << KIND_BITS) - 1;

impl KindGroups {
    /// Lays out `pairs` (slots of `entries`) in place, and records their groups and ranks.
    ///
    /// The entries are ranked by their entities first, and each slot's rank and kind packed into a
    /// word ([`Ranking::slot_keys`]): the grouping reads those, a few tens of kilobytes, where reading
    /// each pair's two entries took it to the shapes' cache lines and back. On workload W2 the build in
    /// the background took 1.32 to 1.54 ms reading the entries, 1.14 to 1.16 ms reading the keys
    /// (medians of a run's 52 builds, three alternating runs each; `rank_pairs` as it is now).
    pub(crate) fn arrange(&mut self, pairs: &mut [(u32, u32)], entries: &[ColliderEntry]) {
        self.ranking.rank_slots(entries);
        let keys = &self.ranking.slot_keys;
        self.lengths.clear();
        for block in pairs.chunks_mut(BLOCK) {
            group_into(block, &mut self.scratch, |_, i, j| {
                placed_by_keys(i, j, keys)
            });
            let mut lengths = [0; GROUPS];
            let mut at = 0;
            for (length, group) in lengths.iter_mut().zip(&self.scratch) {
                block[at..at + group.len()].copy_from_slice(group);
                at += group.len();
                *length = group.len() as u16;
            }
            self.lengths.push(lengths);
        }
        self.rank_pairs(pairs);
    }

    /// Sets `ranks` to each pair's rank in the order of `(collider1, collider2)`, from the ranks of
    /// the slots' entities ([`Ranking::rank_slots`]): the pairs sorted by the ranks of their lower and
    /// higher entities. Sorting the pairs by their entities' bits instead (128-bit keys, four passes or
    /// more of a radix sort) took 2.0 to 2.2 ms of a build's wall time on workload W2 against 1.6 to
    /// 1.8 ms, and W2's pipeline 1.93 ms against 1.82 ms, its updates waiting for the longer builds.
    ///
    /// Where the pairs are fewer than two an entity (W1), a counting sort by the lower rank and a sort
    /// of each such run by the higher one; with more, as in a pile (about seven an entity on W2's
    /// grown boxes), stable counting sorts by the higher rank and then by the lower, in place of the
    /// runs' sorts, whose comparisons the branch predictor misses, as in the contacts' sort
    /// (`contact_sort.rs`). W2's build in the background took 1.87 to 2.11 ms with the runs' sorts
    /// and 1.32 to 1.54 ms with the counting sorts (medians of a run's 52 builds, three alternating
    /// runs each, timed on the pool's thread): longer than the runner's update, which then waited for
    /// it, where it now waits seldom (the forty-third round's item in `benches/README.md`).
    fn rank_pairs(&mut self, pairs: &[(u32, u32)]) {
        let Ranking {
            slot_keys,
            pairs: ranked,
            pairs_scratch,
            starts,
            ..
        } = &mut self.ranking;
        let rank = |slot: u32| slot_keys[slot as usize] >> KIND_BITS;
        ranked.clear();
        ranked.extend(pairs.iter().zip(0..).map(|(&(i, j), place)| {
            let (i, j) = (rank(i), rank(j));
            (i.min(j), i.max(j), place)
        }));
        let slots = slot_keys.len();
        let lower = |&(lower, _, _): &(u32, u32, u32)| lower as usize;
        if ranked.len() >= 2 * slots {
            let higher = |&(_, higher, _): &(u32, u32, u32)| higher as usize;
            counting_sort_by_bucket(ranked, pairs_scratch, starts, slots, higher);
            counting_sort_by_bucket(ranked, pairs_scratch, starts, slots, lower);
        } else {
            let higher = |&(_, higher, _): &(u32, u32, u32)| higher;
            bucket_sort_by_key(ranked, pairs_scratch, starts, slots, lower, higher);
        }
        self.ranks.resize(pairs.len(), 0);
        for (rank, &(_, _, place)) in (0..).zip(ranked.iter()) {
            self.ranks[place as usize] = rank;
        }
        self.rank_count = pairs.len();
        self.ranking_number = next_ranking();
    }

    /// Pushes to `out` the pairs of each group of `pairs` (laid out by `self`) that `keep` keeps, in
    /// order, and sets `out_groups` to their layout and ranks.
    pub(crate) fn filter(
        &self,
        pairs: &[(u32, u32)],
        out: &mut Vec<(u32, u32)>,
        out_groups: &mut KindGroups,
        keep: impl Fn(u32, u32) -> bool,
    ) {
        out_groups.lengths.clear();
        out_groups.rank_count = self.rank_count;
        out_groups.ranking_number = self.ranking_number;
        let out_start = out.len();
        out.resize(out_start + pairs.len(), (0, 0));
        out_groups.ranks.resize(pairs.len(), 0);
        let (room, room_ranks) = (&mut out[out_start..], &mut out_groups.ranks[..]);
        let (mut start, mut len) = (0, 0);
        let mut kept = [0; GROUPS];
        for (group, &length) in (0..GROUPS).cycle().zip(self.lengths.iter().flatten()) {
            let end = start + usize::from(length);
            let before = len;
            len = keep_run(
                (&pairs[start..end], &self.ranks[start..end]),
                (room, room_ranks),
                len,
                &keep,
            );
            kept[group] = (len - before) as u16;
            if group == GROUPS - 1 {
                out_groups.lengths.push(kept);
            }
            start = end;
        }
        out.truncate(out_start + len);
        out_groups.ranks.truncate(len);
    }
}

/// A number for a new ranking of a build's pairs, which no earlier ranking had: a count shared by every
/// broad phase of the process, as builds in the background rank pairs on other threads.
fn next_ranking() -> u64 {
    static RANKINGS: AtomicU64 = AtomicU64::new(1);
    RANKINGS.fetch_add(1, Ordering::Relaxed)
}

/// Writes each pair of `pairs` that `keep` keeps, and its rank, to `room` and `room_ranks` from `len`
/// on; returns `len` moved on past them.
#[inline(always)]
fn keep_run(
    (pairs, ranks): (&[(u32, u32)], &[u32]),
    (room, room_ranks): (&mut [(u32, u32)], &mut [u32]),
    mut len: usize,
    keep: impl Fn(u32, u32) -> bool,
) -> usize {
    let kept = |k: usize| keep(pairs[k].0, pairs[k].1);
    for_each_kept(pairs.len(), kept, |k| {
        room[len] = pairs[k];
        room_ranks[len] = ranks[k];
        len += 1;
    });
    len
}

/// Sets `groups` to the pairs of `block`, each in its group and placed as the group takes it; asks for
/// the colliders of the pair [`AHEAD`] on when `PREFETCH`.
#[inline(always)]
fn group_block<const PREFETCH: bool>(
    block: &[(u32, u32)],
    entries: &[ColliderEntry],
    groups: &mut [Vec<(u32, u32)>; GROUPS],
) {
    group_into(block, groups, |k, i, j| {
        if let Some(&(ahead_i, ahead_j)) = block.get(k + AHEAD).filter(|_| PREFETCH) {
            prefetch_ahead(entries, ahead_i as usize);
            prefetch_ahead(entries, ahead_j as usize);
        }
        placed(i, j, entries)
    });
}

/// Sets `groups` to the pairs of `block`, each in the group `place` gives it (given its index in the
/// block and its slots), placed as `place` places it.
#[inline(always)]
fn group_into(
    block: &[(u32, u32)],
    groups: &mut [Vec<(u32, u32)>; GROUPS],
    mut place: impl FnMut(usize, u32, u32) -> ((u32, u32), usize),
) {
    for group in groups.iter_mut() {
        group.clear();
    }
    for (k, &(i, j)) in block.iter().enumerate() {
        let (pair, group) = place(k, i, j);
        groups[group].push(pair);
    }
}

/// The candidate of slots `i` and `j` as its group takes it, and its group: two colliders of one kind
/// from the lower entity, as their contact is defined, so that the exact tests need not choose; two of
/// different kinds in the order their contact function takes them. A build's slots keep their entities
/// while its layout is kept. Choosing in the exact tests' loop, where the shapes' reads waited for the
/// comparison of the entities, the narrow phase of W1 at 10,000 took 0.114 to 0.116 ms against 0.111
/// to 0.112 ms (three alternating runs each).
#[inline(always)]
fn placed(i: u32, j: u32, entries: &[ColliderEntry]) -> ((u32, u32), usize) {
    let (first, second) = (&entries[i as usize], &entries[j as usize]);
    let kinds = (kind_index(&first.shape), kind_index(&second.shape));
    place_of_kinds(i, j, kinds, || second.entity < first.entity)
}

/// As [`placed`], from the slots' keys ([`Ranking::slot_keys`]) instead of their entries: two slots'
/// keys hold their kinds and compare as their entities do.
#[inline(always)]
fn placed_by_keys(i: u32, j: u32, keys: &[u32]) -> ((u32, u32), usize) {
    let (first, second) = (keys[i as usize], keys[j as usize]);
    let kinds = ((first & KIND_MASK) as usize, (second & KIND_MASK) as usize);
    place_of_kinds(i, j, kinds, || second < first)
}

/// [`placed`]'s choice for slots `i` and `j` of `kinds` (as [`kind_index`] gives them), where
/// `second_is_lower` tells whether `j`'s entity is the lower of the two.
#[inline(always)]
fn place_of_kinds(
    i: u32,
    j: u32,
    (first_kind, second_kind): (usize, usize),
    second_is_lower: impl FnOnce() -> bool,
) -> ((u32, u32), usize) {
    let placing = PLACING_OF_KINDS[first_kind << 2 | second_kind];
    let swap = if first_kind == second_kind {
        second_is_lower()
    } else {
        placing & SWAP != 0
    };
    let pair = if swap { (j, i) } else { (i, j) };
    (pair, usize::from(placing & !SWAP))
}

/// A shape's kind as an index: rectangle 0, rotated rectangle 1, circle 2, the order of
/// [`WorldShape`]'s variants, so that the compiler can take the enum's tag as it is.
#[inline]
fn kind_index(shape: &WorldShape) -> usize {
    match shape {
        WorldShape::Rect(_) => 0,
        WorldShape::RotatedRect(_) => 1,
        WorldShape::Circle(_) => 2,
    }
}

/// In [`PLACING_OF_KINDS`], the bit that says the pair's two slots go the other way round.
const SWAP: u8 = 8;

/// Where a candidate of two kinds goes, indexed by `kind_index(first) << 2 | kind_index(second)`: its
/// group (0 for two rotated rectangles, 1 for a rotated rectangle and a rectangle, 2 for a rotated
/// rectangle and a circle, 3 for two rectangles, 4 for a rectangle and a circle, 5 for two circles),
/// with [`SWAP`] set when the second kind comes first in the contact functions' arguments (rotated
/// rectangle, rectangle, circle: `contact_rotated_rect_rect`, `contact_rect_circle`, ...). One look-up
/// in place of ranking each kind and comparing the ranks: the tests took 63.6 million instructions in
/// 70 updates of W1 at 10,000 colliders before, 61.1 million after (callgrind).
const PLACING_OF_KINDS: [u8; 16] = {
    // The contact functions' order of the kinds, by kind index.
    const RANK: [usize; 3] = [1, 0, 2];
    // The group of two ranks, the lower first.
    const GROUP_OF_RANKS: [[u8; 3]; 3] = [[0, 1, 2], [1, 3, 4], [2, 4, 5]];
    let mut placing = [0; 16];
    let mut first = 0;
    while first < 3 {
        let mut second = 0;
        while second < 3 {
            let (rank_first, rank_second) = (RANK[first], RANK[second]);
            let swap = if rank_first > rank_second { SWAP } else { 0 };
            placing[first << 2 | second] = GROUP_OF_RANKS[rank_first][rank_second] | swap;
            second += 1;
        }
        first += 1;
    }
    placing
};

/// Tests the pairs of one group, each placed as [`placed`] places it, and pushes the touching ones,
/// oriented from the lower entity to the higher. Each group's loop calls its contact function directly:
/// through [`WorldShape::contact`], whose choice the branch predictor learns within a group, the narrow
/// phase took 0.244 to 0.251 ms on W1 at 10,000 against 0.234 to 0.238 ms (both grouping all the
/// candidates at once). A pair whose kinds are not its group's (a collider that changed kind since the
/// broad phase laid out its pairs, see [`KindGroups`]) goes through [`WorldShape::contact`], placed as
/// the group places its pairs, which gives the same contact. `out` is given each touching pair with its
/// index in `pairs`.
fn test_group(
    group: usize,
    pairs: &[(u32, u32)],
    entries: &[ColliderEntry],
    mode: OverlapMode,
    mut out: impl FnMut(usize, PairContact),
) {
    use WorldShape::*;
    match group {
        0 => test_pairs(true, pairs, entries, &mut out, |a, b| match (a, b) {
            (RotatedRect(a), RotatedRect(b)) => contact_rotated_rect_rotated_rect(a, b, mode),
            (a, b) => contact_of_other_kinds(a, b, mode),
        }),
        1 => test_pairs(false, pairs, entries, &mut out, |a, b| match (a, b) {
            (RotatedRect(a), Rect(b)) => contact_rotated_rect_rect(a, b, mode),
            (a, b) => contact_of_other_kinds(a, b, mode),
        }),
        2 => test_pairs(false, pairs, entries, &mut out, |a, b| match (a, b) {
            (RotatedRect(a), Circle(b)) => contact_rotated_rect_circle(a, b, mode),
            (a, b) => contact_of_other_kinds(a, b, mode),
        }),
        3 => test_pairs(true, pairs, entries, &mut out, |a, b| match (a, b) {
            (Rect(a), Rect(b)) => contact_rect_rect(a, b, mode),
            (a, b) => contact_of_other_kinds(a, b, mode),
        }),
        4 => test_pairs(false, pairs, entries, &mut out, |a, b| match (a, b) {
            (Rect(a), Circle(b)) => contact_rect_circle(a, b, mode),
            (a, b) => contact_of_other_kinds(a, b, mode),
        }),
        _ => test_pairs(true, pairs, entries, &mut out, |a, b| match (a, b) {
            (Circle(a), Circle(b)) => contact_circle_circle(a, b, mode),
            (a, b) => contact_of_other_kinds(a, b, mode),
        }),
    }
}

/// [`WorldShape::contact`], for a pair in a group not of its kinds ([`test_group`]): out of the groups'
/// loops, which it would otherwise crowd.
#[cold]
#[inline(never)]
fn contact_of_other_kinds(a: &WorldShape, b: &WorldShape, mode: OverlapMode) -> Option<Contact> {
    a.contact(b, mode)
}

/// The loop of [`test_group`] for one contact function, compiled apart for each.
#[inline(always)]
fn test_pairs(
    same_kind: bool,
    pairs: &[(u32, u32)],
    entries: &[ColliderEntry],
    out: &mut impl FnMut(usize, PairContact),
    contact: impl Fn(&WorldShape, &WorldShape) -> Option<Contact>,
) {
    for (k, &(i, j)) in pairs.iter().enumerate() {
        let (a, b) = (&entries[i as usize], &entries[j as usize]);
        // Two shapes of one kind come from the lower entity ([`placed`]), as their contact is defined.
        // Two of different kinds come in the order their contact function takes them, and the normal
        // is flipped when the entities come the other way: the mirrored contact functions are defined
        // as exactly that.
        debug_assert!(
            !same_kind || a.entity < b.entity,
            "placed from the lower entity"
        );
        let flip = !same_kind && b.entity < a.entity;
        if let Some(contact) = contact(&a.shape, &b.shape) {
            out(
                k,
                PairContact {
                    collider1: a.entity.min(b.entity),
                    collider2: a.entity.max(b.entity),
                    contact: if flip { contact.flipped() } else { contact },
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::Rot2;

    /// The narrow phase's test as it was before the groups: each candidate in turn, oriented from the
    /// lower entity, through the dispatching [`WorldShape::contact`].
    fn one_by_one(
        entries: &[ColliderEntry],
        candidates: &[(u32, u32)],
        mode: OverlapMode,
    ) -> Vec<PairContact> {
        let mut out = Vec::new();
        for &(i, j) in candidates {
            let (a, b) = (&entries[i as usize], &entries[j as usize]);
            let (first, second) = if a.entity < b.entity { (a, b) } else { (b, a) };
            if let Some(contact) = first.shape.contact(&second.shape, mode) {
                out.push(PairContact {
                    collider1: first.entity,
                    collider2: second.entity,
                    contact,
                });
            }
        }
        out
    }

    /// The pairs that start and end from `previous` to `current` (both sorted), by the events' diff.
    fn starts_and_ends(
        (previous, current): (&[PairContact], &[PairContact]),
    ) -> (Vec<PairContact>, Vec<PairContact>) {
        let (mut started, mut ended) = (Vec::new(), Vec::new());
        let removed = Default::default();
        let (start, end) = (
            |pair: &PairContact| started.push(*pair),
            |pair: &PairContact| ended.push(*pair),
        );
        crate::narrow_phase::diff_contacts(previous, current, &removed, start, end);
        (started, ended)
    }

    fn by_pair(mut pairs: Vec<PairContact>) -> Vec<PairContact> {
        pairs.sort_by_key(|pair| (pair.collider1, pair.collider2));
        pairs
    }

    /// 600 colliders of every kind on a grid of half units, and 20,000 candidates among them at random.
    fn random_entries_and_candidates() -> (Vec<ColliderEntry>, Vec<(u32, u32)>) {
        let mut random = crate::test_rng::xorshift(0x2545_f491_4f6c_dd1d);
        let mut next = move |bound: u32| (random() >> 32) as u32 % bound;
        // Shapes of every kind on a grid of half units, so that many touch exactly; sizes in half
        // units; rotations of 0, 90 and 45 degrees and one without symmetry. Entities are numbered
        // at random, so that the lower entity is as often the second slot as the first.
        let count = 600;
        let entity_numbers: Vec<u32> = {
            let mut numbers: Vec<u32> = (0..count).collect();
            for k in (1..numbers.len()).rev() {
                numbers.swap(k, next(k as u32 + 1) as usize);
            }
            numbers
        };
        let rotations = [
            Rot2::IDENTITY,
            Rot2::FRAC_PI_2,
            Rot2::FRAC_PI_4,
            Rot2::radians(0.7),
        ];
        let entries: Vec<ColliderEntry> = (0..count as usize)
            .map(|k| {
                let center = Vec2::new(next(16) as f32, next(16) as f32) * 0.5;
                let half_size = Vec2::new(next(4) as f32 + 1.0, next(4) as f32 + 1.0) * 0.5;
                let shape = match next(3) {
                    0 => WorldShape::Rect(WorldRect::new(center, half_size)),
                    1 => WorldShape::RotatedRect(WorldRotatedRect::new(
                        center,
                        half_size,
                        rotations[next(4) as usize],
                    )),
                    _ => WorldShape::Circle(WorldCircle::new(center, half_size.x)),
                };
                ColliderEntry {
                    entity: Entity::from_raw_u32(entity_numbers[k]).unwrap(),
                    shape,
                }
            })
            .collect();
        let candidates: Vec<(u32, u32)> = (0..20_000)
            .map(|_| (next(count), next(count)))
            .filter(|(i, j)| i != j)
            .collect();
        (entries, candidates)
    }

    #[test]
    fn grouped_tests_give_the_contacts_of_the_tests_one_by_one_bit_for_bit() {
        let (entries, candidates) = random_entries_and_candidates();
        let far_away = ColliderEntry {
            entity: Entity::PLACEHOLDER,
            shape: WorldShape::Circle(WorldCircle::new(Vec2::splat(1e6), 1.0)),
        };
        for mode in [OverlapMode::Closed, OverlapMode::InteriorOnly] {
            let expected = by_pair(one_by_one(&entries, &candidates, mode));
            let touching = expected.len();
            assert!(
                touching > 2_000 && touching < candidates.len() - 2_000,
                "touching and apart pairs in {mode:?}: {touching} of {}",
                candidates.len()
            );
            if mode == OverlapMode::Closed {
                let just_touching = expected.iter().filter(|p| p.contact.depth == 0.0).count();
                assert!(just_touching > 100, "{just_touching} pairs only touch");
            }
            let mut tests = TestsByKind::default();
            // In one go (many blocks), and in uneven slices as the parallel tasks take them.
            let mut whole = Vec::new();
            tests.test(&candidates, &entries, mode, &mut whole);
            assert!(
                tests.groups.iter().all(|group| !group.is_empty()),
                "the last block has all six groups"
            );
            let mut in_slices = Vec::new();
            for slice in candidates.chunks(123) {
                tests.test(slice, &entries, mode, &mut in_slices);
            }
            // The same candidates among entries too many for the cache, whose loop asks for them
            // ahead (`prefetch.rs`): the entries no candidate names lie far away.
            let mut many_entries = entries.clone();
            many_entries.resize(40_000, far_away);
            assert!(worth_prefetching(&many_entries));
            let mut among_many = Vec::new();
            tests.test(&candidates, &many_entries, mode, &mut among_many);
            assert_eq!(by_pair(whole), expected, "in one go, {mode:?}");
            assert_eq!(by_pair(in_slices), expected, "in slices, {mode:?}");
            assert_eq!(by_pair(among_many), expected, "among many, {mode:?}");
        }
    }

    #[test]
    fn ranks_read_in_order_merge_the_moved_pairs_before_between_and_after_them() {
        // Entities of a late generation among the rest, so that keys differ in their high bits too.
        let entity = |index: u32| {
            let generation: u64 = if index.is_multiple_of(5) { 7 } else { 0 };
            Entity::from_bits(Entity::from_raw_u32(index).unwrap().to_bits() | generation << 32)
        };
        let pair = |a: u32, b: u32| PairContact::between(entity(a), entity(b));
        // The build's pairs in their ranks' order: every pair of 40 entities, sorted by pair.
        let by_rank = by_pair(
            (0..40)
                .flat_map(|a| (a + 1..40).map(move |b| pair(a, b)))
                .collect(),
        );
        let ranks = by_rank.len();
        let mut random = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        for case in 0..200 {
            // Ranks marked at random (none in the first case, all in the second), the others moved:
            // a pair is never both.
            let share = [0, 64, 1 + case % 63][case.min(2)];
            let marked: Vec<bool> = (0..ranks).map(|_| random() % 64 < share as u64).collect();
            let moved_share = [0, 16, 1][case % 3];
            let moved: Vec<PairContact> = (by_rank.iter().zip(&marked))
                .filter(|&(_, &is_marked)| !is_marked && random() % 16 < moved_share)
                .map(|(pair, _)| *pair)
                .collect();
            let mut ranked = vec![0u64; ranks.div_ceil(64)];
            for rank in (0..ranks).filter(|&rank| marked[rank]) {
                ranked[rank / 64] |= 1 << (rank % 64);
            }
            let before = pair(41, 42);
            let mut out = vec![before];
            read_ranks_in_order(&ranked, &by_rank, &moved, &mut out);
            let mut expected: Vec<PairContact> = (by_rank.iter().zip(&marked))
                .filter(|&(_, &is_marked)| is_marked)
                .map(|(pair, _)| *pair)
                .chain(moved.iter().copied())
                .collect();
            expected = by_pair(expected);
            expected.insert(0, before);
            assert_eq!(
                out, expected,
                "case {case}: the pair already there, then the marked and moved ones in order"
            );
        }
    }

    #[test]
    fn ranks_follow_the_pairs_entities_across_generations_and_no_pairs_rank_nothing() {
        let (mut entries, mut pairs) = random_entries_and_candidates();
        // Some entities of a later generation, which order after every entity of the first.
        for entry in entries.iter_mut().step_by(7) {
            let bits = entry.entity.to_bits() | (3 << 32);
            entry.entity = Entity::from_bits(bits);
        }
        let mut layout = KindGroups::default();
        let key = |&(i, j): &(u32, u32)| {
            let (a, b) = (entries[i as usize].entity, entries[j as usize].entity);
            (a.min(b), a.max(b))
        };
        // About 33 pairs an entity, ranked by two counting sorts, then half a pair an entity, by a
        // counting sort and a sort of each entity's pairs (`rank_pairs`).
        let sparse = entries.len() / 2;
        assert!(pairs.len() >= 2 * entries.len() && sparse < pairs.len());
        for count in [pairs.len(), sparse] {
            let pairs = &mut pairs[..count];
            layout.arrange(pairs, &entries);
            let mut by_rank = vec![None; pairs.len()];
            for (pair, &rank) in pairs.iter().zip(&layout.ranks) {
                assert!(
                    by_rank[rank as usize].replace(key(pair)).is_none(),
                    "rank {rank} twice of {count}"
                );
            }
            let by_rank: Vec<_> = by_rank.into_iter().map(Option::unwrap).collect();
            assert!(
                by_rank.is_sorted(),
                "ranks in the order of the pairs' entities, {count} pairs"
            );
            assert_eq!(layout.rank_count, pairs.len());
        }
        // A build without pairs, after one with many.
        layout.arrange(&mut [], &entries);
        assert!(layout.ranks.is_empty() && layout.lengths.is_empty());
        let mut out = Vec::new();
        TestsByKind::default().test_grouped(
            &[],
            &layout,
            &entries,
            OverlapMode::Closed,
            &[],
            true,
            &mut out,
        );
        assert!(out.is_empty());
    }

    #[test]
    fn pairs_laid_out_by_kind_and_filtered_give_the_contacts_of_the_tests_one_by_one() {
        let (entries, candidates) = random_entries_and_candidates();
        let mut layout = KindGroups::default();
        let mut arranged = candidates.clone();
        layout.arrange(&mut arranged, &entries);
        let unordered = |pairs: &[(u32, u32)]| {
            let mut pairs: Vec<(u32, u32)> =
                (pairs.iter()).map(|&(i, j)| (i.min(j), i.max(j))).collect();
            pairs.sort_unstable();
            pairs
        };
        assert_eq!(
            unordered(&arranged),
            unordered(&candidates),
            "the same pairs"
        );
        // Each group holds pairs of its kinds, placed as it tests them; the blocks hold `BLOCK` pairs.
        let mut start = 0;
        for block in &layout.lengths {
            let block_len: usize = block.iter().map(|&len| usize::from(len)).sum();
            assert!(block_len == BLOCK || start + block_len == arranged.len());
            for (group, &len) in block.iter().enumerate() {
                for &(i, j) in &arranged[start..start + usize::from(len)] {
                    assert_eq!(placed(i, j, &entries), ((i, j), group), "{i}, {j}");
                    let (first, second) = (&entries[i as usize], &entries[j as usize]);
                    if kind_index(&first.shape) == kind_index(&second.shape) {
                        assert!(
                            first.entity < second.entity,
                            "{i}, {j}: from the lower entity"
                        );
                    }
                }
                start += usize::from(len);
            }
        }
        assert_eq!(start, arranged.len(), "the layout covers the pairs");
        // Filtered, as the broad phase keeps the pairs whose boxes overlap.
        let kept_pair = |i: u32, j: u32| !(i + j).is_multiple_of(3);
        let (mut kept, mut kept_layout) = (Vec::new(), KindGroups::default());
        layout.filter(&arranged, &mut kept, &mut kept_layout, kept_pair);
        let expected_kept: Vec<(u32, u32)> = (candidates.iter().copied())
            .filter(|&(i, j)| kept_pair(i, j))
            .collect();
        assert_eq!(
            unordered(&kept),
            unordered(&expected_kept),
            "the pairs kept"
        );
        // The pairs dropped stand for the pairs of moved colliders, tested apart and merged in.
        let dropped: Vec<(u32, u32)> = (candidates.iter().copied())
            .filter(|&(i, j)| !kept_pair(i, j))
            .collect();
        // The same colliders with the kinds laid out, and each turned into another kind since.
        let changed: Vec<ColliderEntry> = (entries.iter())
            .map(|entry| {
                let aabb = entry.shape.aabb();
                let (center, size) = (entry.shape.center(), (aabb.max - aabb.min) * 0.5);
                let shape = match entry.shape {
                    WorldShape::Rect(_) => WorldShape::Circle(WorldCircle::new(center, size.x)),
                    WorldShape::RotatedRect(_) => WorldShape::Rect(WorldRect::new(center, size)),
                    WorldShape::Circle(_) => WorldShape::RotatedRect(WorldRotatedRect::new(
                        center,
                        size,
                        Rot2::radians(0.7),
                    )),
                };
                ColliderEntry { shape, ..*entry }
            })
            .collect();
        let mut tests = TestsByKind::default();
        // What the last call gave, to check that the changes from the ranks start and end the pairs
        // that the whole lists do.
        let mut last: Option<Vec<PairContact>> = None;
        for mode in [OverlapMode::Closed, OverlapMode::InteriorOnly] {
            for (entries, kinds) in [(&entries, "as laid out"), (&changed, "changed since")] {
                let moved = by_pair(one_by_one(entries, &dropped, mode));
                let laid_out = one_by_one(entries, &kept, mode);
                assert!(laid_out.len() > 1_000, "{kinds}: {} touch", laid_out.len());
                assert!(
                    moved.len() > 500,
                    "{kinds}: {} moved ones touch",
                    moved.len()
                );
                // Sorted as they come, with the moved ones merged in; and without any.
                let mut grouped = Vec::new();
                let layout = &kept_layout;
                tests.test_grouped(&kept, layout, entries, mode, &moved, true, &mut grouped);
                let expected = by_pair([laid_out.clone(), moved.clone()].concat());
                assert_eq!(grouped, expected, "{kinds}, {mode:?}");
                match last.replace(grouped.clone()) {
                    Some(last) => {
                        let changes = tests.ranked_changes.changes().expect("the same ranks");
                        assert_eq!(
                            starts_and_ends(changes),
                            starts_and_ends((&last, &grouped)),
                            "{kinds}, {mode:?}: the changes from the ranks"
                        );
                    }
                    None => assert_eq!(tests.ranked_changes.changes(), None, "the first ranks"),
                }
                grouped.clear();
                tests.test_grouped(&kept, layout, entries, mode, &[], true, &mut grouped);
                assert_eq!(grouped, by_pair(laid_out), "{kinds}, {mode:?}, none moved");
                assert_eq!(
                    tests.ranked_changes.changes(),
                    Some((&moved[..], &[][..])),
                    "{kinds}, {mode:?}: only the moved pairs differ"
                );
                // An update that tests only the moved colliders' pairs records no ranks.
                grouped.clear();
                tests.test_grouped(&kept, layout, entries, mode, &[], false, &mut grouped);
                assert_eq!(
                    tests.ranked_changes.changes(),
                    None,
                    "{kinds}, {mode:?}: forgotten"
                );
                grouped.clear();
                tests.test_grouped(&kept, layout, entries, mode, &[], true, &mut grouped);
                last = Some(grouped);
                assert_eq!(
                    tests.ranked_changes.changes(),
                    None,
                    "{kinds}, {mode:?}: after one"
                );
            }
        }
    }
}
