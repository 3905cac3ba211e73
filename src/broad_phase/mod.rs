//! The broad phase: which pairs of colliders are worth an exact test.
//!
//! A uniform grid over the bounding boxes (`grid.rs`); cost grows with the colliders and the pairs that
//! share cells, not with N². The grid is built over every collider when many moved or anything else
//! changed (a collider appeared, left, was disabled or enabled, changed layers, the settings changed).
//! When only a few moved (at most one in [`MOVED_SHARE`] since the last build), the grid is kept and
//! only pairs involving a collider that moved since that build are looked for (`moved.rs`): colliders
//! that stay still cost nothing after the build. When nothing moved or changed, the broad and narrow
//! phases keep their results.

mod cell_sort;
mod gather;
mod grid;
mod moved;

use bevy::math::Vec4Swizzles;
use bevy::math::bounding::Aabb2d;
use bevy::prelude::*;

use crate::collider::{ActiveColliders, Collider, ColliderDisabled};
use crate::diagnostics::{CollisionDiagnostics, StageTimer};
use crate::geometry::WorldShape;
use crate::layers::CollisionLayers;
use crate::narrow_phase::Contacts;
use crate::parallel::{gather_in_order, pool_for};
use crate::plugin::CollisionSettings;
use gather::{GatherTarget, Gathered, gather_colliders};
use grid::UniformGrid;
use moved::MovedSinceBuild;

/// The grid is kept while at most one collider in this many has moved since it was built.
pub const MOVED_SHARE: usize = 8;

/// Below this many colliders a full build reorders the entries on one thread (see the grid's sort).
const REORDER_PARALLEL_THRESHOLD: usize = 32_768;

/// One collider as the pipeline sees it this frame, packed for the pair loops. Its layers are kept
/// apart ([`BroadPhase`]'s `layers`), and only when some collider has other than the default ones:
/// 40 bytes an entry instead of 48 for every pass that moves or reads entries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColliderEntry {
    pub entity: Entity,
    pub shape: WorldShape,
}

/// The colliders taking part this frame and the candidate pairs the broad phase found among them.
///
/// Filled in [`CollisionSystems::BroadPhase`](crate::CollisionSystems::BroadPhase); the debug overlay
/// reads it.
#[derive(Resource, Debug, Default)]
pub struct BroadPhase {
    /// The colliders taking part, in the grid's order as of the last full build; the shapes are this
    /// update's.
    pub(crate) entries: Vec<ColliderEntry>,
    /// Pairs of slots in `entries` for the exact tests.
    pub(crate) candidates: Vec<(u32, u32)>,
    /// Whether nothing changed since the last update, so its pairs and contacts still hold.
    pub(crate) unchanged: bool,
    /// Whether `candidates` holds only the pairs involving a collider that moved since the last full
    /// build: the pairs of two other colliders keep last update's result.
    pub(crate) incremental: bool,
    /// The enabled colliders whose world shape changed since the broad phase last ran, with their new
    /// shape (`None` when invalid): filled by
    /// [`CollisionSystems::Prepare`](crate::CollisionSystems::Prepare), which sees every such change, so
    /// the broad phase need not look for them. Only until they are too many to keep the grid (see
    /// [`Self::rebuild_due`]): a full build needs no list of them.
    pub(crate) moved_entities: Vec<(Entity, Option<WorldShape>)>,
    moved: MovedSinceBuild,
    /// This update's moved colliders: their slots and new shapes.
    moved_shapes: Vec<(usize, WorldShape)>,
    grid: UniformGrid,
    /// The grid of the colliders moved since the build, rebuilt each update.
    moved_grid: UniformGrid,
    /// Bounding boxes, a grid's order of them, and entries before reordering: buffers kept between
    /// updates.
    aabbs: Vec<Aabb2d>,
    order: Vec<u32>,
    spare_entries: Vec<ColliderEntry>,
    /// Each entry's layers, in the entries' order; empty unless `layered`.
    layers: Vec<CollisionLayers>,
    /// The layers as gathered, before reordering.
    spare_layers: Vec<CollisionLayers>,
    invalid: usize,
    /// Whether some collider has layers other than [`CollisionLayers::ALL`], so that pairs must be
    /// filtered by layers; as of the last full build.
    layered: bool,
}

impl BroadPhase {
    /// The pairs handed to the exact tests this update: their bounding boxes overlap and their layers
    /// allow them. On an update where few colliders moved, only the pairs involving one of those: the
    /// others keep last update's result untested. On an update where no enabled collider moved and
    /// nothing else changed, nothing is tested and these are the last tested update's pairs.
    pub fn candidate_pairs(&self) -> impl Iterator<Item = (Entity, Entity)> + '_ {
        self.candidates.iter().map(|&(i, j)| {
            (
                self.entries[i as usize].entity,
                self.entries[j as usize].entity,
            )
        })
    }

    /// How many pairs [`Self::candidate_pairs`] gives.
    pub fn candidate_count(&self) -> usize {
        self.candidates.len()
    }

    /// The bounding boxes of the colliders taking part this frame.
    pub fn aabbs(&self) -> impl Iterator<Item = (Entity, Aabb2d)> + '_ {
        self.entries
            .iter()
            .map(|entry| (entry.entity, entry.shape.aabb()))
    }

    /// Whether `entity`'s collider moved since the last full build (or has no entry): its pairs are
    /// tested again this update.
    #[inline]
    pub(crate) fn has_moved(&self, entity: Entity) -> bool {
        self.moved.has_moved(entity)
    }

    /// Whether, with `moved_now` colliders moved this update besides those moved since the last build,
    /// too many have moved to keep the grid: the next update builds it anew.
    #[inline]
    pub(crate) fn rebuild_due(&self, moved_now: usize) -> bool {
        self.moved_room().is_none_or(|room| moved_now > room)
    }

    /// How many colliders may move this update, besides those moved since the last build, with the grid
    /// kept: at most one in [`MOVED_SHARE`] of the entries in all. `None` when the grid is built anew
    /// whatever moves.
    #[inline]
    pub(crate) fn moved_room(&self) -> Option<usize> {
        moved_room(self.entries.len(), self.moved.slots().len())
    }

    /// Builds the grid over every enabled, valid collider and finds all the pairs.
    fn build(&mut self, colliders: &ActiveColliders) {
        let Self {
            entries,
            aabbs,
            candidates,
            grid,
            order,
            spare_entries,
            layers,
            spare_layers,
            moved,
            invalid,
            layered,
            ..
        } = self;
        Gathered {
            invalid: *invalid,
            layered: *layered,
        } = gather_colliders(
            colliders,
            GatherTarget {
                entries,
                aabbs,
                layers: spare_layers,
            },
        );
        // Colliders near each other in the world go near each other in memory.
        grid.fit(aabbs);
        grid.sort(aabbs, order);
        let pool = pool_for(entries.len(), REORDER_PARALLEL_THRESHOLD);
        gather_in_order(pool, entries, order, spare_entries);
        core::mem::swap(entries, spare_entries);
        if *layered {
            gather_in_order(pool, spare_layers, order, layers);
        } else {
            layers.clear();
        }
        grid.find_pairs(candidates);
        if *layered {
            candidates.retain(|&(i, j)| layers[i as usize].interacts_with(&layers[j as usize]));
        }
        moved.reset();
    }

    /// Takes this update's moved colliders into the entries and finds the pairs that involve a collider
    /// moved since the last build. Returns `false`, changing nothing, when a full build is due instead:
    /// too many moved, or one of them is new to the entries or became invalid.
    fn update_moved(&mut self) -> bool {
        if self.rebuild_due(self.moved_entities.len()) {
            return false;
        }
        self.moved.index(&self.entries);
        // Check every moved collider before changing anything.
        self.moved_shapes.clear();
        for &(entity, shape) in &self.moved_entities {
            match (self.moved.slot(entity, &self.entries), shape) {
                (Some(slot), Some(shape)) => self.moved_shapes.push((slot, shape)),
                _ => return false,
            }
        }
        for &(slot, shape) in &self.moved_shapes {
            self.entries[slot].shape = shape;
            self.moved.mark(slot, self.entries[slot].entity);
        }
        self.find_moved_pairs();
        true
    }

    /// The pairs that involve a collider moved since the last build: moved against moved in a grid of
    /// their own, moved against the others in the grid of the build (whose order is the entries').
    fn find_moved_pairs(&mut self) {
        let Self {
            entries,
            candidates,
            moved,
            grid,
            moved_grid,
            aabbs,
            order,
            layers,
            layered,
            ..
        } = self;
        let slots = moved.slots();
        aabbs.clear();
        aabbs.extend(
            slots
                .iter()
                .map(|&slot| padded(entries[slot as usize].shape.aabb())),
        );
        moved_grid.fit(aabbs);
        moved_grid.sort(aabbs, order);
        let slot = |k: usize| slots[order[k] as usize] as usize;
        let entries = &*entries;
        moved_grid.find_pairs(candidates);
        for (i, j) in candidates.iter_mut() {
            (*i, *j) = (slot(*i as usize) as u32, slot(*j as usize) as u32);
        }
        let interact = |i: usize, j: usize| !*layered || layers[i].interacts_with(&layers[j]);
        if *layered {
            candidates.retain(|&(i, j)| interact(i as usize, j as usize));
        }
        let mut push_if_still = |slot: usize, other: usize| {
            if !moved.is_moved(other) && interact(slot, other) {
                candidates.push((slot as u32, other as u32));
            }
        };
        // The build's boxes that fit its cells, looked up from each moved box...
        for &slot in slots {
            let aabb = padded(entries[slot as usize].shape.aabb());
            grid.for_each_overlapping_in_cells(&aabb, |other| push_if_still(slot as usize, other));
        }
        // ...and its boxes too large for a cell (a few in a hundred), the other way round: each looks
        // up the moved boxes, few and in a grid of their own.
        for other in grid.large() {
            moved_grid.for_each_overlapping(&grid.sorted_aabb(other), |k| {
                push_if_still(slot(k), other);
            });
        }
    }
}

/// How many colliders of `entries` may move, besides `moved_since_build`, with at most one in
/// [`MOVED_SHARE`] moved in all: `None` when more than that have moved already.
#[inline]
fn moved_room(entries: usize, moved_since_build: usize) -> Option<usize> {
    (entries / MOVED_SHARE).checked_sub(moved_since_build)
}

/// `aabb` grown by a few units in the last place of its coordinates (and at least the smallest normal
/// float), so that the box test never rejects a pair the exact test accepts. The exact tests compute
/// with other formulas and can round the other way where shapes just touch: fuzzing found a long
/// rectangle whose box ended one unit in the last place short of a square that the exact test,
/// rightly for closed sets, found touching. The few extra candidates cost one exact test each.
#[inline]
pub(super) fn padded(aabb: Aabb2d) -> Aabb2d {
    // Both corners in one vector: the operations of two `Vec2`s (`min - pad` and `max + pad`, with
    // `pad` from the larger magnitude of each axis), the same bits for inputs without NaN, in fewer
    // instructions: 2.1 million fewer in the broad phase's build over 70 updates of W1 at 10,000
    // (callgrind).
    let corners = Vec4::new(aabb.min.x, aabb.min.y, aabb.max.x, aabb.max.y);
    let magnitude = corners.abs();
    let pad = magnitude.max(magnitude.zwxy()) * (8.0 * f32::EPSILON) + f32::MIN_POSITIVE;
    let padded = corners + pad * Vec4::new(-1.0, -1.0, 1.0, 1.0);
    Aabb2d {
        min: padded.xy(),
        max: padded.zw(),
    }
}

/// Whether anything that decides the pairs changed since the last update, besides world shapes (which
/// the prepare stage reports in [`BroadPhase::moved_entities`]).
#[derive(bevy::ecs::system::SystemParam)]
pub(crate) struct ColliderChanges<'w, 's> {
    changed: Query<
        'w,
        's,
        (),
        (
            With<Collider>,
            Or<(Changed<CollisionLayers>, Added<ColliderDisabled>)>,
        ),
    >,
    enabled: RemovedComponents<'w, 's, ColliderDisabled>,
    contacts: Res<'w, Contacts>,
    settings: Res<'w, CollisionSettings>,
}

impl ColliderChanges<'_, '_> {
    /// Whether a full build is due: `building_anyway`, or something changed. Looking for changed layers
    /// reads every collider's change ticks, so it is skipped when the build is due anyway.
    fn build_due(&mut self, building_anyway: bool) -> bool {
        // Every reader is drained so that old removals do not count next time.
        let enabled = self.enabled.read().count() > 0;
        building_anyway
            || enabled
            || self.settings.is_changed()
            || !self.contacts.removed.is_empty()
            || !self.changed.is_empty()
    }
}

/// Finds the candidate pairs: all of them over a new grid, or only those of the colliders that moved
/// since the last build, or none when nothing changed.
pub(crate) fn find_candidate_pairs(
    colliders: ActiveColliders,
    mut changes: ColliderChanges,
    mut broad_phase: ResMut<BroadPhase>,
    mut diagnostics: ResMut<CollisionDiagnostics>,
    mut updated_once: Local<bool>,
) {
    let timer = StageTimer::start();
    let broad_phase = &mut *broad_phase;
    // Too many moved colliders make the build due as well.
    let too_many_moved = broad_phase.rebuild_due(broad_phase.moved_entities.len());
    let rebuild = changes.build_due(!*updated_once || too_many_moved);
    *updated_once = true;
    broad_phase.unchanged = !rebuild && broad_phase.moved_entities.is_empty();
    broad_phase.incremental = !rebuild && !broad_phase.unchanged && broad_phase.update_moved();
    if !broad_phase.unchanged && !broad_phase.incremental {
        broad_phase.build(&colliders);
    }
    broad_phase.moved_entities.clear();
    diagnostics.colliders = broad_phase.entries.len();
    diagnostics.invalid_colliders = broad_phase.invalid;
    diagnostics.candidate_pairs = broad_phase.candidates.len();
    diagnostics.timings.broad_phase = timer.elapsed();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::WorldCircle;
    use bevy::math::bounding::IntersectsVolume;

    #[test]
    fn moved_room_keeps_the_grid_exactly_while_one_collider_in_eight_has_moved() {
        // The rule as first written: a build is due once (moved since the build + moved now) times
        // `MOVED_SHARE` exceeds the entries.
        for entries in 0..100 {
            for moved_since_build in 0..20 {
                for moved_now in 0..20 {
                    let due = (moved_since_build + moved_now) * MOVED_SHARE > entries;
                    let room = moved_room(entries, moved_since_build);
                    assert_eq!(
                        room.is_none_or(|room| moved_now > room),
                        due,
                        "{entries} entries, {moved_since_build} moved since the build, {moved_now} now"
                    );
                }
            }
        }
    }

    fn circle_box(x: f32, y: f32, radius: f32) -> Aabb2d {
        WorldCircle::new(Vec2::new(x, y), radius).aabb()
    }

    /// The grid's pairs as the pipeline gets them (boxes in spatial order), mapped back to the input's
    /// indices and sorted.
    fn pairs(aabbs: &[Aabb2d], accept: impl Fn(usize, usize) -> bool + Sync) -> Vec<(u32, u32)> {
        let mut grid = UniformGrid::default();
        grid.fit(aabbs);
        let mut order = Vec::new();
        grid.sort(aabbs, &mut order);
        let mut found = Vec::new();
        grid.find_pairs(&mut found);
        let mut found: Vec<_> = found
            .into_iter()
            .map(|(i, j)| (order[i as usize], order[j as usize]))
            .filter(|&(i, j)| accept(i as usize, j as usize))
            .map(|(i, j)| (i.min(j), i.max(j)))
            .collect();
        found.sort_unstable();
        found
    }

    fn brute_force(aabbs: &[Aabb2d]) -> Vec<(u32, u32)> {
        let mut expected = Vec::new();
        for (i, a) in aabbs.iter().enumerate() {
            for (j, b) in aabbs.iter().enumerate().skip(i + 1) {
                if a.min.cmple(b.max).all() && b.min.cmple(a.max).all() {
                    expected.push((i as u32, j as u32));
                }
            }
        }
        expected
    }

    #[test]
    fn padded_gives_the_bits_of_the_formula_corner_by_corner() {
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.3,
            -2.5e-3,
            1e-40,
            -1e-40,
            1e30,
            -1e30,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        let mut compared = 0;
        for &a in &values {
            for &b in &values {
                for &c in &values {
                    for &d in &values {
                        let aabb = Aabb2d {
                            min: Vec2::new(a, b),
                            max: Vec2::new(c, d),
                        };
                        let pad = aabb.min.abs().max(aabb.max.abs()) * (8.0 * f32::EPSILON)
                            + f32::MIN_POSITIVE;
                        let (min, max) = (aabb.min - pad, aabb.max + pad);
                        let got = padded(aabb);
                        assert!(
                            same(got.min.x, min.x)
                                && same(got.min.y, min.y)
                                && same(got.max.x, max.x)
                                && same(got.max.y, max.y),
                            "{aabb:?}: {got:?} against {min:?}, {max:?}"
                        );
                        compared += 1;
                    }
                }
            }
        }
        assert_eq!(compared, values.len().pow(4));
    }

    #[test]
    fn touching_boxes_are_candidates() {
        let aabbs = [
            circle_box(0.0, 0.0, 1.0),
            circle_box(2.0, 2.0, 1.0),
            circle_box(4.1, 0.0, 1.0),
        ];
        assert_eq!(
            pairs(&aabbs, |_, _| true),
            vec![(0, 1)],
            "only the corner-touching boxes pair"
        );
    }

    #[test]
    fn matches_brute_force_on_a_crowd() {
        let aabbs: Vec<Aabb2d> = (0..3000)
            .map(|i| {
                let t = i as f32;
                circle_box(
                    (t * 7.31).sin() * 60.0,
                    (t * 3.17).cos() * 60.0,
                    0.5 + (t * 0.37).sin().abs(),
                )
            })
            .collect();
        let expected = brute_force(&aabbs);
        assert!(
            expected.len() > 1000,
            "the crowd must have overlaps to test: {}",
            expected.len()
        );
        assert_eq!(
            pairs(&aabbs, |_, _| true),
            expected,
            "the grid differs from brute force"
        );
    }

    #[test]
    fn outliers_and_huge_boxes_do_not_lose_pairs() {
        let mut aabbs: Vec<Aabb2d> = (0..500)
            .map(|i| {
                let t = i as f32;
                circle_box((t * 1.91).sin() * 20.0, (t * 2.73).cos() * 20.0, 1.0)
            })
            .collect();
        // Far away, huge, and infinite-extent boxes.
        aabbs.push(circle_box(1e30, -1e30, 1.0));
        aabbs.push(circle_box(1e30, -1e30, 2.0));
        aabbs.push(circle_box(0.0, 0.0, 500.0));
        aabbs.push(Aabb2d {
            min: Vec2::new(-5.0, -5.0),
            max: Vec2::new(f32::INFINITY, 5.0),
        });
        assert_eq!(
            pairs(&aabbs, |_, _| true),
            brute_force(&aabbs),
            "the grid differs from brute force"
        );
    }

    #[test]
    fn many_boxes_too_large_for_a_cell_pair_like_brute_force() {
        // One box in eleven is large: under the tenth the grid sizes its cells for, so they all go
        // to the grid's large list and meet each other in its sweep.
        let mut aabbs: Vec<Aabb2d> = (0..5000)
            .map(|i| {
                let t = i as f32;
                let size = if i % 11 == 0 {
                    6.0 + (t * 0.37).sin() * 3.0
                } else {
                    1.0
                };
                let min = Vec2::new((t * 7.31).sin() * 80.0, (t * 3.17).cos() * 80.0);
                Aabb2d {
                    min,
                    max: min + size,
                }
            })
            .collect();
        aabbs.push(Aabb2d {
            min: Vec2::new(f32::NAN, 0.0),
            max: Vec2::new(50.0, 50.0),
        });
        aabbs.push(Aabb2d {
            min: Vec2::new(-40.0, -1.0),
            max: Vec2::new(f32::INFINITY, 1.0),
        });
        let mut grid = UniformGrid::default();
        grid.fit(&aabbs);
        grid.sort(&aabbs, &mut Vec::new());
        assert!(
            grid.large().len() > 300,
            "{} large boxes",
            grid.large().len()
        );
        let expected = brute_force(&aabbs);
        let large_pairs = expected
            .iter()
            .filter(|&&(i, j)| i % 11 == 0 && j % 11 == 0 && j < 5000)
            .count();
        assert!(large_pairs > 50, "{large_pairs} pairs of large boxes");
        assert_eq!(
            pairs(&aabbs, |_, _| true),
            expected,
            "the grid differs from brute force"
        );
    }

    #[test]
    fn box_queries_match_brute_force() {
        let mut aabbs: Vec<Aabb2d> = (0..2000)
            .map(|i| {
                let t = i as f32;
                circle_box(
                    (t * 5.13).sin() * 40.0,
                    (t * 2.29).cos() * 40.0,
                    0.3 + (t * 0.71).sin().abs() * 2.0,
                )
            })
            .collect();
        aabbs.push(circle_box(0.0, 0.0, 30.0));
        aabbs.push(circle_box(1e30, 0.0, 1.0));
        let mut grid = UniformGrid::default();
        grid.fit(&aabbs);
        let mut order = Vec::new();
        grid.sort(&aabbs, &mut order);
        let queries = [
            circle_box(3.0, -2.0, 1.0),
            circle_box(-39.0, 39.0, 4.0),
            circle_box(0.0, 0.0, 60.0),
            circle_box(1e30, 0.0, 0.5),
            Aabb2d {
                min: Vec2::new(10.0, f32::NEG_INFINITY),
                max: Vec2::new(11.0, f32::INFINITY),
            },
        ];
        for query in queries {
            let mut found = Vec::new();
            grid.for_each_overlapping(&query, |k| found.push(order[k]));
            found.sort_unstable();
            let expected: Vec<u32> = (0..aabbs.len() as u32)
                .filter(|&i| aabbs[i as usize].intersects(&query))
                .collect();
            assert!(!expected.is_empty(), "{query:?} must hit something");
            assert_eq!(found, expected, "boxes overlapping {query:?}");
            let mut in_cells = Vec::new();
            grid.for_each_overlapping_in_cells(&query, |k| in_cells.push(k));
            let mut large: Vec<usize> = grid
                .large()
                .filter(|&k| grid.sorted_aabb(k).intersects(&query))
                .collect();
            large.append(&mut in_cells);
            assert_eq!(
                large.len(),
                found.len(),
                "cells and large boxes split the hits"
            );
        }
    }

    #[test]
    fn accept_filters_candidates() {
        let aabbs = [
            circle_box(0.0, 0.0, 1.0),
            circle_box(0.5, 0.0, 1.0),
            circle_box(1.0, 0.0, 1.0),
        ];
        assert_eq!(
            pairs(&aabbs, |i, j| i.min(j) == 0 && i.max(j) == 1),
            vec![(0, 1)],
            "only the accepted pair"
        );
    }
}
