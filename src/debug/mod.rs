//! The debug overlay: collider outlines, bounding boxes, contact normals and the broad phase's pairs drawn
//! with gizmos (feature `debug`), and an egui panel (feature `egui`).

mod gizmos;

#[cfg(feature = "egui")]
mod egui_panel;

#[cfg(feature = "egui")]
pub use egui_panel::{CollisionTimingHistory, RectCollisionEguiPlugin};
pub use gizmos::{ColliderGizmo, CollisionGizmos, RectCollisionDebugPlugin, SelectedCollider};
