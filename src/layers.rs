//! [`CollisionLayers`]: which colliders may collide.

use bevy::prelude::*;

/// Which layers a collider belongs to and which layers it collides with, as 32 bits each.
///
/// Two colliders are tested only if each one's memberships meet the other's filters. The default
/// belongs to every layer and collides with every layer, so colliders without layers all collide.
/// Spatial queries take layers too, and use the same rule. `Collider` requires this component: removing
/// it from a collider puts the default back, on which the pipeline acts as on any change of layers.
///
/// ```
/// use bevy_rect_collision::prelude::*;
///
/// const PLAYER: u32 = 1 << 0;
/// const COIN: u32 = 1 << 1;
/// const WALL: u32 = 1 << 2;
///
/// let player = CollisionLayers::new(PLAYER, COIN | WALL);
/// let coin = CollisionLayers::new(COIN, PLAYER);
/// let wall = CollisionLayers::new(WALL, PLAYER);
/// assert!(player.interacts_with(&coin));
/// assert!(player.interacts_with(&wall));
/// assert!(!coin.interacts_with(&wall), "coins ignore walls");
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component, Default, PartialEq)]
pub struct CollisionLayers {
    /// The layers this collider belongs to. Defaults to all.
    pub memberships: u32,
    /// The layers this collider collides with. Defaults to all.
    pub filters: u32,
}

impl Default for CollisionLayers {
    fn default() -> Self {
        Self::ALL
    }
}

impl CollisionLayers {
    /// Belongs to every layer and collides with every layer.
    pub const ALL: Self = Self {
        memberships: u32::MAX,
        filters: u32::MAX,
    };

    /// Belongs to no layer and collides with nothing.
    pub const NONE: Self = Self {
        memberships: 0,
        filters: 0,
    };

    /// Layers from memberships and filters.
    pub const fn new(memberships: u32, filters: u32) -> Self {
        Self {
            memberships,
            filters,
        }
    }

    /// Whether a pair with these layers is tested: each side's memberships meet the other's filters.
    #[inline]
    pub const fn interacts_with(&self, other: &CollisionLayers) -> bool {
        (self.memberships & other.filters) != 0 && (other.memberships & self.filters) != 0
    }
}
