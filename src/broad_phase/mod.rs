//! The broad phase: which pairs of colliders are worth an exact test.
//!
//! A uniform grid over the bounding boxes (`grid.rs`), rebuilt every update that changed anything; cost
//! grows with the colliders and the pairs that share cells, not with N². When no collider moved, changed,
//! appeared, left or changed layers since the last update, the broad and narrow phases keep their results.

mod grid;

use bevy::math::bounding::Aabb2d;
use bevy::prelude::*;

use crate::collider::{ActiveCollider, Collider, ColliderDisabled, ColliderWorldShape};
use crate::diagnostics::{CollisionDiagnostics, StageTimer};
use crate::geometry::WorldShape;
use crate::layers::CollisionLayers;
use crate::narrow_phase::Contacts;
use grid::UniformGrid;

/// One collider as the pipeline sees it this frame, packed for the pair loops.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColliderEntry {
    pub entity: Entity,
    pub layers: CollisionLayers,
    pub shape: WorldShape,
}

/// The colliders taking part this frame and the candidate pairs the broad phase found among them.
///
/// Filled in [`CollisionSystems::BroadPhase`](crate::CollisionSystems::BroadPhase); the debug overlay
/// reads it.
#[derive(Resource, Debug, Default)]
pub struct BroadPhase {
    pub(crate) entries: Vec<ColliderEntry>,
    pub(crate) candidates: Vec<(u32, u32)>,
    /// Whether nothing changed since the last update, so its pairs and contacts still hold.
    pub(crate) unchanged: bool,
    /// Whether some collider's world shape changed since the broad phase last ran: set by
    /// [`CollisionSystems::Prepare`](crate::CollisionSystems::Prepare), which sees every such change,
    /// so the broad phase need not look for them.
    pub(crate) shapes_changed: bool,
    grid: UniformGrid,
    /// The bounding boxes in gathering order, the grid's order of them, and the entries before
    /// reordering: buffers kept between updates.
    aabbs: Vec<Aabb2d>,
    order: Vec<u32>,
    spare_entries: Vec<ColliderEntry>,
}

impl BroadPhase {
    /// The candidate pairs of this frame: bounding boxes overlap and layers allow the pair.
    pub fn candidate_pairs(&self) -> impl Iterator<Item = (Entity, Entity)> + '_ {
        self.candidates.iter().map(|&(i, j)| {
            (
                self.entries[i as usize].entity,
                self.entries[j as usize].entity,
            )
        })
    }

    /// How many candidate pairs this frame has.
    pub fn candidate_count(&self) -> usize {
        self.candidates.len()
    }

    /// The bounding boxes of the colliders taking part this frame.
    pub fn aabbs(&self) -> impl Iterator<Item = (Entity, Aabb2d)> + '_ {
        self.entries
            .iter()
            .enumerate()
            .map(|(k, entry)| (entry.entity, self.grid.sorted_aabb(k)))
    }
}

/// `aabb` grown by a few units in the last place of its coordinates (and at least the smallest normal
/// float), so that the box test never rejects a pair the exact test accepts. The exact tests compute
/// with other formulas and can round the other way where shapes just touch: fuzzing found a long
/// rectangle whose box ended one unit in the last place short of a square that the exact test,
/// rightly for closed sets, found touching. The few extra candidates cost one exact test each.
#[inline]
fn padded(aabb: Aabb2d) -> Aabb2d {
    let pad = aabb.min.abs().max(aabb.max.abs()) * (8.0 * f32::EPSILON) + f32::MIN_POSITIVE;
    Aabb2d {
        min: aabb.min - pad,
        max: aabb.max + pad,
    }
}

/// Whether anything that decides the pairs changed since the last update, besides world shapes (which
/// the prepare stage reports in [`BroadPhase::shapes_changed`]).
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
}

impl ColliderChanges<'_, '_> {
    fn any(&mut self) -> bool {
        // Every reader is drained so that old removals do not count next time.
        let enabled = self.enabled.read().count() > 0;
        enabled || !self.contacts.removed.is_empty() || !self.changed.is_empty()
    }
}

/// Gathers the enabled, valid colliders and finds the candidate pairs among them.
pub(crate) fn find_candidate_pairs(
    colliders: Query<(Entity, &ColliderWorldShape, &CollisionLayers), ActiveCollider>,
    mut changes: ColliderChanges,
    mut broad_phase: ResMut<BroadPhase>,
    mut diagnostics: ResMut<CollisionDiagnostics>,
    mut updated_once: Local<bool>,
) {
    let timer = StageTimer::start();
    let shapes_changed = core::mem::take(&mut broad_phase.shapes_changed);
    broad_phase.unchanged = *updated_once && !changes.any() && !shapes_changed;
    *updated_once = true;
    if broad_phase.unchanged {
        diagnostics.timings.broad_phase = timer.elapsed();
        return;
    }
    let BroadPhase {
        entries,
        aabbs,
        candidates,
        grid,
        order,
        spare_entries,
        ..
    } = &mut *broad_phase;
    entries.clear();
    aabbs.clear();
    let mut invalid = 0;
    for (entity, shape, layers) in &colliders {
        match shape.0 {
            Some(shape) => {
                entries.push(ColliderEntry {
                    entity,
                    layers: *layers,
                    shape,
                });
                aabbs.push(padded(shape.aabb()));
            }
            None => invalid += 1,
        }
    }
    // Colliders near each other in the world go near each other in memory.
    grid.fit(aabbs);
    grid.sort(aabbs, order);
    spare_entries.clear();
    spare_entries.extend(order.iter().map(|&i| entries[i as usize]));
    core::mem::swap(entries, spare_entries);
    let entries = &*entries;
    grid.find_pairs(
        |i, j| entries[i].layers.interacts_with(&entries[j].layers),
        candidates,
    );
    diagnostics.colliders = entries.len();
    diagnostics.invalid_colliders = invalid;
    diagnostics.candidate_pairs = candidates.len();
    diagnostics.timings.broad_phase = timer.elapsed();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::WorldCircle;

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
        grid.find_pairs(
            |i, j| accept(order[i] as usize, order[j] as usize),
            &mut found,
        );
        let mut found: Vec<_> = found
            .into_iter()
            .map(|(i, j)| (order[i as usize], order[j as usize]))
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
