//! The grid's sort of boxes by cell: a counting sort, split over Bevy's compute task pool when it has
//! several threads.
//!
//! On one thread it is the plain counting sort: the boxes' keys in input order, a count per cell, the
//! counts turned into starts, then each box placed at its cell's next slot. From
//! [`RUNS_THRESHOLD`] boxes on one thread, the boxes are first split by runs of cells, then counted and
//! placed run by run, so that the counts and places in use fit in the cache. On several threads, each
//! task first takes a slice of the input and lists its boxes by range of cells (ranges of about as many
//! boxes each, judged from a sample of the keys); then each task takes one range, which fills a run of
//! the output no other task writes, and counts and places that range's boxes, reading the lists in
//! input order so that the sort stays stable.

use bevy::math::bounding::Aabb2d;
use bevy::tasks::TaskPool;

use crate::parallel::{push_range_starts, range_of};
use crate::radix_sort::counting_sort_by_bucket;

/// At most this many tasks: each slice keeps room for all its boxes in every range's list.
const MAX_TASKS: usize = 4;
/// From this many boxes the sort on one thread splits them by runs of cells first.
const RUNS_THRESHOLD: usize = 32_768;
/// Cells in a run of [`CellSort::sort_by_runs_of_cells`]: their counts take 32 KiB.
const RUN_CELLS: usize = 8192;
/// Up to this many keys are sampled to split the cells into ranges of about as many boxes each.
const SAMPLES: usize = 256;

/// The sort's buffers, kept between updates.
#[derive(Debug, Default)]
pub(super) struct CellSort {
    /// For each slice of the input, its boxes listed by range.
    lists: Vec<SliceLists>,
    /// The first cell of each range, then one past the last key.
    range_starts: Vec<u32>,
    sample: Vec<u32>,
    /// Each box's key in input order, on one thread.
    input_keys: Vec<u32>,
    /// `(key, index)` of each box, split by runs of cells, and where each run ends (many boxes on one
    /// thread).
    keyed: Vec<(u32, u32)>,
    keyed_scratch: Vec<(u32, u32)>,
    run_ends: Vec<u32>,
}

/// One slice of the input's boxes, as `(index, key)` in input order, listed by range of keys.
#[derive(Debug, Default)]
struct SliceLists {
    /// Range r's list starts at `r * capacity`.
    slots: Vec<(u32, u32)>,
    capacity: usize,
    /// Each range's list's length.
    lens: Vec<usize>,
}

impl SliceLists {
    /// The list of range `range`.
    fn range(&self, range: usize) -> &[(u32, u32)] {
        let start = range * self.capacity;
        &self.slots[start..start + self.lens[range]]
    }
}

/// Where [`CellSort::sort`] writes the boxes' order.
pub(super) struct SortedByCell<'a, B> {
    /// `order[k]` is the input index of the k-th box.
    pub order: &'a mut Vec<u32>,
    /// The k-th box's key.
    pub keys: &'a mut Vec<u32>,
    /// `starts[c]` is where the boxes of key `c` start, and `starts[c + 1]` where they end.
    pub starts: &'a mut Vec<u32>,
    /// What `bound` made of the k-th box.
    pub bounds: &'a mut Vec<B>,
}

impl CellSort {
    /// Sorts `aabbs` by `key`, which must be at most `last_key`, stably, into `out`; over `pool` when
    /// given.
    pub(super) fn sort<B: Copy + Default + Send>(
        &mut self,
        pool: Option<&TaskPool>,
        aabbs: &[Aabb2d],
        last_key: u32,
        key: impl Fn(&Aabb2d) -> u32 + Sync,
        bound: impl Fn(&Aabb2d) -> B + Sync,
        out: SortedByCell<'_, B>,
    ) {
        match pool.filter(|_| !aabbs.is_empty()) {
            Some(pool) => {
                let tasks = pool.thread_num().min(MAX_TASKS);
                self.split_keys(aabbs, last_key, tasks, &key);
                self.list_by_range(pool, aabbs, tasks, &key);
                self.place(pool, aabbs, tasks, &bound, out);
            }
            None if aabbs.len() >= RUNS_THRESHOLD => {
                self.sort_by_runs_of_cells(aabbs, last_key, key, bound, out);
            }
            None => self.sort_on_one_thread(aabbs, last_key, key, bound, out),
        }
    }

    /// The counting sort in two steps, for many boxes on one thread: the boxes first split by runs of
    /// [`RUN_CELLS`] consecutive cells (a counting sort by run, whose counts fit in a few cache lines),
    /// then each run's boxes counted and placed by cell, within counts and places that fit in the
    /// cache. The plain counting sort counts and places each box at a place anywhere in arrays that, at
    /// a million boxes, outgrow the cache. Stable, as the plain sort: both steps keep the input order
    /// of ties.
    fn sort_by_runs_of_cells<B: Copy + Default>(
        &mut self,
        aabbs: &[Aabb2d],
        last_key: u32,
        key: impl Fn(&Aabb2d) -> u32,
        bound: impl Fn(&Aabb2d) -> B,
        out: SortedByCell<'_, B>,
    ) {
        let key_count = last_key as usize + 1;
        let runs = key_count.div_ceil(RUN_CELLS);
        self.keyed.clear();
        self.keyed.extend(
            aabbs
                .iter()
                .enumerate()
                .map(|(index, aabb)| (key(aabb), index as u32)),
        );
        counting_sort_by_bucket(
            &mut self.keyed,
            &mut self.keyed_scratch,
            &mut self.run_ends,
            runs,
            |&(key, _)| key as usize / RUN_CELLS,
        );
        // Every slot is written below: only slots beyond the buffers' last length need a value first.
        out.order.resize(aabbs.len(), 0);
        out.keys.resize(aabbs.len(), 0);
        out.starts.clear();
        out.starts.resize(key_count + 1, 0);
        let (order, keys) = (&mut out.order[..], &mut out.keys[..]);
        let mut run_start = 0;
        for (run, &run_end) in self.run_ends[..runs].iter().enumerate() {
            let (first_cell, end_cell) = (run * RUN_CELLS, ((run + 1) * RUN_CELLS).min(key_count));
            let boxes = &self.keyed[run_start as usize..run_end as usize];
            // As in the plain sort, `ends[c]` is the start of cell `first_cell + c + 1`: the cell's
            // count, then its start, moved on to its end while placing.
            let ends = &mut out.starts[first_cell + 1..end_cell + 1];
            for &(key, _) in boxes {
                ends[key as usize - first_cell] += 1;
            }
            let mut next = run_start;
            for slot in ends.iter_mut() {
                (*slot, next) = (next, next + *slot);
            }
            for &(key, index) in boxes {
                let slot = &mut ends[key as usize - first_cell];
                let place = *slot as usize;
                *slot += 1;
                order[place] = index;
                keys[place] = key;
            }
            run_start = run_end;
        }
        bounds_in_order(out.bounds, out.order, aabbs, bound);
    }

    /// The plain counting sort: each box's key worked out and counted in one pass, the counts turned
    /// into starts, then each box placed at its key's next slot, reading the keys back in input order.
    /// It took the split sort's path with one range before: the keys listed with the boxes' indices,
    /// then counted from that list in a pass of their own and placed from it. In 70 updates of workload
    /// W1 at 10,000 colliders the sort took 67.3 million instructions that way and takes 58.2 million
    /// (callgrind).
    fn sort_on_one_thread<B: Copy + Default>(
        &mut self,
        aabbs: &[Aabb2d],
        last_key: u32,
        key: impl Fn(&Aabb2d) -> u32,
        bound: impl Fn(&Aabb2d) -> B,
        out: SortedByCell<'_, B>,
    ) {
        let key_count = last_key as usize + 1;
        // Every slot is written below: only slots beyond the buffers' last length need a value first.
        self.input_keys.resize(aabbs.len(), 0);
        out.order.resize(aabbs.len(), 0);
        out.keys.resize(aabbs.len(), 0);
        out.starts.clear();
        out.starts.resize(key_count + 1, 0);
        // `ends[c]` is `starts[c + 1]`: each key's count, then its start, moved on to its end while
        // placing.
        let ends = &mut out.starts[1..];
        for (aabb, input_key) in aabbs.iter().zip(&mut self.input_keys) {
            let key = key(aabb);
            *input_key = key;
            ends[key as usize] += 1;
        }
        let mut next = 0;
        for slot in ends.iter_mut() {
            (*slot, next) = (next, next + *slot);
        }
        // Slices, so that their lengths stay in registers across the stores.
        let (order, keys) = (&mut out.order[..], &mut out.keys[..]);
        for (index, &key) in self.input_keys.iter().enumerate() {
            let slot = &mut ends[key as usize];
            let place = *slot as usize;
            *slot += 1;
            order[place] = index as u32;
            keys[place] = key;
        }
        bounds_in_order(out.bounds, out.order, aabbs, bound);
    }

    /// Splits the keys into `tasks` ranges of about as many boxes each, from a sample.
    fn split_keys(
        &mut self,
        aabbs: &[Aabb2d],
        last_key: u32,
        tasks: usize,
        key: &(impl Fn(&Aabb2d) -> u32 + Sync),
    ) {
        self.range_starts.clear();
        self.range_starts.push(0);
        if tasks > 1 {
            self.sample.clear();
            let stride = (aabbs.len() / SAMPLES).max(1);
            self.sample.extend(aabbs.iter().step_by(stride).map(key));
            push_range_starts(&mut self.sample, tasks, &mut self.range_starts);
        }
        self.range_starts.push(last_key + 1);
    }

    /// Lists each slice's boxes by range, one task a slice.
    fn list_by_range(
        &mut self,
        pool: &TaskPool,
        aabbs: &[Aabb2d],
        tasks: usize,
        key: &(impl Fn(&Aabb2d) -> u32 + Sync),
    ) {
        let range_starts = &self.range_starts[1..tasks];
        let slice_len = aabbs.len().div_ceil(tasks);
        self.lists.resize_with(tasks, SliceLists::default);
        let list = |slice: usize, lists: &mut SliceLists| {
            // Room for the whole slice in each range's list.
            lists.capacity = slice_len;
            lists.slots.resize(tasks * slice_len, (0, 0));
            let mut lens = [0; MAX_TASKS];
            let first = (slice * slice_len).min(aabbs.len());
            let last = (first + slice_len).min(aabbs.len());
            for (index, aabb) in (first..last).zip(&aabbs[first..last]) {
                let key = key(aabb);
                // Without a branch: the boxes come in no order of their ranges.
                let range = range_of(key, range_starts);
                lists.slots[range * slice_len + lens[range]] = (index as u32, key);
                lens[range] += 1;
            }
            lists.lens.clear();
            lists.lens.extend_from_slice(&lens[..tasks]);
        };
        pool.scope(|scope| {
            for (slice, lists) in self.lists.iter_mut().enumerate() {
                let list = &list;
                scope.spawn(async move { list(slice, lists) });
            }
        });
    }

    /// Counts and places the boxes, one task a range of keys, each writing its own run of the output.
    fn place<B: Copy + Default + Send>(
        &self,
        pool: &TaskPool,
        aabbs: &[Aabb2d],
        tasks: usize,
        bound: &(impl Fn(&Aabb2d) -> B + Sync),
        out: SortedByCell<'_, B>,
    ) {
        let key_count = *self.range_starts.last().expect("ranges") as usize;
        // Every slot is written below: only slots beyond the buffers' last length need a value first.
        out.order.resize(aabbs.len(), 0);
        out.keys.resize(aabbs.len(), 0);
        out.bounds.resize(aabbs.len(), B::default());
        out.starts.resize(key_count + 1, 0);
        out.starts[0] = 0;
        let lists = &self.lists;
        // Fills one range's run of the output, which starts at `base`; `ends` is `starts[c + 1]` for
        // each key c of the range.
        let place_range = |range: usize,
                           base: u32,
                           ends: &mut [u32],
                           order: &mut [u32],
                           keys: &mut [u32],
                           bounds: &mut [B]| {
            let first_key = self.range_starts[range];
            let range_lists = || {
                lists
                    .iter()
                    .map(move |slice_lists| slice_lists.range(range))
            };
            ends.fill(0);
            for list in range_lists() {
                for &(_, key) in list {
                    ends[(key - first_key) as usize] += 1;
                }
            }
            // The counts become starts, which the placing moves on to the ends.
            let mut next = base;
            for slot in ends.iter_mut() {
                (*slot, next) = (next, next + *slot);
            }
            for list in range_lists() {
                for &(index, key) in list {
                    let slot = &mut ends[(key - first_key) as usize];
                    let local = (*slot - base) as usize;
                    order[local] = index;
                    keys[local] = key;
                    *slot += 1;
                }
            }
            for (bounds, &index) in bounds.iter_mut().zip(&*order) {
                *bounds = bound(&aabbs[index as usize]);
            }
        };
        let range_len = |range: usize| -> usize {
            lists
                .iter()
                .map(|slice_lists| slice_lists.lens[range])
                .sum()
        };
        pool.scope(|scope| {
            let (mut ends, mut order, mut keys, mut bounds) = (
                &mut out.starts[1..],
                &mut out.order[..],
                &mut out.keys[..],
                &mut out.bounds[..],
            );
            let mut base = 0;
            for range in 0..tasks {
                let (len, key_len) = (
                    range_len(range),
                    (self.range_starts[range + 1] - self.range_starts[range]) as usize,
                );
                let range_ends;
                (range_ends, ends) = core::mem::take(&mut ends).split_at_mut(key_len);
                let range_order;
                (range_order, order) = core::mem::take(&mut order).split_at_mut(len);
                let range_keys;
                (range_keys, keys) = core::mem::take(&mut keys).split_at_mut(len);
                let range_bounds;
                (range_bounds, bounds) = core::mem::take(&mut bounds).split_at_mut(len);
                let place_range = &place_range;
                scope.spawn(async move {
                    place_range(
                        range,
                        base,
                        range_ends,
                        range_order,
                        range_keys,
                        range_bounds,
                    );
                });
                base += len as u32;
            }
        });
    }
}

/// Writes `bounds[k]`, what `bound` makes of the k-th box in `order`, on one thread.
fn bounds_in_order<B: Copy + Default>(
    bounds: &mut Vec<B>,
    order: &[u32],
    aabbs: &[Aabb2d],
    bound: impl Fn(&Aabb2d) -> B,
) {
    bounds.resize(order.len(), B::default());
    for (bounds, &index) in bounds.iter_mut().zip(order) {
        *bounds = bound(&aabbs[index as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::Vec2;
    use bevy::tasks::TaskPoolBuilder;

    /// The greatest key of the test's boxes, as of a grid of 30 by 30 cells: one past its last cell.
    const LAST_KEY: u32 = 900;

    /// A box whose key (its lowest x, truncated) is `key`, and whose lowest y tells boxes of one key
    /// apart.
    fn keyed_box(key: u32, tag: u32) -> Aabb2d {
        let min = Vec2::new(key as f32 + 0.5, tag as f32);
        Aabb2d {
            min,
            max: min + 1.0,
        }
    }

    fn sorted(
        pool: Option<&TaskPool>,
        aabbs: &[Aabb2d],
    ) -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<f32>) {
        let mut sort = CellSort::default();
        // Buffers longer than needed and not zeroed, as kept buffers can be.
        let (mut order, mut keys, mut starts, mut bounds) = (
            vec![7; 30_000],
            vec![7; 30_000],
            vec![7; 2_000],
            vec![7.0; 30_000],
        );
        // Twice, so that the second sort reuses the first's lists.
        for _ in 0..2 {
            sort.sort(
                pool,
                aabbs,
                LAST_KEY,
                |aabb| aabb.min.x as u32,
                |aabb| aabb.min.y,
                SortedByCell {
                    order: &mut order,
                    keys: &mut keys,
                    starts: &mut starts,
                    bounds: &mut bounds,
                },
            );
        }
        (order, keys, starts, bounds)
    }

    #[test]
    fn sorts_by_key_stably_on_one_thread_and_on_several() {
        let mut random = crate::test_rng::xorshift(0x5851_f42d_4c95_7f2d);
        // Keys crowded in a few cells, spread over the rest, and a tenth at the last key (the boxes
        // too large for a cell), so that the ranges of a split hold unequal counts.
        let aabbs: Vec<Aabb2d> = (0..20_000)
            .map(|tag| {
                let bits = random();
                let key = match bits % 10 {
                    0 => LAST_KEY,
                    1..=3 => 400 + (bits >> 8) as u32 % 3,
                    _ => (bits >> 8) as u32 % LAST_KEY,
                };
                keyed_box(key, tag)
            })
            .collect();
        let mut expected: Vec<u32> = (0..aabbs.len() as u32).collect();
        expected.sort_by_key(|&index| aabbs[index as usize].min.x as u32);
        for threads in [2, 3, 5] {
            let pool = TaskPoolBuilder::new().num_threads(threads).build();
            for pool in [None, Some(&pool)] {
                let (order, keys, starts, bounds) = sorted(pool, &aabbs);
                let split = pool.is_some();
                assert_eq!(order, expected, "by key, ties in input order: {split}");
                for (k, &index) in order.iter().enumerate() {
                    assert_eq!(keys[k], aabbs[index as usize].min.x as u32, "{split}");
                    assert_eq!(bounds[k], aabbs[index as usize].min.y, "{split}");
                }
                assert_eq!(starts.len(), LAST_KEY as usize + 2, "{split}");
                for key in 0..=LAST_KEY {
                    let run = starts[key as usize] as usize..starts[key as usize + 1] as usize;
                    assert!(
                        keys[run.clone()].iter().all(|&k| k == key),
                        "key {key}'s run {run:?}: {split}"
                    );
                }
                assert_eq!(starts[0], 0, "{split}");
                assert_eq!(*starts.last().unwrap() as usize, aabbs.len(), "{split}");
            }
        }
    }

    #[test]
    fn sorts_many_boxes_by_runs_of_cells_as_the_plain_sort_does() {
        // Keys over several runs of cells, a last run cut short, crowded cells, empty stretches and
        // the last key, in more boxes than the plain sort takes on one thread.
        let last_key = 3 * RUN_CELLS as u32 + 100;
        let mut random = crate::test_rng::xorshift(0x2545_f491_4f6c_dd1d);
        let aabbs: Vec<Aabb2d> = (0..RUNS_THRESHOLD as u32 + 7_000)
            .map(|tag| {
                let bits = random();
                let key = match bits % 10 {
                    0 => last_key,
                    1..=3 => RUN_CELLS as u32 - 1 + (bits >> 8) as u32 % 3,
                    4 => 2 * RUN_CELLS as u32 + 500 + (bits >> 8) as u32 % 1000,
                    _ => (bits >> 8) as u32 % last_key,
                };
                keyed_box(key, tag)
            })
            .collect();
        let sorted_by = |runs: bool| {
            let mut sort = CellSort::default();
            let (mut order, mut keys, mut starts, mut bounds) =
                (vec![7; 5], vec![7; 5], vec![7; 5], vec![7.0; 5]);
            let out = SortedByCell {
                order: &mut order,
                keys: &mut keys,
                starts: &mut starts,
                bounds: &mut bounds,
            };
            let key = |aabb: &Aabb2d| aabb.min.x as u32;
            let bound = |aabb: &Aabb2d| aabb.min.y;
            if runs {
                sort.sort_by_runs_of_cells(&aabbs, last_key, key, bound, out);
            } else {
                sort.sort_on_one_thread(&aabbs, last_key, key, bound, out);
            }
            (order, keys, starts, bounds)
        };
        let by_runs = sorted_by(true);
        let mut expected: Vec<u32> = (0..aabbs.len() as u32).collect();
        expected.sort_by_key(|&index| aabbs[index as usize].min.x as u32);
        assert_eq!(by_runs.0, expected, "by key, ties in input order");
        assert_eq!(
            by_runs,
            sorted_by(false),
            "order, keys, starts and bounds alike"
        );
        assert_eq!(by_runs.2.len(), last_key as usize + 2);
    }

    #[test]
    fn sorts_no_box_and_fewer_boxes_than_threads() {
        let pool = TaskPoolBuilder::new().num_threads(4).build();
        for count in [0, 1, 3] {
            let aabbs: Vec<Aabb2d> = (0..count).map(|tag| keyed_box(5 - tag, tag)).collect();
            let (order, keys, starts, _) = sorted(Some(&pool), &aabbs);
            let expected: Vec<u32> = (0..count).rev().collect();
            assert_eq!(order, expected, "{count} boxes");
            assert_eq!(keys.len(), count as usize);
            assert_eq!(*starts.last().unwrap(), count, "{count} boxes");
        }
    }
}
