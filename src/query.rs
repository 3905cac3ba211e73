//! [`SpatialQuery`]: what overlaps a point or a shape, and what a ray hits first.

use bevy::ecs::system::SystemParam;
use bevy::math::Ray2d;
use bevy::math::bounding::Aabb2d;
use bevy::prelude::*;

use crate::collider::{ActiveColliders, Collider};
use crate::geometry::{
    Pose2d, RayHit, WorldRect, WorldShape, intersection_test_rect_rect, ray_cast,
};
use crate::layers::CollisionLayers;
use crate::plugin::CollisionSettings;

/// Spatial queries over the colliders, as of their last update in
/// [`CollisionSystems::Prepare`](crate::CollisionSystems::Prepare).
///
/// Disabled and invalid colliders are never found. Every query takes [`CollisionLayers`] for the
/// querying side and applies the same rule as a collider pair; pass [`CollisionLayers::ALL`] to find
/// everything. Results are sorted by entity, so they are the same from run to run. Each query tests every
/// collider once.
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
    colliders: ActiveColliders<'w, 's>,
    settings: Res<'w, CollisionSettings>,
}

impl SpatialQuery<'_, '_> {
    fn shapes(&self, layers: CollisionLayers) -> impl Iterator<Item = (Entity, WorldShape)> + '_ {
        self.colliders
            .iter()
            .filter(move |(_, _, other)| layers.interacts_with(other))
            .filter_map(|(entity, shape, _)| shape.0.map(|shape| (entity, shape)))
    }

    /// The colliders on matching layers whose shape passes `hit`, sorted by entity.
    fn sorted_matches(
        &self,
        layers: CollisionLayers,
        hit: impl Fn(&WorldShape) -> bool,
    ) -> Vec<Entity> {
        let mut found: Vec<Entity> = self
            .shapes(layers)
            .filter(|(_, shape)| hit(shape))
            .map(|(entity, _)| entity)
            .collect();
        found.sort_unstable();
        found
    }

    /// The colliders containing `point` (boundary included under the default overlap mode), sorted.
    pub fn point_intersections(&self, point: Vec2, layers: CollisionLayers) -> Vec<Entity> {
        let mode = self.settings.overlap_mode;
        self.sorted_matches(layers, |shape| shape.contains_point(point, mode))
    }

    /// The colliders whose axis-aligned bounding box overlaps `aabb` (boundary included under the
    /// default overlap mode), sorted: a coarse search, for a region of the screen or the candidates of
    /// a test of the game's own.
    pub fn aabb_intersections(&self, aabb: Aabb2d, layers: CollisionLayers) -> Vec<Entity> {
        let mode = self.settings.overlap_mode;
        let region = WorldRect::from_min_max(aabb.min, aabb.max);
        self.sorted_matches(layers, |shape| {
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
        self.sorted_matches(layers, |shape| query_shape.intersects(shape, mode))
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
        self.shapes(layers)
            .filter(|(_, shape)| query_shape.intersects(shape, mode))
            .map(|(entity, _)| entity)
            .min()
    }

    /// The collider `ray` hits first within `max_distance`, with where it hits; ties go to the lower
    /// entity. A ray starting inside a collider hits it at distance zero.
    pub fn cast_ray(
        &self,
        ray: Ray2d,
        max_distance: f32,
        layers: CollisionLayers,
    ) -> Option<(Entity, RayHit)> {
        self.shapes(layers)
            .filter_map(|(entity, shape)| {
                ray_cast(&shape, ray, max_distance).map(|hit| (entity, hit))
            })
            .min_by(|(a, hit_a), (b, hit_b)| {
                hit_a.distance.total_cmp(&hit_b.distance).then(a.cmp(b))
            })
    }
}
