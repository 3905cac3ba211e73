//! [`SpatialQuery`]: what overlaps a point or a shape, and what a ray hits first.

use bevy::ecs::system::{StaticSystemParam, SystemParam, SystemParamItem};
use bevy::math::Ray2d;
use bevy::math::bounding::{Aabb2d, BoundingVolume};
use bevy::prelude::*;

use core::cmp::Ordering;

use crate::broad_phase::{BroadPhase, Proxy, segment_in};
use crate::collider::{ActiveColliderFilter, Collider};
use crate::geometry::{
    Contact, OverlapMode, Pose2d, RayHit, ShapeHit, WorldRect, WorldShape,
    intersection_test_rect_rect, ray_cast, shape_cast,
};
use crate::hooks::{ActiveHooks, CollisionHooks};
use crate::layers::CollisionLayers;
use crate::settings::CollisionSettings;

/// Spatial queries over the colliders, answered from the broad phase's levels of grids: each visits
/// only the colliders near the point, box, shape, ray or cast.
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
///
/// The queries that move or cast a collider of the world, [`move_and_slide`](Self::move_and_slide)
/// and [`cast_collider`](Self::cast_collider), also ask the game's hooks about its pairs with
/// colliders that have [`ActiveHooks`]: name them as `SpatialQuery<MyHooks>` ([`CollisionHooks`]).
/// The other queries have no collider of their own, so no pair to ask about.
#[derive(SystemParam)]
pub struct SpatialQuery<'w, 's, H: CollisionHooks + 'static = ()> {
    broad_phase: Res<'w, BroadPhase>,
    colliders: Query<'w, 's, (), ActiveColliderFilter>,
    settings: Res<'w, CollisionSettings>,
    hooked: Query<'w, 's, (), With<ActiveHooks>>,
    hooks: StaticSystemParam<'w, 's, H>,
}

impl<H: CollisionHooks> SpatialQuery<'_, '_, H>
where
    for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
{
    /// Whether the collider of `proxy` takes part, on layers matching `layers`.
    fn matches(&self, proxy: &Proxy, layers: CollisionLayers) -> bool {
        layers.interacts_with(&proxy.layers) && self.colliders.contains(proxy.entity)
    }

    /// Whether the game's hooks let `a` and `b` touch; always where neither has [`ActiveHooks`].
    pub(crate) fn accepts(&self, a: Entity, b: Entity) -> bool {
        !(self.hooked.contains(a) || self.hooked.contains(b))
            || self.hooks.filter_pair(a.min(b), a.max(b))
    }

    /// The shape and layers of `entity`'s collider as of the last collision update; `None` if it has
    /// none, or a disabled or invalid one.
    pub(crate) fn collider_of(&self, entity: Entity) -> Option<(WorldShape, CollisionLayers)> {
        let id = self.broad_phase.proxy_id(entity)?;
        self.colliders.contains(entity).then_some(())?;
        Some((
            *self.broad_phase.shape(id),
            self.broad_phase.proxy(id).layers,
        ))
    }

    /// Of the colliders on matching layers that `shape` touches or overlaps, and that the hooks let
    /// touch `entity`, the one it overlaps deepest (ties go to the lower entity), with the contact
    /// from `shape` to it.
    pub(crate) fn deepest_overlap(
        &self,
        entity: Entity,
        shape: &WorldShape,
        layers: CollisionLayers,
    ) -> Option<(Entity, Contact)> {
        let mut deepest: Option<(Entity, Contact)> = None;
        self.broad_phase.query(&shape.aabb(), |proxy, other| {
            if proxy.entity == entity {
                return;
            }
            let Some(contact) = shape.contact(other, OverlapMode::Closed) else {
                return;
            };
            let deeper = deepest.is_none_or(|(best, deepest)| {
                (contact.depth.total_cmp(&deepest.depth)).then(best.cmp(&proxy.entity))
                    == Ordering::Greater
            });
            if deeper && self.matches(proxy, layers) && self.accepts(entity, proxy.entity) {
                deepest = Some((proxy.entity, contact));
            }
        });
        deepest
    }

    /// What `shape`, cast for `entity` along `direction`, touches first within `max_distance` among the
    /// colliders on matching layers that the hooks let touch `entity`, itself aside, counting only the
    /// hits that `counts`; ties go to the lower entity.
    pub(crate) fn cast_for(
        &self,
        entity: Entity,
        shape: &WorldShape,
        layers: CollisionLayers,
        direction: Dir2,
        max_distance: f32,
        counts: impl Fn(&ShapeHit) -> bool,
    ) -> Option<(Entity, ShapeHit)> {
        self.first_cast_hit(shape, direction, max_distance, |proxy, hit| {
            proxy.entity != entity
                && counts(hit)
                && self.matches(proxy, layers)
                && self.accepts(entity, proxy.entity)
        })
    }

    /// What `cast`, moved along `direction`, touches first within `max_distance` among the colliders
    /// whose hit `keep` accepts; ties go to the lower entity.
    fn first_cast_hit(
        &self,
        cast: &WorldShape,
        direction: Dir2,
        max_distance: f32,
        keep: impl Fn(&Proxy, &ShapeHit) -> bool,
    ) -> Option<(Entity, ShapeHit)> {
        let mut best: Option<(Entity, ShapeHit)> = None;
        self.cast_candidates(cast, direction, max_distance, |proxy, hit| {
            let better = best.is_none_or(|(holder, best)| {
                (hit.distance.total_cmp(&best.distance)).then(proxy.entity.cmp(&holder))
                    == Ordering::Less
            });
            if better && keep(proxy, &hit) {
                best = Some((proxy.entity, hit));
            }
            best.map_or(max_distance, |(_, hit)| hit.distance)
        });
        best
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

    /// The lowest entity among the colliders overlapping `collider` placed at `pose`, if any: the
    /// first of [`shape_intersections`](Self::shape_intersections), found without collecting them.
    pub fn lowest_shape_intersection(
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

    /// The collider that `collider`, placed at `pose` and moved along `direction`, touches first
    /// within `max_distance`, with where; ties go to the lower entity. A shape that touches or
    /// overlaps a collider at its start hits it at distance zero. `None` also for an invalid
    /// collider or pose.
    ///
    /// The shape moves without turning ([`shape_cast`]). Its cost grows with the box it sweeps.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_rect_collision::geometry::Pose2d;
    /// use bevy_rect_collision::prelude::*;
    ///
    /// /// How far the player's box can move right before it meets a wall.
    /// fn room_ahead(query: SpatialQuery, player: Single<&GlobalTransform, With<Collider>>) -> f32 {
    ///     let pose = Pose2d::from_translation(player.translation().truncate());
    ///     let body = Collider::rect(1.0, 2.0);
    ///     query
    ///         .cast_shape(&body, &pose, Dir2::X, 10.0, CollisionLayers::ALL)
    ///         .map_or(10.0, |(_wall, hit)| hit.distance)
    /// }
    /// # bevy::ecs::system::assert_is_system(room_ahead);
    /// ```
    pub fn cast_shape(
        &self,
        collider: &Collider,
        pose: &Pose2d,
        direction: Dir2,
        max_distance: f32,
        layers: CollisionLayers,
    ) -> Option<(Entity, ShapeHit)> {
        let cast = collider.world_shape(pose)?;
        self.first_cast_hit(&cast, direction, max_distance, |proxy, _| {
            self.matches(proxy, layers)
        })
    }

    /// Every collider that `collider`, placed at `pose` and moved along `direction`, touches within
    /// `max_distance`, with where it first touches each, nearest first (ties by entity).
    pub fn cast_shape_all(
        &self,
        collider: &Collider,
        pose: &Pose2d,
        direction: Dir2,
        max_distance: f32,
        layers: CollisionLayers,
    ) -> Vec<(Entity, ShapeHit)> {
        let mut hits = Vec::new();
        let Some(cast) = collider.world_shape(pose) else {
            return hits;
        };
        self.cast_candidates(&cast, direction, max_distance, |proxy, hit| {
            if self.matches(proxy, layers) {
                hits.push((proxy.entity, hit));
            }
            max_distance
        });
        hits.sort_unstable_by(|(a, a_hit), (b, b_hit)| {
            (a_hit.distance.total_cmp(&b_hit.distance)).then(a.cmp(b))
        });
        hits
    }

    /// The collider that `entity`'s own collider, moved along `direction` from where it was at the
    /// last collision update, touches first within `max_distance`, with where; ties go to the lower
    /// entity. It is cast on its own layers, never hits itself, and asks the game's hooks about its
    /// pairs ([`CollisionHooks`]). `None` also if `entity` has no enabled, valid collider.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_rect_collision::prelude::*;
    ///
    /// #[derive(Component)]
    /// struct Player;
    ///
    /// /// Whether the player has room to stand up: nothing within 1 above it.
    /// fn headroom(query: SpatialQuery, player: Single<Entity, With<Player>>) -> bool {
    ///     query.cast_collider(*player, Dir2::Y, 1.0).is_none()
    /// }
    /// # bevy::ecs::system::assert_is_system(headroom);
    /// ```
    pub fn cast_collider(
        &self,
        entity: Entity,
        direction: Dir2,
        max_distance: f32,
    ) -> Option<(Entity, ShapeHit)> {
        let (shape, layers) = self.collider_of(entity)?;
        self.cast_for(entity, &shape, layers, direction, max_distance, |_| true)
    }

    /// Casts `cast` along `direction` against the colliders whose fat AABB the box it sweeps meets,
    /// and calls `visit` with each hit within the reach, which `visit` returns (at first
    /// `max_distance`).
    fn cast_candidates(
        &self,
        cast: &WorldShape,
        direction: Dir2,
        max_distance: f32,
        mut visit: impl FnMut(&Proxy, ShapeHit) -> f32,
    ) {
        if max_distance.is_nan() || max_distance < 0.0 {
            return;
        }
        // The box the shape sweeps, as the segment its centre runs along, against boxes grown by its
        // half size; it ends where it leaves the box around every collider.
        let (aabb, inverse) = (cast.aabb(), direction.recip());
        let (center, half_size) = (aabb.center(), aabb.half_size());
        let bounds = self.broad_phase.bounds().grow(half_size);
        let Some((_, exit)) = segment_in(&bounds, center, inverse, max_distance) else {
            return;
        };
        let end = aabb.translated_by(*direction * exit);
        let mut reach = max_distance;
        self.broad_phase.query(&aabb.merge(&end), |proxy, shape| {
            if segment_in(&proxy.fat.grow(half_size), center, inverse, reach).is_some()
                && let Some(hit) = shape_cast(cast, direction, reach, shape)
            {
                reach = visit(proxy, hit);
            }
        });
    }
}
