//! [`SpatialQuery`]: what overlaps a point or a shape, and what a ray hits first.

use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::system::{StaticSystemParam, SystemParam, SystemParamItem};
use bevy::math::Ray2d;
use bevy::math::bounding::{Aabb2d, BoundingVolume};
use bevy::prelude::*;

use core::cmp::Ordering;

use crate::broad_phase::{BroadPhase, Proxy, segment_in};
use crate::collider::{ActiveColliderFilter, Collider, OneWayPlatform};
use crate::geometry::{
    Contact, OverlapMode, Pose2d, RayHit, ShapeHit, WorldRect, WorldShape,
    intersection_test_rect_rect, ray_cast, shape_cast,
};
use crate::hooks::{ActiveHooks, CollisionHooks, InstalledHooks};
use crate::layers::CollisionLayers;
use crate::settings::CollisionSettings;

/// How far below a [`OneWayPlatform`]'s top, as a share of the top's distance from the origin plus
/// one, a moving shape still counts as above it: rounding, not a depth.
const ONE_WAY_SLOP: f32 = 1e-5;

/// Which colliders a spatial query finds: those with a membership in [`mask`](Self::mask), less the
/// [`excluded_entities`](Self::excluded_entities), as avian's filter of the same name.
///
/// A query has no collider of its own, so a collider's own [`CollisionLayers::filters`] play no part:
/// a collider on the `ENEMY` layer is found by `SpatialQueryFilter::from_mask(ENEMY)` whatever it
/// collides with. The default finds every collider.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// const ENEMY: u32 = 1 << 3;
///
/// fn enemies_under_the_cursor(query: SpatialQuery, cursor: Res<Cursor>, player: Single<Entity, With<Player>>) {
///     let filter = SpatialQueryFilter::from_mask(ENEMY).with_excluded_entities([*player]);
///     for enemy in query.point_intersections(cursor.0, &filter) {
///         info!("{enemy} is under the cursor");
///     }
/// }
/// # #[derive(Resource)] struct Cursor(Vec2);
/// # #[derive(Component)] struct Player;
/// # bevy::ecs::system::assert_is_system(enemies_under_the_cursor);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpatialQueryFilter {
    /// The layers to find: a collider is found if one of its memberships is in the mask. Defaults to
    /// every layer.
    pub mask: u32,
    /// Entities never found, such as the one asking. Defaults to none.
    pub excluded_entities: EntityHashSet,
}

impl Default for SpatialQueryFilter {
    fn default() -> Self {
        Self::from_mask(u32::MAX)
    }
}

impl SpatialQueryFilter {
    /// Finds the colliders with a membership in `mask`.
    pub fn from_mask(mask: u32) -> Self {
        Self {
            mask,
            excluded_entities: EntityHashSet::default(),
        }
    }

    /// Finds every collider but `entities`.
    pub fn from_excluded_entities(entities: impl IntoIterator<Item = Entity>) -> Self {
        Self::default().with_excluded_entities(entities)
    }

    /// The same filter with `mask` instead.
    #[must_use]
    pub fn with_mask(mut self, mask: u32) -> Self {
        self.mask = mask;
        self
    }

    /// The same filter, also leaving out `entities`.
    #[must_use]
    pub fn with_excluded_entities(mut self, entities: impl IntoIterator<Item = Entity>) -> Self {
        self.excluded_entities.extend(entities);
        self
    }

    /// Whether a collider of `entity` on `layers` passes the filter.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_rect_collision::prelude::*;
    ///
    /// let enemy = CollisionLayers::new(0b100, 0);
    /// assert!(SpatialQueryFilter::from_mask(0b100).test(Entity::PLACEHOLDER, enemy));
    /// assert!(!SpatialQueryFilter::from_mask(0b011).test(Entity::PLACEHOLDER, enemy));
    /// let without = SpatialQueryFilter::from_excluded_entities([Entity::PLACEHOLDER]);
    /// assert!(!without.test(Entity::PLACEHOLDER, enemy));
    /// ```
    #[inline]
    pub fn test(&self, entity: Entity, layers: CollisionLayers) -> bool {
        self.mask & layers.memberships != 0
            && (self.excluded_entities.is_empty() || !self.excluded_entities.contains(&entity))
    }
}

/// Finds the colliders with a membership in `layers.filters`, as a collider on `layers` would meet
/// them but for their own filters.
impl From<CollisionLayers> for SpatialQueryFilter {
    fn from(layers: CollisionLayers) -> Self {
        Self::from_mask(layers.filters)
    }
}

/// Spatial queries over the colliders, answered from the broad phase's levels of grids: each visits
/// only the colliders near the point, box, shape, ray or cast.
///
/// The colliders are as of the last collision update: their shapes and layers as the broad phase
/// last saw them, less the colliders removed or disabled since. Disabled and invalid colliders are
/// never found. The queries of points, boxes, shapes and rays take a [`SpatialQueryFilter`]: the
/// layers to find as a mask, and entities to skip; `&default()` finds everything. Results are sorted
/// by entity, so they are the same from run to run.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// fn under_the_cursor(query: SpatialQuery, cursor: Res<CursorWorldPosition>) {
///     for entity in query.point_intersections(cursor.0, &default()) {
///         println!("{entity} is under the cursor");
///     }
/// }
/// # #[derive(Resource)] struct CursorWorldPosition(Vec2);
/// # bevy::ecs::system::assert_is_system(under_the_cursor);
/// ```
///
/// The queries that move or cast a collider of the world, [`move_and_slide`](Self::move_and_slide)
/// and [`cast_collider`](Self::cast_collider), meet the others on the collider's own layers, as a
/// pair of colliders does, and ask the game's hooks about its pairs with colliders that have
/// [`ActiveHooks`]: name them as `SpatialQuery<MyHooks>` ([`CollisionHooks`]). A
/// [`OneWayPlatform`] stops these and the shape casts only where the moving shape starts wholly on
/// its open side and moves against it.
///
/// Besides the broad phase, it reads each collider's `Collider`, `GlobalTransform` and
/// `CollisionLayers`, for a collider the broad phase has not placed yet: a system that changes
/// those needs its queries in another system.
#[derive(SystemParam)]
pub struct SpatialQuery<'w, 's, H: CollisionHooks + 'static = ()> {
    broad_phase: Res<'w, BroadPhase>,
    colliders: Query<
        'w,
        's,
        (
            &'static Collider,
            &'static GlobalTransform,
            &'static CollisionLayers,
        ),
        ActiveColliderFilter,
    >,
    settings: Res<'w, CollisionSettings>,
    hooked: Query<'w, 's, (), With<ActiveHooks>>,
    hooks: StaticSystemParam<'w, 's, H>,
    installed_hooks: Option<Res<'w, InstalledHooks>>,
    one_way: Query<'w, 's, &'static GlobalTransform, With<OneWayPlatform>>,
}

impl<H: CollisionHooks> SpatialQuery<'_, '_, H>
where
    for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
{
    /// Whether the collider of `proxy` takes part and passes `filter`.
    fn passes(&self, proxy: &Proxy, filter: &SpatialQueryFilter) -> bool {
        filter.test(proxy.entity, proxy.layers) && self.colliders.contains(proxy.entity)
    }

    /// Whether the collider of `proxy` takes part, on layers that interact with `layers`.
    fn interacts(&self, proxy: &Proxy, layers: CollisionLayers) -> bool {
        layers.interacts_with(&proxy.layers) && self.colliders.contains(proxy.entity)
    }

    /// Whether the collider of `proxy`, with `shape`, stops `mover` moving along `direction` (or
    /// pushed out of it, with no direction): always, unless it is a [`OneWayPlatform`] and `mover`
    /// starts in it, below its top, or moves along or away from its up.
    fn blocks(
        &self,
        proxy: &Proxy,
        shape: &WorldShape,
        mover: &WorldShape,
        direction: Option<Dir2>,
    ) -> bool {
        let Ok(platform) = self.one_way.get(proxy.entity) else {
            return true;
        };
        let Ok(up) = Dir2::new(platform.affine().matrix3.y_axis.truncate()) else {
            return false;
        };
        let top = shape.extent_along(*up).y;
        let bottom = mover.extent_along(*up).x;
        // Rounding aside: a mover resting on the top is above it.
        let above = bottom >= top - ONE_WAY_SLOP * (1.0 + top.abs());
        above && direction.is_none_or(|direction| direction.dot(*up) < 0.0)
    }

    /// Warns once, naming both types, where the app installed hooks of another type than `H`: this
    /// query would move colliders through what the game's hooks keep apart.
    pub(crate) fn warn_if_hooks_differ(&self) {
        if let Some(installed) = &self.installed_hooks {
            installed.warn_if_not::<H>();
        }
    }

    /// Whether the game's hooks let `a` and `b` touch; always where neither has [`ActiveHooks`].
    pub(crate) fn accepts(&self, a: Entity, b: Entity) -> bool {
        !(self.hooked.contains(a) || self.hooked.contains(b))
            || self.hooks.filter_pair(a.min(b), a.max(b))
    }

    /// The shape and layers of `entity`'s collider as of the last collision update, or for one the
    /// broad phase has not placed yet (spawned since), as its `GlobalTransform` places it now; `None`
    /// if it has no enabled, valid collider.
    pub(crate) fn collider_of(&self, entity: Entity) -> Option<(WorldShape, CollisionLayers)> {
        let (collider, transform, layers) = self.colliders.get(entity).ok()?;
        match self.broad_phase.proxy_id(entity) {
            Some(id) => Some((
                self.broad_phase.shape(id),
                self.broad_phase.proxy(id).layers,
            )),
            None => Some((collider.world_shape_from_transform(transform)?, *layers)),
        }
    }

    /// Of the colliders on interacting layers that `shape` touches or overlaps, that the hooks let
    /// touch `entity` and that block `mover` ([`OneWayPlatform`]s only where `mover` is given and
    /// above them), the one it overlaps deepest (ties go to the lower entity), with the contact from
    /// `shape` to it.
    pub(crate) fn deepest_overlap(
        &self,
        entity: Entity,
        shape: &WorldShape,
        layers: CollisionLayers,
        mover: Option<&WorldShape>,
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
            if deeper
                && self.interacts(proxy, layers)
                && self.accepts(entity, proxy.entity)
                && mover.map_or(!self.one_way.contains(proxy.entity), |mover| {
                    self.blocks(proxy, other, mover, None)
                })
            {
                deepest = Some((proxy.entity, contact));
            }
        });
        deepest
    }

    /// What `shape`, cast for `entity` along `direction`, touches first within `max_distance` among the
    /// colliders on interacting layers that the hooks let touch `entity`, itself aside, counting only
    /// the hits that `counts`; ties go to the lower entity. [`OneWayPlatform`]s block it as
    /// [`Self::blocks`] says where `one_way`, and never otherwise.
    pub(crate) fn cast_for(
        &self,
        entity: Entity,
        shape: &WorldShape,
        layers: CollisionLayers,
        (direction, max_distance): (Dir2, f32),
        one_way: bool,
        counts: impl Fn(&ShapeHit) -> bool,
    ) -> Option<(Entity, ShapeHit)> {
        self.first_cast_hit(shape, direction, max_distance, one_way, |proxy, hit| {
            proxy.entity != entity
                && counts(hit)
                && self.interacts(proxy, layers)
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
        one_way: bool,
        keep: impl Fn(&Proxy, &ShapeHit) -> bool,
    ) -> Option<(Entity, ShapeHit)> {
        let mut best: Option<(Entity, ShapeHit)> = None;
        self.cast_candidates(cast, direction, max_distance, one_way, |proxy, hit| {
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

    /// The colliders that pass `filter`, whose fat AABB overlaps `region` and whose shape passes
    /// `hit`, sorted by entity.
    fn sorted_matches(
        &self,
        region: &Aabb2d,
        filter: &SpatialQueryFilter,
        hit: impl Fn(&WorldShape) -> bool,
    ) -> Vec<Entity> {
        let mut found = Vec::new();
        self.broad_phase.query(region, |proxy, shape| {
            if hit(shape) && self.passes(proxy, filter) {
                found.push(proxy.entity);
            }
        });
        found.sort_unstable();
        found
    }

    /// The colliders containing `point` (boundary included under the default overlap mode), sorted.
    pub fn point_intersections(&self, point: Vec2, filter: &SpatialQueryFilter) -> Vec<Entity> {
        let mode = self.settings.overlap_mode;
        let region = Aabb2d {
            min: point,
            max: point,
        };
        self.sorted_matches(&region, filter, |shape| shape.contains_point(point, mode))
    }

    /// The colliders whose axis-aligned bounding box overlaps `aabb` (boundary included under the
    /// default overlap mode), sorted: a coarse search, for a region of the screen or the candidates of
    /// a test of the game's own.
    pub fn aabb_intersections(&self, aabb: Aabb2d, filter: &SpatialQueryFilter) -> Vec<Entity> {
        let mode = self.settings.overlap_mode;
        let region = WorldRect::from_min_max(aabb.min, aabb.max);
        self.sorted_matches(&aabb, filter, |shape| {
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
        filter: &SpatialQueryFilter,
    ) -> Vec<Entity> {
        let Some(query_shape) = collider.world_shape(pose) else {
            return Vec::new();
        };
        let mode = self.settings.overlap_mode;
        self.sorted_matches(&query_shape.aabb(), filter, |shape| {
            query_shape.intersects(shape, mode)
        })
    }

    /// The lowest entity among the colliders overlapping `collider` placed at `pose`, if any: the
    /// first of [`shape_intersections`](Self::shape_intersections), found without collecting them.
    pub fn lowest_shape_intersection(
        &self,
        collider: &Collider,
        pose: &Pose2d,
        filter: &SpatialQueryFilter,
    ) -> Option<Entity> {
        let query_shape = collider.world_shape(pose)?;
        let mode = self.settings.overlap_mode;
        let mut first: Option<Entity> = None;
        self.broad_phase.query(&query_shape.aabb(), |proxy, shape| {
            if first.is_none_or(|first| proxy.entity < first)
                && query_shape.intersects(shape, mode)
                && self.passes(proxy, filter)
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
        filter: &SpatialQueryFilter,
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
                    if better && self.passes(proxy, filter) {
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
    /// collider or pose. A [`OneWayPlatform`] stops it only where it starts wholly on the platform's
    /// open side and moves against it.
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
    ///         .cast_shape(&body, &pose, Dir2::X, 10.0, &default())
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
        filter: &SpatialQueryFilter,
    ) -> Option<(Entity, ShapeHit)> {
        let cast = collider.world_shape(pose)?;
        self.first_cast_hit(&cast, direction, max_distance, true, |proxy, _| {
            self.passes(proxy, filter)
        })
    }

    /// Every collider that `collider`, placed at `pose` and moved along `direction`, touches within
    /// `max_distance`, with where it first touches each, nearest first (ties by entity), one-way
    /// platforms as for [`cast_shape`](Self::cast_shape).
    pub fn cast_shape_all(
        &self,
        collider: &Collider,
        pose: &Pose2d,
        direction: Dir2,
        max_distance: f32,
        filter: &SpatialQueryFilter,
    ) -> Vec<(Entity, ShapeHit)> {
        let mut hits = Vec::new();
        let Some(cast) = collider.world_shape(pose) else {
            return hits;
        };
        self.cast_candidates(&cast, direction, max_distance, true, |proxy, hit| {
            if self.passes(proxy, filter) {
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
    /// entity. It is cast on its own layers, never hits itself, asks the game's hooks about its pairs
    /// ([`CollisionHooks`]), and meets [`OneWayPlatform`]s as [`cast_shape`](Self::cast_shape) does.
    /// `None` also if `entity` has no enabled, valid collider.
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
        self.warn_if_hooks_differ();
        let (shape, layers) = self.collider_of(entity)?;
        let way = (direction, max_distance);
        self.cast_for(entity, &shape, layers, way, true, |_| true)
    }

    /// Casts `cast` along `direction` against the colliders whose fat AABB the box it sweeps meets,
    /// and calls `visit` with each hit within the reach, which `visit` returns (at first
    /// `max_distance`). Where `one_way`, a [`OneWayPlatform`] is hit only where it
    /// [`blocks`](Self::blocks) the cast; otherwise never.
    fn cast_candidates(
        &self,
        cast: &WorldShape,
        direction: Dir2,
        max_distance: f32,
        one_way: bool,
        mut visit: impl FnMut(&Proxy, ShapeHit) -> f32,
    ) {
        if max_distance.is_nan() || max_distance < 0.0 {
            return;
        }
        // The box the shape sweeps, as the segment its centre runs along, against boxes grown by its
        // half size; it ends where it leaves the box around every collider.
        let (aabb, inverse) = (cast.aabb(), direction.recip());
        let (center, half_size) = (aabb.center(), aabb.half_size());
        let bounds = self.broad_phase.bounds();
        // Before the broad phase holds any collider, there is no box around them and nothing to hit.
        if !bounds.min.cmple(bounds.max).all() {
            return;
        }
        let bounds = bounds.grow(half_size);
        let Some((_, exit)) = segment_in(&bounds, center, inverse, max_distance) else {
            return;
        };
        let end = aabb.translated_by(*direction * exit);
        let mut reach = max_distance;
        self.broad_phase.query(&aabb.merge(&end), |proxy, shape| {
            if segment_in(&proxy.fat.grow(half_size), center, inverse, reach).is_some()
                && (if one_way {
                    self.blocks(proxy, shape, cast, Some(direction))
                } else {
                    !self.one_way.contains(proxy.entity)
                })
                && let Some(hit) = shape_cast(cast, direction, reach, shape)
            {
                reach = visit(proxy, hit);
            }
        });
    }
}
