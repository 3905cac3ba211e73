//! A loose grid, hashed: each proxy lives in the one cell that holds the lower corner of its fat AABB.
//! A proxy no wider than a cell reaches at most into the next cell along each axis, so a query visits
//! the cells of its box and one more row and column below and to the left. Cells are hashed into a
//! table of buckets, so the world needs no bounds and empty space costs nothing; a bucket may hold
//! several cells, told apart by the cell each entry records.

use bevy::math::bounding::{Aabb2d, BoundingVolume, IntersectsVolume};
use bevy::math::{IVec2, Vec2};

/// A box that overlaps nothing: the bounds of an empty grid, and the fat AABB a new proxy had before
/// its update.
pub(crate) const NOWHERE: Aabb2d = Aabb2d {
    min: Vec2::INFINITY,
    max: Vec2::NEG_INFINITY,
};

/// Where the segment from `origin` along a direction whose inverse is `inverse` (infinite along an
/// axis the segment does not move on) enters and leaves `aabb` within `reach`, if it meets it: Ericson,
/// Real-Time Collision Detection, 5.3.3, the slabs. A NaN, where the origin lies on a slab's plane and
/// the segment runs along it, loses to the other operand of `min` and `max`, as a slab the segment
/// stays inside should.
#[inline]
pub(crate) fn segment_in(
    aabb: &Aabb2d,
    origin: Vec2,
    inverse: Vec2,
    reach: f32,
) -> Option<(f32, f32)> {
    let near = (aabb.min - origin) * inverse;
    let far = (aabb.max - origin) * inverse;
    let enter = near.min(far).max_element().max(0.0);
    let exit = near.max(far).min_element().min(reach);
    (enter <= exit).then_some((enter, exit))
}

/// The entries every bucket has room for from the start: a cell holds one to three proxies of the
/// median width, and a bucket about one cell.
const BUCKET_ROOM: usize = 4;

/// One proxy in a bucket: its id, its cell and its fat AABB, side by side so that a query reads the
/// bucket in sequence.
#[derive(Clone, Copy, Debug)]
struct Entry {
    proxy: u32,
    cell: IVec2,
    fat: Aabb2d,
}

/// A loose grid of proxies no wider than [`Self::cell_size`] along either axis.
#[derive(Clone, Debug)]
pub(crate) struct LooseGrid {
    cell_size: f32,
    inverse: f32,
    /// A power of two of buckets, each the entries of the cells hashed to it.
    buckets: Vec<Vec<Entry>>,
    /// 64 less the bits of a bucket's index.
    shift: u32,
    len: usize,
    /// A box around every fat AABB inserted since the grid was made: the reach of a ray.
    bounds: Aabb2d,
}

impl Default for LooseGrid {
    fn default() -> Self {
        Self::new(1.0, 0)
    }
}

impl LooseGrid {
    /// An empty grid of cells of side `cell_size`, with about one bucket per proxy of `capacity`.
    pub(crate) fn new(cell_size: f32, capacity: usize) -> Self {
        let buckets = capacity.max(64).next_power_of_two();
        Self {
            cell_size,
            inverse: cell_size.recip(),
            // Room in every bucket for a few entries from the start, so that proxies moving into
            // buckets they never held do not allocate in a game's steady state.
            buckets: (0..buckets)
                .map(|_| Vec::with_capacity(BUCKET_ROOM))
                .collect(),
            shift: 64 - buckets.trailing_zeros(),
            len: 0,
            bounds: NOWHERE,
        }
    }

    /// The side of a cell.
    pub(crate) fn cell_size(&self) -> f32 {
        self.cell_size
    }

    /// A box around every proxy in the grid, and perhaps around some that left it.
    pub(crate) fn bounds(&self) -> Aabb2d {
        self.bounds
    }

    /// How many proxies the grid holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The widest fat AABB the grid holds: a little narrower than a cell, so that the rounding of cell
    /// coordinates never puts a proxy two cells away from a box it touches.
    pub(crate) fn widest(&self) -> f32 {
        self.cell_size * (1.0 - 1.0 / 64.0)
    }

    /// Whether a proxy with this fat AABB may live in the grid ([`Self::widest`]).
    #[inline]
    pub(crate) fn fits(&self, fat: &Aabb2d) -> bool {
        (fat.max - fat.min).max_element() <= self.widest()
    }

    /// The cell holding `point`.
    #[inline]
    pub(crate) fn cell_of(&self, point: Vec2) -> IVec2 {
        // The floor by a truncating cast, corrected below zero: `f32::floor` is a call into the C
        // library on targets without SSE4.1. Casts saturate, so a far-away point lands in an edge
        // cell, not a wrong one.
        let scaled = point * self.inverse;
        let truncated = scaled.as_ivec2();
        truncated.saturating_sub(IVec2::from(scaled.cmplt(truncated.as_vec2())))
    }

    #[inline]
    fn bucket_of(&self, cell: IVec2) -> usize {
        // A row's cells go to neighbouring buckets, so that a query reads each row of its box in
        // sequence; the rows begin at buckets scattered by Fibonacci hashing, whose high bits mix
        // every bit of the row.
        let row = u64::from(cell.y as u32).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift;
        (row as usize).wrapping_add(cell.x as u32 as usize) & (self.buckets.len() - 1)
    }

    /// The entries of the bucket of `cell`, which may hold other cells' too.
    #[inline]
    fn slots_of(&self, cell: IVec2) -> &[Entry] {
        &self.buckets[self.bucket_of(cell)]
    }

    /// Adds `proxy` with its fat AABB, which must fit ([`Self::fits`]).
    pub(crate) fn insert(&mut self, proxy: u32, fat: Aabb2d) {
        debug_assert!(self.fits(&fat), "proxy {proxy} is wider than a cell");
        if self.len >= 2 * self.buckets.len() {
            self.grow();
        }
        let cell = self.cell_of(fat.min);
        let bucket = self.bucket_of(cell);
        self.buckets[bucket].push(Entry { proxy, cell, fat });
        self.len += 1;
        self.bounds = self.bounds.merge(&fat);
    }

    /// Doubles the buckets, so that a bucket keeps holding about one cell as the proxies grow in number.
    fn grow(&mut self) {
        let mut grown = Self::new(self.cell_size, 2 * self.buckets.len());
        for entry in self.buckets.iter().flatten() {
            let bucket = grown.bucket_of(entry.cell);
            grown.buckets[bucket].push(*entry);
        }
        grown.len = self.len;
        grown.bounds = self.bounds;
        *self = grown;
    }

    /// Removes `proxy`, inserted with the fat AABB `fat`.
    pub(crate) fn remove(&mut self, proxy: u32, fat: &Aabb2d) {
        let at = self.bucket_of(self.cell_of(fat.min));
        let bucket = &mut self.buckets[at];
        let at = bucket.iter().position(|entry| entry.proxy == proxy);
        debug_assert!(at.is_some(), "proxy {proxy} is not in its cell");
        if let Some(at) = at {
            bucket.swap_remove(at);
            self.len -= 1;
        }
    }

    /// Calls `visit` with every proxy whose fat AABB overlaps `aabb` (touching counts), each once.
    pub(crate) fn query(&self, aabb: &Aabb2d, mut visit: impl FnMut(u32)) {
        let low = self.cell_of(aabb.min).saturating_sub(IVec2::ONE);
        let high = self.cell_of(aabb.max);
        let cells = (i64::from(high.x) - i64::from(low.x) + 1)
            .saturating_mul(i64::from(high.y) - i64::from(low.y) + 1);
        // A box over more cells than there are buckets reads every bucket once instead.
        if cells > self.buckets.len() as i64 {
            for entry in self.buckets.iter().flatten() {
                if entry.fat.intersects(aabb) {
                    visit(entry.proxy);
                }
            }
            return;
        }
        for y in low.y..=high.y {
            for x in low.x..=high.x {
                let cell = IVec2::new(x, y);
                for entry in &self.buckets[self.bucket_of(cell)] {
                    if entry.cell == cell && entry.fat.intersects(aabb) {
                        visit(entry.proxy);
                    }
                }
            }
        }
    }

    /// Calls `visit` with the proxies that may meet the segment from `origin` along the unit
    /// `direction`, from `enter` to the reach that `visit` returns (at first `reach`), in the order
    /// the segment reaches their cells: each cell the segment crosses (Amanatides and Woo, "A Fast
    /// Voxel Traversal Algorithm for Ray Tracing"), with the cells below and to the left of it, whose
    /// proxies may reach into it. A proxy meets the segment first in a cell that is visited before
    /// the segment leaves it, so the walk ends once it passes the reach. A proxy may be visited twice.
    /// `visit` is given each proxy's fat AABB.
    pub(crate) fn ray_cast(
        &self,
        origin: Vec2,
        direction: Vec2,
        enter: f32,
        mut reach: f32,
        mut visit: impl FnMut(u32, &Aabb2d, f32) -> f32,
    ) {
        let mut cell = self.cell_of(origin + direction * enter);
        let step = IVec2::new(
            if direction.x < 0.0 { -1 } else { 1 },
            if direction.y < 0.0 { -1 } else { 1 },
        );
        // Where along the ray it crosses the next cell edge on each axis, and how far apart the
        // crossings are; never, along an axis the ray does not move on.
        let crossing = |axis: usize| {
            if direction[axis] == 0.0 {
                return (f32::INFINITY, f32::INFINITY);
            }
            let edge = (cell[axis] + i32::from(step[axis] > 0)) as f32 * self.cell_size;
            let apart = self.cell_size / direction[axis].abs();
            (((edge - origin[axis]) / direction[axis]).max(enter), apart)
        };
        let ((mut next_x, apart_x), (mut next_y, apart_y)) = (crossing(0), crossing(1));
        // The cells read lately, so that the cells shared by neighbouring steps are read once.
        let mut recent = [IVec2::MAX; 16];
        let mut read = 0;
        loop {
            for offset in [IVec2::ZERO, IVec2::NEG_X, IVec2::NEG_Y, IVec2::NEG_ONE] {
                let near = cell.saturating_add(offset);
                if recent.contains(&near) {
                    continue;
                }
                recent[read % recent.len()] = near;
                read += 1;
                for entry in self.slots_of(near) {
                    if entry.cell == near {
                        reach = reach.min(visit(entry.proxy, &entry.fat, reach));
                    }
                }
            }
            let next = next_x.min(next_y);
            if next.is_nan() || next > reach {
                return;
            }
            if next_x < next_y {
                cell.x = cell.x.saturating_add(step.x);
                next_x += apart_x;
            } else {
                cell.y = cell.y.saturating_add(step.y);
                next_y += apart_y;
            }
        }
    }

    /// Every proxy with its fat AABB.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, Aabb2d)> + '_ {
        self.buckets
            .iter()
            .flatten()
            .map(|entry| (entry.proxy, entry.fat))
    }

    /// Checks that every proxy fits, lies in the bucket of the cell of its lower corner, and is
    /// counted; panics with the first broken rule.
    pub(crate) fn validate(&self) {
        let mut count = 0;
        for (bucket, entries) in self.buckets.iter().enumerate() {
            for entry in entries {
                assert!(self.fits(&entry.fat), "proxy {} fits a cell", entry.proxy);
                assert_eq!(
                    entry.cell,
                    self.cell_of(entry.fat.min),
                    "proxy {}'s cell",
                    entry.proxy
                );
                assert_eq!(
                    bucket,
                    self.bucket_of(entry.cell),
                    "proxy {}'s bucket",
                    entry.proxy
                );
                count += 1;
            }
        }
        assert_eq!(count, self.len, "every proxy is counted");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::TestRng;

    fn random_box(rng: &mut TestRng, side: f32, cell: f32) -> Aabb2d {
        let min = Vec2::new(rng.range(-side, side), rng.range(-side, side));
        let size = Vec2::new(rng.range(0.0, cell * 0.98), rng.range(0.0, cell * 0.98));
        Aabb2d {
            min,
            max: min + size,
        }
    }

    fn brute_force(boxes: &[Option<Aabb2d>], query: &Aabb2d) -> Vec<u32> {
        (boxes.iter().enumerate())
            .filter(|(_, fat)| fat.is_some_and(|fat| fat.intersects(query)))
            .map(|(proxy, _)| proxy as u32)
            .collect()
    }

    /// Proxies inserted, moved and removed at random; after each change the grid keeps its rules, and
    /// queries of every size find exactly the boxes brute force finds, each once.
    #[test]
    fn random_changes_keep_the_rules_and_the_queries_exact() {
        let mut rng = TestRng::new(0x6e1d_5eed);
        let (side, cell) = (40.0, 3.0);
        let mut grid = LooseGrid::new(cell, 16);
        let mut boxes: Vec<Option<Aabb2d>> = vec![None; 300];
        for step in 0..3000 {
            let proxy = rng.below(boxes.len());
            if let Some(old) = boxes[proxy].take() {
                grid.remove(proxy as u32, &old);
            }
            if rng.below(4) != 0 {
                let fat = random_box(&mut rng, side, cell);
                grid.insert(proxy as u32, fat);
                boxes[proxy] = Some(fat);
            }
            if step % 100 == 0 {
                grid.validate();
            }
            let reach = [0.0, 1.0, 10.0, 200.0][rng.below(4)];
            let min = Vec2::new(rng.range(-side, side), rng.range(-side, side));
            let query = Aabb2d {
                min,
                max: min + Vec2::new(rng.range(0.0, reach), rng.range(0.0, reach)),
            };
            let mut found = Vec::new();
            grid.query(&query, |proxy| found.push(proxy));
            found.sort_unstable();
            assert_eq!(
                found,
                brute_force(&boxes, &query),
                "query {query:?} at step {step}"
            );
        }
        grid.validate();
    }

    /// Whether the segment from `origin` along the unit `direction` within `reach` meets `aabb`.
    fn segment_meets(aabb: &Aabb2d, origin: Vec2, direction: Vec2, reach: f32) -> bool {
        let (near, far) = (
            (aabb.min - origin) / direction,
            (aabb.max - origin) / direction,
        );
        near.min(far).max_element().max(0.0) <= far.max(near).min_element().min(reach)
    }

    /// Segments in every direction, axis-aligned ones included, walk the cells of every box they
    /// meet, from random boxes of all sizes up to a cell's.
    #[test]
    fn ray_casts_reach_every_box_the_segment_meets() {
        let mut rng = TestRng::new(0x4a7_ca57);
        let (side, cell) = (30.0, 2.5);
        let mut grid = LooseGrid::new(cell, 16);
        let boxes: Vec<Aabb2d> = (0..400).map(|_| random_box(&mut rng, side, cell)).collect();
        for (proxy, fat) in boxes.iter().enumerate() {
            grid.insert(proxy as u32, *fat);
        }
        for case in 0..2000 {
            let origin = Vec2::new(rng.range(-side, side), rng.range(-side, side));
            let angle = match case % 5 {
                0 => (rng.below(8) as f32) * core::f32::consts::FRAC_PI_4,
                _ => rng.range(0.0, core::f32::consts::TAU),
            };
            let direction = Vec2::from_angle(angle);
            let reach = rng.range(0.0, 40.0);
            let mut visited = vec![false; boxes.len()];
            grid.ray_cast(origin, direction, 0.0, reach, |proxy, _, reach| {
                visited[proxy as usize] = true;
                reach
            });
            for (proxy, fat) in boxes.iter().enumerate() {
                if segment_meets(fat, origin, direction, reach) {
                    assert!(
                        visited[proxy],
                        "case {case}: box {proxy} {fat:?} met by the segment"
                    );
                }
            }
        }
    }

    #[test]
    fn boxes_touching_across_a_cell_edge_are_found() {
        let mut grid = LooseGrid::new(2.0, 0);
        grid.insert(
            0,
            Aabb2d {
                min: Vec2::new(0.1, 0.1),
                max: Vec2::new(1.9, 1.9),
            },
        );
        // The query's lower corner lies on the proxy's upper corner, two cells away from its cell.
        let query = Aabb2d {
            min: Vec2::new(1.9, 1.9),
            max: Vec2::new(3.0, 3.0),
        };
        let mut found = Vec::new();
        grid.query(&query, |proxy| found.push(proxy));
        assert_eq!(found, [0], "a box touching at a corner is found");
    }

    #[test]
    fn a_box_wider_than_a_cell_does_not_fit() {
        let grid = LooseGrid::new(2.0, 0);
        assert!(grid.fits(&Aabb2d {
            min: Vec2::ZERO,
            max: Vec2::splat(1.9)
        }));
        assert!(!grid.fits(&Aabb2d {
            min: Vec2::ZERO,
            max: Vec2::new(2.5, 0.5)
        }));
    }
}
