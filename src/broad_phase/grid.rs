//! A uniform grid over the colliders' bounding boxes, rebuilt each update.
//!
//! Each collider belongs to the cell holding its box's lowest corner, and cells are at least as large as
//! the boxes, so two overlapping boxes sit in the same or in adjacent cells: every pair is found once by
//! looking at a collider's own cell and four of its neighbours (east, north-west, north, north-east).
//! The colliders are sorted by cell (a counting sort), so each cell is a contiguous run of the arrays,
//! the pair loop reads memory in sequence, and one box-overlap test is one vector comparison. The loop
//! goes box by box over two runs of the sorted order (the rest of the box's cell with the east cell,
//! and the three cells above), in one inner loop where cells are sparse, with an empty border of cells
//! so that no neighbour needs a bounds check, and it writes every tested pair and keeps only the hits,
//! without a branch on the hit. A loop over cells with a branch per hit took 0.26 ms for 10,000
//! colliders of workload W1, this one 0.13 ms when it was written (two inner loops then); four-wide
//! vector tests over columns of the bounds took 0.21 ms. The cell size comes from a sample of the
//! colliders (a high percentile of their sizes); the region holds every collider within a margin of
//! the sample's 5th to 95th percentiles of their centres. Far-away colliders land in the border cells,
//! and boxes larger than a cell go to a list tested against the cells they reach and, swept along x,
//! against each other.

use bevy::math::bounding::Aabb2d;
use bevy::math::{Vec2, Vec4, Vec4Swizzles};

use super::cell_sort::{CellSort, SortedByCell};
use crate::parallel::pool_for;
use crate::prefetch::{prefetch_ahead, worth_prefetching};

/// At most this many cells per axis.
const MAX_CELLS_PER_AXIS: usize = 4096;
/// How many colliders are sampled to size the grid.
const SAMPLES: usize = 64;
/// Below this many colliders the pair loop runs on one thread.
const PARALLEL_THRESHOLD: usize = 2048;
/// Below this many colliders the sort runs on one thread: on workload W1 at 10,000 with two threads,
/// splitting the sort and the reorder after it took the broad phase from 0.29 to 0.34 ms.
const SORT_PARALLEL_THRESHOLD: usize = 32_768;
/// Up to this many boxes a cell on average, the cells count as sparse: the pair loop tests each box's
/// two runs in one loop.
const SPARSE_BOXES_PER_CELL: usize = 2;

/// The grid's reusable buffers; nothing is allocated once they have grown to the world's size.
#[derive(Debug, Default)]
pub(crate) struct UniformGrid {
    origin: Vec2,
    cell_size: f32,
    inverse_cell_size: f32,
    dims: [usize; 2],
    /// The last column and row a box can be in: `dims` less the border.
    last_cell: Vec2,
    /// For each cell, where its colliders start in the sorted order, then where the boxes too large
    /// for a cell start, then the end.
    cell_start: Vec<u32>,
    /// Each box's cell in the sorted order, [`Self::large_key`] for a box larger than a cell.
    sorted_keys: Vec<u32>,
    /// The sort's buffers.
    cell_sort: CellSort,
    /// The boxes in the sorted order, packed.
    bounds: Vec<Bounds>,
    /// Per-task pair buffers, kept between updates.
    chunk_pairs: Vec<PairBuffer>,
    /// The sorted indices of the boxes too large for a cell, ordered by their lowest x.
    large_by_x: Vec<u32>,
    sample: Vec<f32>,
}

impl UniformGrid {
    /// The key of a box too large for a cell: one past the last cell, so that such boxes sort last.
    #[inline]
    fn large_key(&self) -> u32 {
        (self.dims[0] * self.dims[1]) as u32
    }

    /// The cell holding `point`, clamped to the grid less its border: the first and last columns and
    /// the top row stay empty, so that every cell a box is in has neighbours on each side and above.
    #[inline]
    fn cell_of(&self, point: Vec2) -> [usize; 2] {
        let local = (point - self.origin) * self.inverse_cell_size;
        // `max` turns NaN into the lowest cell, `min` keeps infinities in the grid, and `as` truncates
        // (to `u32`, which takes fewer instructions than `usize`).
        [
            local.x.max(1.0).min(self.last_cell.x) as u32 as usize,
            local.y.max(0.0).min(self.last_cell.y) as u32 as usize,
        ]
    }

    /// The key a box sorts by: its lowest corner's cell, or [`Self::large_key`].
    #[inline]
    fn key(&self, aabb: &Aabb2d) -> u32 {
        let size = aabb.max - aabb.min;
        // Written so that NaN sizes count as large too.
        if !(size.x <= self.cell_size && size.y <= self.cell_size) {
            return self.large_key();
        }
        let [x, y] = self.cell_of(aabb.min);
        (y * self.dims[0] + x) as u32
    }

    /// Sizes the grid from a sample of the boxes. Call it before [`Self::sort`].
    pub(crate) fn fit(&mut self, aabbs: &[Aabb2d]) {
        if aabbs.is_empty() {
            return;
        }
        let stride = (aabbs.len() / SAMPLES).max(1);
        let sampled = || aabbs.iter().step_by(stride);
        let percentile = |values: &mut Vec<f32>, q: f32| {
            values.sort_unstable_by(f32::total_cmp);
            values[((values.len() - 1) as f32 * q) as usize]
        };
        self.sample.clear();
        self.sample
            .extend(sampled().map(|b| (b.max - b.min).max_element()));
        // Cells a quarter larger than nine boxes in ten; the rest are few and go to the large list.
        let mut cell_size = percentile(&mut self.sample, 0.9) * 1.25;
        if !cell_size.is_finite() || cell_size <= 0.0 {
            cell_size = 1.0;
        }
        let (mut p5, mut p95) = (Vec2::ZERO, Vec2::ZERO);
        for axis in 0..2 {
            self.sample.clear();
            self.sample
                .extend(sampled().map(|b| (b.min[axis] + b.max[axis]) * 0.5));
            p5[axis] = percentile(&mut self.sample, 0.05);
            p95[axis] = percentile(&mut self.sample, 0.95);
        }
        // The region: where the boxes' lowest corners are (their cells), over all the boxes, but at
        // most a band's width beyond the sampled 5th and 95th percentiles, so that far-away boxes land
        // in the border cells instead of stretching the grid. The sample alone misjudges the edges by
        // a few hundredths of the spread, and the boxes beyond them then crowd the border cells: at
        // 1,000,000 colliders of workload W1, 5,700 of them shared one corner cell.
        let band = p95 - p5;
        let (lowest, highest) = lowest_corner_extremes(aabbs);
        // By lanes, with `f32::min` and `f32::max`, which skip NaN (glam leaves NaN unspecified).
        let by_lanes =
            |a: Vec2, b: Vec2, f: fn(f32, f32) -> f32| Vec2::new(f(a.x, b.x), f(a.y, b.y));
        let low = by_lanes(lowest, p5 - band, f32::max);
        let high = by_lanes(highest, p95 + band, f32::min);
        // Sparse boxes get larger cells: not many more cells than boxes, so that the per-cell work of
        // the sort and the pair loop stays proportional to the boxes.
        let area = (high - low + 2.0 * cell_size).element_product();
        if area.is_finite() {
            cell_size = cell_size.max((area / (2 * aabbs.len()) as f32).sqrt());
        }
        // A cell of margin either side.
        let (low, high) = (low - cell_size, high + cell_size);
        let dims = ((high - low) / cell_size).ceil();
        // The border: a column either side and a row on top (see `cell_of`).
        self.dims = [
            (dims.x as usize).clamp(1, MAX_CELLS_PER_AXIS) + 2,
            (dims.y as usize).clamp(1, MAX_CELLS_PER_AXIS) + 1,
        ];
        self.last_cell = Vec2::new((self.dims[0] - 2) as f32, (self.dims[1] - 2) as f32);
        // Column 1 starts at the region's low edge.
        self.origin = if low.is_finite() {
            low - Vec2::new(cell_size, 0.0)
        } else {
            Vec2::ZERO
        };
        self.cell_size = cell_size;
        self.inverse_cell_size = cell_size.recip();
    }

    /// Sorts the boxes by cell, row by row (a counting sort, stable, so ties keep the input order), and
    /// writes the order into `order` (`order[k]` is the index of the k-th box). [`Self::find_pairs`] then
    /// works on that order, and [`Self::sorted_aabb`] gives back the k-th box.
    pub(crate) fn sort(&mut self, aabbs: &[Aabb2d], order: &mut Vec<u32>) {
        let mut cell_sort = core::mem::take(&mut self.cell_sort);
        let (mut cell_start, mut sorted_keys, mut bounds) = (
            core::mem::take(&mut self.cell_start),
            core::mem::take(&mut self.sorted_keys),
            core::mem::take(&mut self.bounds),
        );
        cell_sort.sort(
            pool_for(aabbs.len(), SORT_PARALLEL_THRESHOLD),
            aabbs,
            self.large_key(),
            |aabb| self.key(aabb),
            Bounds::of,
            SortedByCell {
                order,
                keys: &mut sorted_keys,
                starts: &mut cell_start,
                bounds: &mut bounds,
            },
        );
        (
            self.cell_sort,
            self.cell_start,
            self.sorted_keys,
            self.bounds,
        ) = (cell_sort, cell_start, sorted_keys, bounds);
    }

    /// Calls `visit` with the sorted index of every box of the grid that overlaps `aabb` (boundary
    /// included): those in cells, then those in [`Self::large`].
    pub(crate) fn for_each_overlapping(&self, aabb: &Aabb2d, mut visit: impl FnMut(usize)) {
        self.for_each_overlapping_in_cells(aabb, &mut visit);
        self.scan_run(aabb, self.large(), visit);
    }

    /// Like [`Self::for_each_overlapping`], without the boxes too large for a cell: a cost that does
    /// not grow with the grid when those are looked up the other way.
    pub(crate) fn for_each_overlapping_in_cells(
        &self,
        aabb: &Aabb2d,
        mut visit: impl FnMut(usize),
    ) {
        if self.bounds.is_empty() {
            return;
        }
        for run in self.runs_reaching(aabb) {
            self.scan_run(aabb, run, &mut visit);
        }
    }

    /// Asks the memory ahead (`prefetch.rs`) for what [`Self::for_each_overlapping_in_cells`] reads
    /// first for `aabb`: where its runs start and end in the sorted order.
    #[inline]
    pub(crate) fn prefetch_runs(&self, aabb: &Aabb2d) {
        if self.bounds.is_empty() {
            return;
        }
        let width = self.dims[0];
        let [x0, y0] = self.cell_of(aabb.min - self.cell_size);
        let [x1, y1] = self.cell_of(aabb.max);
        for y in y0..=y1 {
            prefetch_ahead(&self.cell_start, y * width + x0);
            prefetch_ahead(&self.cell_start, y * width + x1 + 1);
        }
    }

    /// Asks the memory ahead for the boxes that [`Self::for_each_overlapping_in_cells`] compares with
    /// `aabb`: best once [`Self::prefetch_runs`] brought in where they are.
    #[inline]
    pub(crate) fn prefetch_runs_boxes(&self, aabb: &Aabb2d) {
        if self.bounds.is_empty() {
            return;
        }
        for run in self.runs_reaching(aabb).filter(|run| !run.is_empty()) {
            prefetch_ahead(&self.bounds, run.start);
            prefetch_ahead(&self.bounds, run.end - 1);
        }
    }

    /// Whether the boxes outgrow the cache, so that asking for them ahead pays (`prefetch.rs`).
    pub(crate) fn worth_prefetching(&self) -> bool {
        worth_prefetching(&self.bounds)
    }

    /// The sorted indices of the boxes too large for a cell (sorted after every cell).
    pub(crate) fn large(&self) -> core::ops::Range<usize> {
        if self.bounds.is_empty() {
            return 0..0;
        }
        self.first_large()..self.bounds.len()
    }

    /// The k-th box of the sorted order.
    pub(crate) fn sorted_aabb(&self, k: usize) -> Aabb2d {
        self.bounds[k].aabb()
    }

    /// The k-th box of the sorted order.
    #[inline]
    pub(crate) fn sorted_bounds(&self, k: usize) -> Bounds {
        self.bounds[k]
    }

    /// Calls `visit` with each index of `run` whose box overlaps `aabb`.
    #[inline]
    fn scan_run(&self, aabb: &Aabb2d, run: core::ops::Range<usize>, mut visit: impl FnMut(usize)) {
        let reach = Bounds::of(aabb).reach();
        let first = run.start;
        for (offset, bounds) in self.bounds[run].iter().enumerate() {
            if bounds.overlaps(reach) {
                visit(first + offset);
            }
        }
    }

    /// Whether the cells hold at most [`SPARSE_BOXES_PER_CELL`] boxes on average, as of the last sort.
    fn cells_are_sparse(&self) -> bool {
        self.first_large() <= SPARSE_BOXES_PER_CELL * self.dims[0] * self.dims[1]
    }

    /// Where the boxes that fit a cell start in the sorted order, after every cell: the first large box.
    fn first_large(&self) -> usize {
        self.cell_start[self.dims[0] * self.dims[1]] as usize
    }

    /// The runs of the sorted order, a row at a time, holding every box that fits a cell and may overlap
    /// `aabb`: such a box has its lowest corner between `aabb`'s lowest corner less a cell and `aabb`'s
    /// highest corner.
    fn runs_reaching(&self, aabb: &Aabb2d) -> impl Iterator<Item = core::ops::Range<usize>> + '_ {
        let width = self.dims[0];
        let [x0, y0] = self.cell_of(aabb.min - self.cell_size);
        let [x1, y1] = self.cell_of(aabb.max);
        (y0..=y1).map(move |y| {
            self.cell_start[y * width + x0] as usize..self.cell_start[y * width + x1 + 1] as usize
        })
    }

    /// Pairs each box of `boxes` (which fit a cell) with the boxes after it in the forward half of its
    /// neighbourhood, into `out`; in one loop over both runs of a box when `ONE_LOOP`.
    ///
    /// Written for few instructions a box: the mode is a constant, not a branch; the north run's ends
    /// come from one slice, the boxes' keys and bounds from slices of their length, with one bounds
    /// check for all; and the buffer grows outside the loop. While it grew inside, the loop kept its
    /// values on the stack, spilled around the call that growing makes. In 70 updates of workload W1
    /// at 10,000 colliders (callgrind) the pair search took 125.4 million instructions before, 105.7
    /// million after.
    #[inline(always)]
    fn pairs_of_boxes<const ONE_LOOP: bool>(
        &self,
        boxes: core::ops::Range<usize>,
        out: &mut PairBuffer,
    ) {
        let width = self.dims[0];
        let (cell_start, bounds) = (&self.cell_start[..], &self.bounds[..]);
        let (box_keys, box_bounds) = (&self.sorted_keys[boxes.clone()], &bounds[boxes.clone()]);
        // Locals, not the buffer's fields, so that the loop keeps them in registers. `needed` is the
        // room the box that stopped the loop needs.
        let (mut len, mut next, mut needed) = (0, 0, 0);
        loop {
            let slots = &mut out.slots[..];
            while next < box_keys.len() {
                let i = boxes.start + next;
                let cell = box_keys[next] as usize;
                // The rest of the own cell, then the east cell: one run of the sorted order.
                let own_and_east = i + 1..cell_start[cell + 2] as usize;
                // North-west, north and north-east: one run of the next row, its ends from one slice.
                let north_starts = &cell_start[cell + width - 1..cell + width + 3];
                let north = north_starts[0] as usize..north_starts[3] as usize;
                // Plain differences, not `len()`, which guards against reversed ranges: a cell's
                // start is never beyond the next cell's.
                let tests = (own_and_east.end - own_and_east.start) + (north.end - north.start);
                needed = len + tests;
                if slots.len() < needed {
                    break;
                }
                let reach = box_bounds[next].reach();
                let runs = [own_and_east, north];
                if ONE_LOOP {
                    let room = &mut slots[len..needed];
                    len += write_overlapping_in_two_runs(room, bounds, i, reach, runs);
                } else {
                    for run in runs {
                        len = write_overlapping(slots, len, bounds, i, reach, run);
                    }
                }
                next += 1;
            }
            if next == box_keys.len() {
                break;
            }
            PairBuffer::reserve(&mut out.slots, needed);
        }
        out.len = len;
    }

    /// Finds every pair of boxes that overlap (boundary included), as indices into the sorted order, in
    /// a deterministic order, into `pairs`.
    pub(crate) fn find_pairs(&mut self, pairs: &mut Vec<(u32, u32)>) {
        pairs.clear();
        let count = self.bounds.len();
        if count < 2 {
            return;
        }
        let first_large = self.first_large();
        let mut buffers = core::mem::take(&mut self.chunk_pairs);
        let grid = &*self;
        // Where cells hold a box or two, the two runs of a box are short and one loop over both misses
        // fewer loop ends; where they hold many, two plain loops cost less per test.
        let one_loop = grid.cells_are_sparse();
        let boxes_pairs = |boxes: core::ops::Range<usize>, out: &mut PairBuffer| {
            if one_loop {
                grid.pairs_of_boxes::<true>(boxes, out);
            } else {
                grid.pairs_of_boxes::<false>(boxes, out);
            }
        };
        let pool = pool_for(first_large, PARALLEL_THRESHOLD);
        let chunk_count = pool.map_or(1, |pool| pool.thread_num().max(1) * 4);
        let chunk_len = first_large.div_ceil(chunk_count);
        let chunk =
            |k: usize| (k * chunk_len).min(first_large)..((k + 1) * chunk_len).min(first_large);
        buffers.resize_with(chunk_count, PairBuffer::default);
        let mut buffers = match pool {
            Some(pool) => pool.scope(|scope| {
                for (k, mut out) in buffers.drain(..).enumerate() {
                    let boxes_pairs = &boxes_pairs;
                    let boxes = chunk(k);
                    scope.spawn(async move {
                        boxes_pairs(boxes, &mut out);
                        out
                    });
                }
            }),
            None => {
                boxes_pairs(0..first_large, &mut buffers[0]);
                buffers
            }
        };
        // Boxes too large for a cell (sorted last), against the cells they reach...
        let large = buffers.last_mut().expect("at least one buffer");
        for i in first_large..count {
            let reach = self.bounds[i].reach();
            for run in self.runs_reaching(&self.bounds[i].aabb()) {
                PairBuffer::reserve(&mut large.slots, large.len + run.len());
                large.len =
                    write_overlapping(&mut large.slots, large.len, &self.bounds, i, reach, run);
            }
        }
        // ...and against each other, swept along x so that their cost follows their pairs, not the
        // square of their count (2,325 of them at 1,000,000 colliders of workload W1).
        let mut by_x = core::mem::take(&mut self.large_by_x);
        by_x.clear();
        by_x.extend(first_large as u32..count as u32);
        sweep_pairs(&self.bounds, &mut by_x, |i, j| {
            PairBuffer::reserve(&mut large.slots, large.len + 1);
            large.slots[large.len] = (i, j);
            large.len += 1;
        });
        self.large_by_x = by_x;
        for out in &buffers {
            pairs.extend_from_slice(out.pairs());
        }
        self.chunk_pairs = buffers;
    }
}

/// The least and the greatest of the boxes' lowest corners, lane by lane: both in one vector, one
/// `min` a box. With two `Vec2`s and `f32::min` and `f32::max` by lane, the grid's fit took 13.2
/// million instructions in 70 updates of workload W1 at 10,000 colliders (callgrind), about 5.8
/// million with this; the broad phase's lower alternating runs took 0.268 to 0.274 ms before, 0.260 to
/// 0.265 ms after. On x86 a box with NaN counts for nothing (`minps` returns its second operand, the
/// running result, when either is NaN); elsewhere NaN may come out, which [`UniformGrid::fit`]'s clamps
/// replace, as `f32::max` and `f32::min` skip NaN.
fn lowest_corner_extremes(aabbs: &[Aabb2d]) -> (Vec2, Vec2) {
    let mut extremes = Vec4::INFINITY;
    for aabb in aabbs {
        extremes = Vec4::new(aabb.min.x, aabb.min.y, -aabb.min.x, -aabb.min.y).min(extremes);
    }
    (extremes.xy(), -extremes.zw())
}

/// Calls `pair` with every two boxes of `indices` (into `bounds`) that overlap, boundary included: sorts
/// `indices` by the boxes' lowest x, then pairs each box with those after it that start before it ends.
/// A box with a NaN bound overlaps nothing.
fn sweep_pairs(bounds: &[Bounds], indices: &mut [u32], mut pair: impl FnMut(u32, u32)) {
    let min_x = |index: u32| bounds[index as usize].0.x;
    // `total_cmp` sorts NaN to the ends, so a NaN never interrupts the sweep between two boxes.
    indices.sort_unstable_by(|&a, &b| min_x(a).total_cmp(&min_x(b)));
    for (k, &i) in indices.iter().enumerate() {
        let reach = bounds[i as usize].reach();
        for &j in &indices[k + 1..] {
            // False past box i's end, and for a NaN, which ends the sweep: such a box overlaps nothing.
            let starts_before_end = min_x(j) <= reach.x;
            if !starts_before_end {
                break;
            }
            if bounds[j as usize].overlaps(reach) {
                pair(i, j);
            }
        }
    }
}

/// Pairs written without a branch on each test: every tested pair is written, and the length moves on
/// past the hits only, so the loop mispredicts neither hits nor misses.
#[derive(Debug, Default)]
struct PairBuffer {
    /// The pairs up to `len`, then room to write the next run's tests into.
    slots: Vec<(u32, u32)>,
    len: usize,
}

impl PairBuffer {
    fn pairs(&self) -> &[(u32, u32)] {
        &self.slots[..self.len]
    }

    /// Grows `slots` to at least `needed`.
    #[inline(always)]
    fn reserve(slots: &mut Vec<(u32, u32)>, needed: usize) {
        if slots.len() < needed {
            slots.resize(needed.max(slots.len() * 2), (0, 0));
        }
    }
}

/// Writes the pairs of box `i`, whose [`Bounds::reach`] is `reach`, with each box of `run` into `slots`
/// from `len`, keeping those that overlap; returns the new length. `slots` must have room for the run.
#[inline(always)]
fn write_overlapping(
    slots: &mut [(u32, u32)],
    mut len: usize,
    bounds: &[Bounds],
    i: usize,
    reach: Vec4,
    run: core::ops::Range<usize>,
) -> usize {
    let first = run.start;
    for (offset, other) in bounds[run].iter().enumerate() {
        slots[len] = (i as u32, (first + offset) as u32);
        len += other.overlap_count(reach);
    }
    len
}

/// [`write_overlapping`] over two runs in one loop, which moves from the first run to the second without
/// a branch, into `room`, which holds a slot for every box of both runs; returns how many pairs it kept
/// at its start. One loop end per box for the branch predictor to miss, not two, for a few more
/// instructions per test. With a box or so a cell, as in workload W1, the pair loop took 0.180 ms
/// instead of 0.194 ms for 10,000 colliders; with ten, as in W2, it took longer (broad phase 0.70 ms
/// instead of 0.64 ms), so the grid uses it only for sparse cells. Handed its room as a slice of the
/// runs' length, worked out by plain differences, the pair search took 97.9 million instructions in 70
/// updates of W1 at 10,000 (callgrind), against 102.8 million when it sliced the buffer itself from
/// the runs' `len()`.
#[inline(always)]
fn write_overlapping_in_two_runs(
    room: &mut [(u32, u32)],
    bounds: &[Bounds],
    i: usize,
    reach: Vec4,
    [first, second]: [core::ops::Range<usize>; 2],
) -> usize {
    let mut written = 0;
    // The index walks the first run and jumps, by a conditional move, to the second where the first
    // ends: two instructions a test fewer than working out each index from the count of tests (the
    // pair search took 104.3 million instructions in 70 updates of W1 at 10,000, callgrind, against
    // 105.7 million).
    let mut j = if first.is_empty() {
        second.start
    } else {
        first.start
    };
    for _ in 0..room.len() {
        room[written] = (i as u32, j as u32);
        written += bounds[j].overlap_count(reach);
        j += 1;
        if j == first.end {
            j = second.start;
        }
    }
    written
}

/// A box packed for a one-instruction overlap test: `(min.x, min.y, -max.x, -max.y)`.
///
/// Boxes `a` and `b` overlap (boundary included) when `b.min <= a.max` and `a.min <= b.max`, that is when
/// every lane of `b`'s packed form is at most the matching lane of `a`'s [`Bounds::reach`],
/// `(max.x, max.y, -min.x, -min.y)`. A NaN lane compares false, so a box with NaN overlaps nothing.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Bounds(Vec4);

impl Bounds {
    /// Whether `self` holds `inner` (boundary included): in the packed form, every lane of `inner` is
    /// at least the matching lane of `self`. A NaN lane compares false, so nothing holds a box with
    /// NaN.
    #[inline]
    pub(super) fn contains(self, inner: Bounds) -> bool {
        inner.0.cmpge(self.0).all()
    }

    /// How far each side of `inner` may still move out before it leaves `self`, in the packed lanes'
    /// order (left, bottom, right, top); a side already out is negative, and a NaN box gives NaN.
    #[inline]
    pub(super) fn room_to(self, inner: Bounds) -> Vec4 {
        inner.0 - self.0
    }

    /// A box that overlaps nothing, itself included (NaN in every lane).
    pub(super) const NOWHERE: Self = Self(Vec4::NAN);

    #[inline]
    pub(super) fn of(aabb: &Aabb2d) -> Self {
        Self(Vec4::new(aabb.min.x, aabb.min.y, -aabb.max.x, -aabb.max.y))
    }

    #[inline]
    fn aabb(&self) -> Aabb2d {
        Aabb2d {
            min: self.0.xy(),
            max: -self.0.zw(),
        }
    }

    /// `(max.x, max.y, -min.x, -min.y)`: what another box's packed form must not exceed to overlap.
    #[inline]
    pub(super) fn reach(&self) -> Vec4 {
        -self.0.zwxy()
    }

    #[inline]
    pub(super) fn overlaps(&self, reach: Vec4) -> bool {
        self.0.cmple(reach).all()
    }

    /// [`Self::overlaps`] as 1 or 0, for a count: the lanes' mask plus one reaches 16, its fifth bit,
    /// only when all four lanes are set, which takes an instruction less than comparing the mask (the
    /// pair search: 102.8 million instructions in 70 updates of W1 at 10,000 against 104.3 million).
    #[inline]
    pub(super) fn overlap_count(&self, reach: Vec4) -> usize {
        ((self.0.cmple(reach).bitmask() + 1) >> 4) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_box(x: f32, y: f32) -> Aabb2d {
        Aabb2d {
            min: Vec2::new(x, y),
            max: Vec2::new(x + 1.0, y + 1.0),
        }
    }

    #[test]
    fn lowest_corner_extremes_match_a_fold_by_lanes_and_skip_nan() {
        let mut aabbs: Vec<Aabb2d> = (0..300)
            .map(|i| {
                let t = i as f32;
                unit_box((t * 7.31).sin() * 50.0, (t * 3.17).cos() * 50.0)
            })
            .collect();
        aabbs.push(Aabb2d {
            min: Vec2::new(f32::NEG_INFINITY, 3.0),
            max: Vec2::new(0.0, 4.0),
        });
        aabbs.push(Aabb2d {
            min: Vec2::new(2.0, 1e30),
            max: Vec2::new(3.0, f32::INFINITY),
        });
        let by_lanes =
            |a: Vec2, b: Vec2, f: fn(f32, f32) -> f32| Vec2::new(f(a.x, b.x), f(a.y, b.y));
        let expected = aabbs.iter().fold(
            (Vec2::INFINITY, Vec2::NEG_INFINITY),
            |(lowest, highest), aabb| {
                (
                    by_lanes(lowest, aabb.min, f32::min),
                    by_lanes(highest, aabb.min, f32::max),
                )
            },
        );
        assert_eq!(expected.0.x, f32::NEG_INFINITY);
        assert_eq!(expected.1.y, 1e30);
        assert_eq!(lowest_corner_extremes(&aabbs), expected);
        // On x86, boxes with NaN count for nothing, first or not (elsewhere `fit` clamps NaN away).
        if cfg!(target_arch = "x86_64") {
            let mut with_nan = aabbs.clone();
            with_nan.insert(
                150,
                Aabb2d {
                    min: Vec2::NAN,
                    max: Vec2::ONE,
                },
            );
            with_nan.insert(
                0,
                Aabb2d {
                    min: Vec2::new(f32::NAN, 0.0),
                    max: Vec2::ONE,
                },
            );
            assert_eq!(lowest_corner_extremes(&with_nan), expected);
        }
        assert_eq!(
            lowest_corner_extremes(&[]),
            (Vec2::INFINITY, Vec2::NEG_INFINITY)
        );
    }

    #[test]
    fn packed_bounds_overlap_like_boxes() {
        let reach = Bounds::of(&unit_box(0.0, 0.0)).reach();
        assert!(
            Bounds::of(&unit_box(1.0, 1.0)).overlaps(reach),
            "corners touch"
        );
        assert!(
            Bounds::of(&unit_box(-1.0, 0.5)).overlaps(reach),
            "edges touch"
        );
        assert!(Bounds::of(&unit_box(0.5, 0.5)).overlaps(reach), "overlap");
        assert!(
            !Bounds::of(&unit_box(1.01, 0.0)).overlaps(reach),
            "apart in x"
        );
        assert!(
            !Bounds::of(&unit_box(0.0, -1.01)).overlaps(reach),
            "apart in y"
        );
        assert!(
            !Bounds::of(&unit_box(f32::NAN, 0.0)).overlaps(reach),
            "NaN overlaps nothing"
        );
        assert_eq!(
            Bounds::of(&unit_box(2.0, 3.0)).aabb(),
            unit_box(2.0, 3.0),
            "packing round-trips"
        );
    }

    #[test]
    fn packed_bounds_contain_like_boxes() {
        let outer = Bounds::of(&Aabb2d::new(Vec2::ZERO, Vec2::splat(2.0)));
        let inside = |center: Vec2, half_size: f32| {
            outer.contains(Bounds::of(&Aabb2d::new(center, Vec2::splat(half_size))))
        };
        assert!(inside(Vec2::ZERO, 1.0), "well inside");
        assert!(inside(Vec2::ZERO, 2.0), "the same box");
        assert!(
            inside(Vec2::new(1.0, -1.0), 1.0),
            "touching two sides from within"
        );
        assert!(!inside(Vec2::new(1.01, 0.0), 1.0), "out past max x");
        assert!(!inside(Vec2::new(-1.01, 0.0), 1.0), "out past min x");
        assert!(!inside(Vec2::new(0.0, 1.01), 1.0), "out past max y");
        assert!(!inside(Vec2::new(0.0, -1.01), 1.0), "out past min y");
        assert!(!inside(Vec2::ZERO, 3.0), "larger");
        assert!(
            !inside(Vec2::new(f32::NAN, 0.0), 1.0),
            "NaN lies in nothing"
        );
        assert!(
            !Bounds::NOWHERE.contains(Bounds::of(&unit_box(0.0, 0.0))),
            "nowhere holds nothing"
        );
    }

    #[test]
    fn overlap_count_is_one_exactly_when_the_bounds_overlap() {
        // Every combination of lanes that pass and fail, NaN and infinities among the failing and
        // passing values.
        let reach = Vec4::new(1.0, 2.0, 3.0, 4.0);
        let values = |limit: f32| [limit, limit - 1.0, f32::NEG_INFINITY, limit + 1.0, f32::NAN];
        let mut counted = [0; 2];
        for x in values(reach.x) {
            for y in values(reach.y) {
                for z in values(reach.z) {
                    for w in values(reach.w) {
                        let bounds = Bounds(Vec4::new(x, y, z, w));
                        let overlaps = bounds.overlaps(reach);
                        assert_eq!(
                            bounds.overlap_count(reach),
                            usize::from(overlaps),
                            "{bounds:?}"
                        );
                        counted[usize::from(overlaps)] += 1;
                    }
                }
            }
        }
        assert_eq!(counted, [5usize.pow(4) - 3usize.pow(4), 3usize.pow(4)]);
    }

    #[test]
    fn every_box_of_a_lattice_lies_inside_the_grid_whatever_the_sample_sees() {
        // 80 columns by 80 rows, row by row: the sample (every 100th box) sees only columns 0, 20, 40
        // and 60, so its percentiles miss the last 19 columns, which must still get cells of their
        // own rather than crowd the border.
        let boxes: Vec<Aabb2d> = (0..6400)
            .map(|i| unit_box((i % 80) as f32 * 2.0, (i / 80) as f32 * 2.0))
            .collect();
        let mut grid = UniformGrid::default();
        grid.fit(&boxes);
        let interior_end = Vec2::new((grid.dims[0] - 1) as f32, (grid.dims[1] - 1) as f32);
        for aabb in &boxes {
            let local = (aabb.min - grid.origin) * grid.inverse_cell_size;
            assert!(
                local.x >= 1.0 && local.y >= 0.0 && local.cmplt(interior_end).all(),
                "{aabb:?} is in cell {local} of a grid of {:?} cells",
                grid.dims
            );
        }
    }

    #[test]
    fn sparse_and_crowded_cells_pair_like_brute_force() {
        // The same 3,000 boxes spread wide (under a box a cell: one loop over both runs) and packed
        // tight (many a cell: a loop per run).
        for (spread, crowded) in [(150.0, false), (25.0, true)] {
            let boxes: Vec<Aabb2d> = (0..3000)
                .map(|i| {
                    let t = i as f32;
                    let size = 0.5 + (t * 0.37).sin().abs();
                    let min = Vec2::new((t * 7.31).sin(), (t * 3.17).cos()) * spread;
                    Aabb2d {
                        min,
                        max: min + Vec2::new(size, size * 0.7),
                    }
                })
                .collect();
            let mut grid = UniformGrid::default();
            grid.fit(&boxes);
            let mut order = Vec::new();
            grid.sort(&boxes, &mut order);
            assert_eq!(
                grid.cells_are_sparse(),
                !crowded,
                "{} boxes in {:?} cells",
                grid.first_large(),
                grid.dims
            );
            let mut found = Vec::new();
            grid.find_pairs(&mut found);
            let mut found: Vec<(u32, u32)> = found
                .into_iter()
                .map(|(i, j)| {
                    let (i, j) = (order[i as usize], order[j as usize]);
                    (i.min(j), i.max(j))
                })
                .collect();
            found.sort_unstable();
            let mut expected = Vec::new();
            for (i, a) in boxes.iter().enumerate() {
                for (j, b) in boxes.iter().enumerate().skip(i + 1) {
                    if a.min.cmple(b.max).all() && b.min.cmple(a.max).all() {
                        expected.push((i as u32, j as u32));
                    }
                }
            }
            assert!(expected.len() > 300, "{} pairs to find", expected.len());
            assert_eq!(found, expected, "crowded: {crowded}");
        }
    }

    #[test]
    fn asking_ahead_for_look_ups_never_panics_and_changes_no_look_up() {
        let boxes: Vec<Aabb2d> = (0..400)
            .map(|i| unit_box((i % 20) as f32 * 1.5, (i / 20) as f32 * 1.5))
            .collect();
        let mut grid = UniformGrid::default();
        let queries = [
            unit_box(0.0, 0.0),
            unit_box(28.5, 28.5),
            unit_box(-100.0, 500.0),
            unit_box(f32::NAN, 3.0),
            Aabb2d {
                min: Vec2::NEG_INFINITY,
                max: Vec2::INFINITY,
            },
        ];
        let look_up = |grid: &UniformGrid, aabb: &Aabb2d| {
            let mut found = Vec::new();
            grid.for_each_overlapping_in_cells(aabb, |k| found.push(k));
            found
        };
        // An empty grid first, then the lattice's; the grid's border cells and beyond included.
        for aabb in &queries {
            grid.prefetch_runs(aabb);
            grid.prefetch_runs_boxes(aabb);
        }
        grid.fit(&boxes);
        let mut order = Vec::new();
        grid.sort(&boxes, &mut order);
        for aabb in &queries {
            let before = look_up(&grid, aabb);
            grid.prefetch_runs(aabb);
            grid.prefetch_runs_boxes(aabb);
            assert_eq!(look_up(&grid, aabb), before, "{aabb:?}");
        }
        assert_eq!(
            look_up(&grid, &queries[0]).len(),
            1,
            "one box at the origin"
        );
    }

    #[test]
    fn sort_is_by_cell_and_stable() {
        let boxes: Vec<Aabb2d> = (0..200)
            .map(|i| unit_box(((i * 37) % 50) as f32, ((i * 11) % 30) as f32))
            .collect();
        let mut grid = UniformGrid::default();
        grid.fit(&boxes);
        let mut order = Vec::new();
        grid.sort(&boxes, &mut order);
        let sorted: Vec<(u32, u32)> = order
            .iter()
            .map(|&index| (grid.key(&boxes[index as usize]), index))
            .collect();
        let mut expected = sorted.clone();
        expected.sort_unstable();
        assert_eq!(sorted, expected, "by cell, ties in input order");
        assert!(
            sorted.windows(2).any(|w| w[0].0 != w[1].0),
            "the boxes span several cells"
        );
    }
}
