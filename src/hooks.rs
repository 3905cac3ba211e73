//! [`CollisionHooks`]: the game's say over which pairs of colliders may touch.

use bevy::ecs::system::ReadOnlySystemParam;
use bevy::prelude::*;

/// A game's filter of collider pairs, on a read-only [`SystemParam`](bevy::ecs::system::SystemParam)
/// of its own, installed with [`RectCollisionPlugin::with_hooks`](crate::RectCollisionPlugin::with_hooks).
///
/// [`filter_pair`](Self::filter_pair) is asked, in every collision update, about each candidate pair
/// in which at least one collider carries [`ActiveHooks`]; colliders without the marker cost nothing.
/// A pair it turns down does not touch: if it touched, it ends in that update, with its
/// [`CollisionEnded`](crate::CollisionEnded). [`SpatialQuery`](crate::SpatialQuery)`<H>` asks the same
/// hooks when it moves or casts a collider of the world ([`move_and_slide`], [`cast_collider`]).
///
/// `SpatialQuery<H>` holds the hooks' own queries, so the system that uses it may not change what
/// they read: keep such state (a "dropping through" flag, say) in a component that another system
/// sets.
///
/// A one-way platform lets a character through from below and holds it from above:
///
/// ```
/// use bevy::ecs::system::SystemParam;
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// #[derive(Component)]
/// struct OneWay;
///
/// #[derive(SystemParam)]
/// struct OneWayPlatforms<'w, 's> {
///     platforms: Query<'w, 's, (), With<OneWay>>,
///     shapes: Query<'w, 's, &'static ColliderWorldShape>,
/// }
///
/// impl CollisionHooks for OneWayPlatforms<'_, '_> {
///     fn filter_pair(&self, a: Entity, b: Entity) -> bool {
///         let (platform, other) = if self.platforms.contains(a) { (a, b) } else { (b, a) };
///         if !self.platforms.contains(platform) {
///             return true;
///         }
///         let top = |entity| self.shapes.get(entity).ok()?.0.map(|shape| shape.aabb());
///         match (top(platform), top(other)) {
///             // Only what is above the platform's top stands on it.
///             (Some(platform), Some(other)) => other.min.y >= platform.max.y - 0.01,
///             _ => true,
///         }
///     }
/// }
///
/// App::new().add_plugins(RectCollisionPlugin::default().with_hooks::<OneWayPlatforms>());
/// ```
///
/// [`move_and_slide`]: crate::SpatialQuery::move_and_slide
/// [`cast_collider`]: crate::SpatialQuery::cast_collider
pub trait CollisionHooks: ReadOnlySystemParam + Send + Sync {
    /// Whether the colliders `a` and `b` may touch; `a` is the lower entity. Asked only where one
    /// of them has [`ActiveHooks`] and their layers interact.
    fn filter_pair(&self, a: Entity, b: Entity) -> bool;
}

/// No hooks: every pair may touch.
impl CollisionHooks for () {
    #[inline]
    fn filter_pair(&self, _: Entity, _: Entity) -> bool {
        true
    }
}

/// Marks a collider whose pairs the game's [`CollisionHooks`] filter.
///
/// A marked collider's pairs are tested in every update, moving or not, as the hooks' answer may
/// change without a move.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default)]
pub struct ActiveHooks;
