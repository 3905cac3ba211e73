//! [`CollisionHooks`]: the game's say over which pairs of colliders may touch.

use core::any::TypeId;
use core::sync::atomic::{AtomicBool, Ordering};

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
/// For one-way platforms there is [`OneWayPlatform`](crate::OneWayPlatform); hooks are for the
/// game's own rules. A door lets through whoever holds its key:
///
/// ```
/// use bevy::ecs::system::SystemParam;
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// #[derive(Component)]
/// struct Door(u32);
///
/// #[derive(Component)]
/// struct KeyRing(Vec<u32>);
///
/// #[derive(SystemParam)]
/// struct LockedDoors<'w, 's> {
///     doors: Query<'w, 's, &'static Door>,
///     rings: Query<'w, 's, &'static KeyRing>,
/// }
///
/// impl CollisionHooks for LockedDoors<'_, '_> {
///     fn filter_pair(&self, a: Entity, b: Entity) -> bool {
///         let opens = |door: Entity, visitor: Entity| {
///             let (Ok(door), Ok(ring)) = (self.doors.get(door), self.rings.get(visitor)) else {
///                 return false;
///             };
///             ring.0.contains(&door.0)
///         };
///         !(opens(a, b) || opens(b, a))
///     }
/// }
///
/// App::new().add_plugins(RectCollisionPlugin::default().with_hooks::<LockedDoors>());
/// // Spawn each door with `ActiveHooks`, so that its pairs are asked about.
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

/// The hooks the app installed with [`RectCollisionPlugin::with_hooks`](crate::RectCollisionPlugin::with_hooks),
/// so that a [`SpatialQuery`](crate::SpatialQuery) of another type can say so.
#[derive(Resource, Debug)]
pub(crate) struct InstalledHooks {
    type_id: TypeId,
    type_name: &'static str,
    warned: AtomicBool,
}

impl InstalledHooks {
    pub(crate) fn of<H: 'static>() -> Self {
        Self {
            type_id: TypeId::of::<H>(),
            type_name: core::any::type_name::<H>(),
            warned: AtomicBool::new(false),
        }
    }

    /// Warns, the first time only, where `H` is not the installed hooks' type: a query through `H`
    /// moves colliders through what the installed hooks keep apart. Returns whether it warned.
    pub(crate) fn warn_if_not<H: 'static>(&self) -> bool {
        let warn = TypeId::of::<H>() != self.type_id && !self.warned.swap(true, Ordering::Relaxed);
        if warn {
            warn!(
                "a SpatialQuery<{}> moves or casts colliders, but the app installed the hooks {}: \
                 name them as SpatialQuery<{}> to have them asked",
                core::any::type_name::<H>(),
                self.type_name,
                self.type_name,
            );
        }
        warn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct GameHooks;

    #[test]
    fn a_query_without_the_installed_hooks_warns_once() {
        let installed = InstalledHooks::of::<GameHooks>();
        assert!(!installed.warn_if_not::<GameHooks>(), "the installed hooks");
        assert!(installed.warn_if_not::<()>(), "no hooks: a warning");
        assert!(!installed.warn_if_not::<()>(), "once");
    }
}
