//! [`SpatialQuery`]: what overlaps a point or a shape, and what a ray hits first.

use bevy::ecs::system::SystemParam;
use bevy::math::Ray2d;
use bevy::math::bounding::Aabb2d;
use bevy::prelude::*;

use core::cmp::Ordering;

use crate::broad_phase::{BroadPhase, Proxy};
use crate::collider::{ActiveCollider, Collider};
use crate::geometry::{
    Pose2d, RayHit, WorldRect, WorldShape, intersection_test_rect_rect, ray_cast,
};
use crate::layers::CollisionLayers;
use crate::plugin::CollisionSettings;

/// Spatial queries over the colliders, answered from the broad phase's levels of grids: each visits
/// only the colliders near the point, box, shape or ray.
///
/// The colliders are as of the last collision update: their shapes and layers as the broad phase
/// last saw them, less the colliders removed or disabled since. Disabled and invalid colliders are
/// never found. Every query takes [`CollisionLayers`] for the querying side and applies the same rule
/// as a collider pair; pass [`CollisionLayers::ALL`] to find everything. Results are sorted by entity,
/// so they are the same from run to run.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// fn under_the_cursor(query: SpatialQuery, cursor: Res<CursorWorldPosition>) {
///     for entity in query.point_intersections(cursor.0, CollisionLayers::ALL) {
///         println!("{entity} is under the cursor");
///     }
/// }
/// # #[derive(Resource)] struct CursorWorldPosition(Vec2);
/// # bevy::ecs::system::assert_is_system(under_the_cursor);
/// ```
#[derive(SystemParam)]
pub struct SpatialQuery<'w, 's> {
    broad_phase: Res<'w, BroadPhase>,
    colliders: Query<'w, 's, (), ActiveCollider>,
    settings: Res<'w, CollisionSettings>,
}

impl SpatialQuery<'_, '_> {
    /// Whether the collider of `proxy` takes part, on layers matching `layers`.
    fn matches(&self, proxy: &Proxy, layers: CollisionLayers) -> bool {
        layers.interacts_with(&proxy.layers) && self.colliders.contains(proxy.entity)
    }

    /// The colliders on matching layers whose fat AABB overlaps `region` and whose shape passes `hit`,
    /// sorted by entity.
    fn sorted_matches(
        &self,
        region: &Aabb2d,
        layers: CollisionLayers,
        hit: impl Fn(&WorldShape) -> bool,
    ) -> Vec<Entity> {
        let mut found = Vec::new();
        self.broad_phase.query(region, |proxy, shape| {
            if hit(shape) && self.matches(proxy, layers) {
                found.push(proxy.entity);
            }
        });
        found.sort_unstable();
        found
    }

    /// The colliders containing `point` (boundary included under the default overlap mode), sorted.
    pub fn point_intersections(&self, point: Vec2, layers: CollisionLayers) -> Vec<Entity> {
        let mode = self.settings.overlap_mode;
        let region = Aabb2d {
            min: point,
            max: point,
        };
        self.sorted_matches(&region, layers, |shape| shape.contains_point(point, mode))
    }

    /// The colliders whose axis-aligned bounding box overlaps `aabb` (boundary included under the
    /// default overlap mode), sorted: a coarse search, for a region of the screen or the candidates of
    /// a test of the game's own.
    pub fn aabb_intersections(&self, aabb: Aabb2d, layers: CollisionLayers) -> Vec<Entity> {
        let mode = self.settings.overlap_mode;
        let region = WorldRect::from_min_max(aabb.min, aabb.max);
        self.sorted_matches(&aabb, layers, |shape| {
            let bounds = shape.aabb();
            intersection_test_rect_rect(
                &region,
                &WorldRect::from_min_max(bounds.min, bounds.max),
                mode,
            )
        })
    }

    /// The colliders overlapping `collider` placed at `pose`, sorted; empty if the collider or pose is
    /// invalid.
    pub fn shape_intersections(
        &self,
        collider: &Collider,
        pose: &Pose2d,
        layers: CollisionLayers,
    ) -> Vec<Entity> {
        let Some(query_shape) = collider.world_shape(pose) else {
            return Vec::new();
        };
        let mode = self.settings.overlap_mode;
        self.sorted_matches(&query_shape.aabb(), layers, |shape| {
            query_shape.intersects(shape, mode)
        })
    }

    /// The first collider (the lowest entity) overlapping `collider` placed at `pose`, if any.
    pub fn first_shape_intersection(
        &self,
        collider: &Collider,
        pose: &Pose2d,
        layers: CollisionLayers,
    ) -> Option<Entity> {
        let query_shape = collider.world_shape(pose)?;
        let mode = self.settings.overlap_mode;
        let mut first: Option<Entity> = None;
        self.broad_phase.query(&query_shape.aabb(), |proxy, shape| {
            if first.is_none_or(|first| proxy.entity < first)
                && query_shape.intersects(shape, mode)
                && self.matches(proxy, layers)
            {
                first = Some(proxy.entity);
            }
        });
        first
    }

    /// The collider `ray` hits first within `max_distance`, with where it hits; ties go to the lower
    /// entity. A ray starting inside a collider hits it at distance zero.
    pub fn cast_ray(
        &self,
        ray: Ray2d,
        max_distance: f32,
        layers: CollisionLayers,
    ) -> Option<(Entity, RayHit)> {
        if max_distance.is_nan() || max_distance < 0.0 || !ray.origin.is_finite() {
            return None;
        }
        let mut best: Option<(Entity, RayHit)> = None;
        self.broad_phase.ray_candidates(
            ray.origin,
            *ray.direction,
            max_distance,
            |proxy, shape, reach| {
                if let Some(hit) = ray_cast(shape, ray, reach) {
                    let better = best.is_none_or(|(entity, best)| {
                        hit.distance
                            .total_cmp(&best.distance)
                            .then(proxy.entity.cmp(&entity))
                            == Ordering::Less
                    });
                    if better && self.matches(proxy, layers) {
                        best = Some((proxy.entity, hit));
                    }
                }
                best.map_or(reach, |(_, hit)| hit.distance.min(reach))
            },
        );
        best
    }
}
