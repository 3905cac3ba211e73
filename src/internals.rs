//! A window on the pipeline's internals for this crate's own integration tests, fuzz targets and
//! benchmarks, which cannot reach `pub(crate)` items. Not part of the API: anything here may change
//! or go in any release.

use bevy::math::bounding::Aabb2d;
use bevy::prelude::*;

use crate::Collider;
use crate::broad_phase::BroadPhase;
use crate::geometry::WorldShape;

/// Panics unless the broad phase's invariants hold: every proxy placed once, in the lowest level that
/// fits it, its box inside its fat AABB, and the pair set exactly the pairs of proxies whose fat AABBs
/// overlap and whose layers interact. Takes time quadratic in the proxies.
pub fn validate_broad_phase(world: &World) {
    world.resource::<BroadPhase>().validate();
}

/// Every proxy's entity and fat AABB.
pub fn fat_aabbs(world: &World) -> Vec<(Entity, Aabb2d)> {
    world.resource::<BroadPhase>().fat_aabbs().collect()
}

/// Every collider swept in the last update, with its shape at the end and how far it moved.
pub fn sweeps(world: &World) -> Vec<(Entity, WorldShape, Vec2)> {
    world.resource::<BroadPhase>().sweeps().collect()
}

/// `collider` placed in the world by `transform`, as the prepare stage places it.
#[inline]
pub fn world_shape_from_transform(
    collider: &Collider,
    transform: &GlobalTransform,
) -> Option<WorldShape> {
    collider.world_shape_from_transform(transform)
}
