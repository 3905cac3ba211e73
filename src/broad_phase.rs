//! The broad phase: which pairs of colliders are worth an exact test.
//!
//! Sort and sweep along x: colliders sorted by the left edge of their bounding box, each compared with
//! the ones that start before it ends; a pair is a candidate when the boxes also overlap in y and the
//! layers allow it. Cost grows with the colliders and the pairs that overlap in x, not with N².

use bevy::math::bounding::Aabb2d;
use bevy::prelude::*;

use crate::collider::{ActiveCollider, ColliderWorldShape};
use crate::diagnostics::{CollisionDiagnostics, StageTimer};
use crate::geometry::WorldShape;
use crate::layers::CollisionLayers;

/// One collider as the pipeline sees it this frame, packed for the pair loops.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColliderEntry {
    pub entity: Entity,
    pub aabb: Aabb2d,
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
        self.entries.iter().map(|entry| (entry.entity, entry.aabb))
    }
}

/// Sorts `entries` by the left edge of their boxes (ties by entity, for a deterministic order) and
/// writes every pair whose boxes overlap, boundary included, and whose layers interact.
pub(crate) fn sweep_and_prune(entries: &mut [ColliderEntry], candidates: &mut Vec<(u32, u32)>) {
    entries.sort_unstable_by(|a, b| {
        a.aabb
            .min
            .x
            .total_cmp(&b.aabb.min.x)
            .then(a.entity.cmp(&b.entity))
    });
    candidates.clear();
    for (i, a) in entries.iter().enumerate() {
        for (j, b) in entries.iter().enumerate().skip(i + 1) {
            if b.aabb.min.x > a.aabb.max.x {
                break;
            }
            if b.aabb.min.y <= a.aabb.max.y
                && a.aabb.min.y <= b.aabb.max.y
                && a.layers.interacts_with(&b.layers)
            {
                candidates.push((i as u32, j as u32));
            }
        }
    }
}

/// Gathers the enabled, valid colliders and finds the candidate pairs among them.
pub(crate) fn find_candidate_pairs(
    colliders: Query<(Entity, &ColliderWorldShape, &CollisionLayers), ActiveCollider>,
    mut broad_phase: ResMut<BroadPhase>,
    mut diagnostics: ResMut<CollisionDiagnostics>,
) {
    let timer = StageTimer::start();
    let BroadPhase {
        entries,
        candidates,
    } = &mut *broad_phase;
    entries.clear();
    let mut invalid = 0;
    for (entity, shape, layers) in &colliders {
        match shape.0 {
            Some(shape) => entries.push(ColliderEntry {
                entity,
                aabb: shape.aabb(),
                layers: *layers,
                shape,
            }),
            None => invalid += 1,
        }
    }
    sweep_and_prune(entries, candidates);
    diagnostics.colliders = entries.len();
    diagnostics.invalid_colliders = invalid;
    diagnostics.candidate_pairs = candidates.len();
    diagnostics.timings.broad_phase = timer.elapsed();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::WorldCircle;

    fn entry(index: u32, x: f32, y: f32, layers: CollisionLayers) -> ColliderEntry {
        let shape = WorldShape::Circle(WorldCircle::new(Vec2::new(x, y), 1.0));
        ColliderEntry {
            entity: Entity::from_raw_u32(index).unwrap(),
            aabb: shape.aabb(),
            layers,
            shape,
        }
    }

    fn pairs(entries: &mut [ColliderEntry]) -> Vec<(u32, u32)> {
        let mut candidates = Vec::new();
        sweep_and_prune(entries, &mut candidates);
        let mut found: Vec<(u32, u32)> = candidates
            .iter()
            .map(|&(i, j)| {
                let (a, b) = (entries[i as usize].entity, entries[j as usize].entity);
                (
                    a.index_u32().min(b.index_u32()),
                    a.index_u32().max(b.index_u32()),
                )
            })
            .collect();
        found.sort();
        found
    }

    #[test]
    fn touching_boxes_are_candidates() {
        let all = CollisionLayers::ALL;
        let mut entries = [
            entry(1, 0.0, 0.0, all),
            entry(2, 2.0, 2.0, all),
            entry(3, 4.1, 0.0, all),
        ];
        assert_eq!(
            pairs(&mut entries),
            vec![(1, 2)],
            "only the corner-touching boxes pair"
        );
    }

    #[test]
    fn matches_brute_force_on_a_crowd() {
        let all = CollisionLayers::ALL;
        let mut entries: Vec<ColliderEntry> = (0..300)
            .map(|i| {
                let t = i as f32;
                entry(i, (t * 7.31).sin() * 20.0, (t * 3.17).cos() * 20.0, all)
            })
            .collect();
        let mut expected = Vec::new();
        for a in &entries {
            for b in &entries {
                if a.entity.index_u32() < b.entity.index_u32()
                    && a.aabb.min.cmple(b.aabb.max).all()
                    && b.aabb.min.cmple(a.aabb.max).all()
                {
                    expected.push((a.entity.index_u32(), b.entity.index_u32()));
                }
            }
        }
        expected.sort();
        assert!(!expected.is_empty(), "the crowd must have overlaps to test");
        assert_eq!(
            pairs(&mut entries),
            expected,
            "sweep and prune differs from brute force"
        );
    }

    #[test]
    fn layers_filter_candidates() {
        let mut entries = [
            entry(1, 0.0, 0.0, CollisionLayers::new(1, 2)),
            entry(2, 0.5, 0.0, CollisionLayers::new(2, 1)),
            entry(3, 1.0, 0.0, CollisionLayers::new(4, 4)),
        ];
        assert_eq!(pairs(&mut entries), vec![(1, 2)], "layer 4 meets neither");
    }
}
