//! [`CollisionSettings`]: what the pipeline's stages read of the game's choices.

use bevy::prelude::*;

use crate::geometry::OverlapMode;

/// Settings of the collision pipeline. Insert it before adding the plugin to start with other values.
#[derive(Resource, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Resource)]
pub struct CollisionSettings {
    /// Whether touching counts ([`OverlapMode::Closed`]) or only an overlap of positive area
    /// ([`OverlapMode::InteriorOnly`]). Defaults to [`OverlapMode::Closed`].
    #[reflect(ignore)]
    pub overlap_mode: OverlapMode,
    /// Whether the pipeline runs. While it is off nothing is updated and no event is sent; pairs that
    /// stopped touching meanwhile end on the first update after. Defaults to `true`.
    pub enabled: bool,
}

impl Default for CollisionSettings {
    fn default() -> Self {
        Self {
            overlap_mode: OverlapMode::Closed,
            enabled: true,
        }
    }
}

impl CollisionSettings {
    /// Run condition: whether the collision pipeline is enabled.
    pub fn is_enabled(settings: Res<CollisionSettings>) -> bool {
        settings.enabled
    }
}
