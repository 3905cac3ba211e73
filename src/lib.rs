#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod broad_phase;
pub mod collider;
#[cfg(feature = "debug")]
pub mod debug;
pub mod diagnostics;
mod entity_set;
pub mod events;
pub mod geometry;
pub mod hooks;
#[doc(hidden)]
pub mod internals;
pub mod layers;
pub mod move_and_slide;
pub mod narrow_phase;
mod parallel;
pub mod plugin;
mod prepare;
pub mod query;
mod settings;
#[cfg(test)]
mod test_rng;
pub mod tilemap;

pub use collider::{
    ActiveColliderFilter, Collider, ColliderDisabled, ColliderError, ColliderShape,
    ColliderWorldShape, CollidingEntities, InvalidCollider, OneWayPlatform, SweptCollider,
    Teleported,
};
pub use diagnostics::{CollisionDiagnostics, StageTimings};
pub use events::{CollisionEnded, CollisionStarted};
pub use hooks::{ActiveHooks, CollisionHooks};
pub use layers::CollisionLayers;
pub use move_and_slide::{MoveAndSlideConfig, MoveAndSlideOutput};
pub use narrow_phase::{Contacts, PairContact};
pub use plugin::{CollisionSystems, RectCollisionPlugin};
pub use query::{SpatialQuery, SpatialQueryFilter};
pub use settings::CollisionSettings;
pub use tilemap::{TileRegion, TileRegionOf, TileRegions, TilemapCollider};

/// Everything a game needs: `use bevy_rect_collision::prelude::*;`.
pub mod prelude {
    pub use crate::geometry::{Contact, OverlapMode, Pose2d, RayHit, ShapeHit};
    pub use crate::{
        ActiveHooks, Collider, ColliderDisabled, ColliderError, ColliderShape, ColliderWorldShape,
        CollidingEntities, CollisionDiagnostics, CollisionEnded, CollisionHooks, CollisionLayers,
        CollisionSettings, CollisionStarted, CollisionSystems, Contacts, InvalidCollider,
        MoveAndSlideConfig, MoveAndSlideOutput, OneWayPlatform, RectCollisionPlugin, SpatialQuery,
        SpatialQueryFilter, SweptCollider, Teleported, TileRegion, TileRegionOf, TileRegions,
        TilemapCollider,
    };

    #[cfg(feature = "egui")]
    pub use crate::debug::RectCollisionEguiPlugin;
    #[cfg(feature = "debug")]
    pub use crate::debug::{
        ColliderGizmo, CollisionGizmos, RectCollisionDebugPlugin, SelectedCollider,
    };
}
