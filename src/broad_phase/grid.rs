//! A uniform grid over the colliders' bounding boxes, rebuilt each update.
//!
//! Each collider belongs to the cell holding its box's lowest corner, and cells are at least as large as
//! the boxes, so two overlapping boxes sit in the same or in adjacent cells: every pair is found once by
//! looking at a collider's own cell and four of its neighbours (east, north-west, north, north-east).
//! The colliders are sorted by cell (a radix sort), so each cell is a contiguous run of the arrays and
//! the pair loop reads memory in sequence. Cell size and region come from a sample of the colliders (a
//! high percentile of their sizes and the 5th to 95th percentiles of their centres): far-away colliders
//! land in the border cells, and boxes larger than a cell go to a list tested against everything.

use bevy::math::Vec2;
use bevy::math::bounding::Aabb2d;
use bevy::tasks::ComputeTaskPool;

/// At most this many cells per axis.
const MAX_CELLS_PER_AXIS: usize = 4096;
/// How many colliders are sampled to size the grid.
const SAMPLES: usize = 64;
/// Below this many colliders the pair loop runs on one thread.
const PARALLEL_THRESHOLD: usize = 2048;
/// The key of a box too large for a cell: sorted after every cell.
const LARGE: u32 = u32::MAX;

/// The grid's reusable buffers; nothing is allocated once they have grown to the world's size.
#[derive(Debug, Default)]
pub(crate) struct UniformGrid {
    origin: Vec2,
    cell_size: f32,
    dims: [usize; 2],
    /// For each cell, where its colliders start in the sorted order; one more slot for the end.
    cell_start: Vec<u32>,
    /// Sorted `(cell, index)` keys, and the radix sort's scratch.
    keyed: Vec<(u32, u32)>,
    scratch: Vec<(u32, u32)>,
    /// Per-task pair buffers, kept between updates.
    chunk_pairs: Vec<Vec<(u32, u32)>>,
    sample: Vec<f32>,
}

impl UniformGrid {
    /// The cell holding `point`, clamped to the grid.
    #[inline]
    fn cell_of(&self, point: Vec2) -> [usize; 2] {
        let local = (point - self.origin) / self.cell_size;
        // `as` saturates: NaN goes to 0, infinities to the ends; the clamp keeps it in the grid.
        [
            (local.x as isize).clamp(0, self.dims[0] as isize - 1) as usize,
            (local.y as isize).clamp(0, self.dims[1] as isize - 1) as usize,
        ]
    }

    /// The key a box sorts by: its lowest corner's cell, or [`LARGE`].
    #[inline]
    fn key(&self, aabb: &Aabb2d) -> u32 {
        let size = aabb.max - aabb.min;
        // Written so that NaN sizes count as large too.
        if !(size.x <= self.cell_size && size.y <= self.cell_size) {
            return LARGE;
        }
        let [x, y] = self.cell_of(aabb.min);
        (y * self.dims[0] + x) as u32
    }

    /// Sizes the grid from a sample of the boxes. Call it before [`Self::spatial_order`].
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
        // Stretch the 5%–95% band to the whole spread it suggests, plus a cell of margin.
        let band = p95 - p5;
        let low = p5 - band * 0.06 - cell_size;
        let high = p95 + band * 0.06 + cell_size;
        let dims = ((high - low) / cell_size).ceil();
        self.dims = [
            (dims.x as usize).clamp(1, MAX_CELLS_PER_AXIS),
            (dims.y as usize).clamp(1, MAX_CELLS_PER_AXIS),
        ];
        self.origin = if low.is_finite() { low } else { Vec2::ZERO };
        self.cell_size = cell_size;
    }

    /// The order that sorts the boxes by cell, row by row, into `order` (`order[k]` is the index of the
    /// k-th box). [`Self::find_pairs`] then expects the boxes in that order.
    pub(crate) fn spatial_order(&mut self, aabbs: &[Aabb2d], order: &mut Vec<u32>) {
        let mut keyed = core::mem::take(&mut self.keyed);
        keyed.clear();
        keyed.extend(
            aabbs
                .iter()
                .enumerate()
                .map(|(index, aabb)| (self.key(aabb), index as u32)),
        );
        radix_sort_by_key(&mut keyed, &mut self.scratch, u32::BITS);
        order.clear();
        order.extend(keyed.iter().map(|&(_, index)| index));
        // Where each cell's run starts in the sorted order.
        let cell_count = self.dims[0] * self.dims[1];
        self.cell_start.clear();
        self.cell_start.resize(cell_count + 1, 0);
        for &(key, _) in &keyed {
            if key != LARGE {
                self.cell_start[key as usize + 1] += 1;
            }
        }
        for cell in 0..cell_count {
            self.cell_start[cell + 1] += self.cell_start[cell];
        }
        self.keyed = keyed;
    }

    /// Finds every pair of boxes that overlap (boundary included) and that `accept` allows, in a
    /// deterministic order, into `pairs`. The boxes must be in the order [`Self::spatial_order`] gave.
    pub(crate) fn find_pairs(
        &mut self,
        aabbs: &[Aabb2d],
        accept: impl Fn(usize, usize) -> bool + Sync,
        pairs: &mut Vec<(u32, u32)>,
    ) {
        pairs.clear();
        debug_assert_eq!(
            aabbs.len(),
            self.keyed.len(),
            "boxes and sorted keys differ"
        );
        if aabbs.len() < 2 {
            return;
        }
        let [width, height] = self.dims;
        let cell_count = width * height;
        let overlap = |a: &Aabb2d, b: &Aabb2d| {
            a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y
        };
        let mut buffers = core::mem::take(&mut self.chunk_pairs);
        let grid = &*self;
        let run = |cell: usize| grid.cell_start[cell] as usize..grid.cell_start[cell + 1] as usize;
        let rows_pairs = |rows: core::ops::Range<usize>, out: &mut Vec<(u32, u32)>| {
            out.clear();
            for y in rows {
                for x in 0..width {
                    let own = run(y * width + x);
                    if own.is_empty() {
                        continue;
                    }
                    // The forward half of the neighbourhood: each pair of cells is visited once.
                    let east = (x + 1 < width).then(|| run(y * width + x + 1));
                    let above = (y + 1 < height).then(|| {
                        let row = (y + 1) * width;
                        run(row + x.saturating_sub(1)).start..run(row + (x + 1).min(width - 1)).end
                    });
                    for i in own.clone() {
                        let a = &aabbs[i];
                        let mut test = |j: usize| {
                            if overlap(a, &aabbs[j]) && accept(i, j) {
                                out.push((i as u32, j as u32));
                            }
                        };
                        (i + 1..own.end).for_each(&mut test);
                        east.clone().into_iter().flatten().for_each(&mut test);
                        above.clone().into_iter().flatten().for_each(&mut test);
                    }
                }
            }
        };
        let pool = ComputeTaskPool::try_get().filter(|_| aabbs.len() >= PARALLEL_THRESHOLD);
        let chunk_count = pool
            .map_or(1, |pool| pool.thread_num().max(1) * 4)
            .min(height);
        buffers.resize_with(chunk_count, Vec::new);
        let band = height.div_ceil(chunk_count);
        let buffers = match pool {
            Some(pool) => pool.scope(|scope| {
                for (chunk, mut out) in buffers.drain(..).enumerate() {
                    let rows_pairs = &rows_pairs;
                    scope.spawn(async move {
                        rows_pairs(chunk * band..((chunk + 1) * band).min(height), &mut out);
                        out
                    });
                }
            }),
            None => {
                rows_pairs(0..height, &mut buffers[0]);
                buffers
            }
        };
        for out in &buffers {
            pairs.extend_from_slice(out);
        }

        // Boxes too large for a cell (sorted last). Any other box that overlaps one has its lowest corner
        // between the large box's lowest corner less a cell and its highest corner: scan those cells' runs,
        // a row at a time (a row's cells are one run in the sorted order).
        let first_large = self.cell_start[cell_count] as usize;
        for i in first_large..aabbs.len() {
            let a = &aabbs[i];
            let [x0, y0] = self.cell_of(a.min - self.cell_size);
            let [x1, y1] = self.cell_of(a.max);
            for y in y0..=y1 {
                let row = run(y * width + x0).start..run(y * width + x1).end;
                for j in row {
                    if overlap(a, &aabbs[j]) && accept(i, j) {
                        pairs.push((i as u32, j as u32));
                    }
                }
            }
            // Large against large, each pair once.
            for (j, b) in aabbs.iter().enumerate().skip(i + 1) {
                if overlap(a, b) && accept(i, j) {
                    pairs.push((i as u32, j as u32));
                }
            }
        }
        self.chunk_pairs = buffers;
    }
}

/// Sorts `items` by their first field's low `key_bits` bits, stably, 8 bits a pass (LSD radix sort):
/// linear, and every pass reads and writes in sequence.
fn radix_sort_by_key(items: &mut Vec<(u32, u32)>, scratch: &mut Vec<(u32, u32)>, key_bits: u32) {
    let mut shift = 0;
    while shift < key_bits {
        let mut counts = [0u32; 257];
        for &(key, _) in items.iter() {
            counts[((key >> shift) & 0xff) as usize + 1] += 1;
        }
        if counts[1..].iter().any(|&c| c as usize == items.len()) {
            shift += 8;
            continue;
        }
        for digit in 0..256 {
            counts[digit + 1] += counts[digit];
        }
        scratch.clear();
        scratch.resize(items.len(), (0, 0));
        for &item in items.iter() {
            let slot = &mut counts[((item.0 >> shift) & 0xff) as usize];
            scratch[*slot as usize] = item;
            *slot += 1;
        }
        core::mem::swap(items, scratch);
        shift += 8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_sort_sorts_stably() {
        let mut items: Vec<(u32, u32)> = (0..2000u32).map(|i| ((i * 7919) % 70_000, i)).collect();
        let mut expected = items.clone();
        expected.sort_by_key(|&(key, _)| key);
        radix_sort_by_key(&mut items, &mut Vec::new(), 17);
        assert_eq!(items, expected, "sorted by key, ties in input order");
    }
}
