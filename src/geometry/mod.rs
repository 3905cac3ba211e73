//! World-space shapes and the exact narrow-phase tests between them.
//!
//! Nothing here touches the ECS: every function takes plain values from
//! [`bevy::math`] and can be called and tested without an `App`.
//!
//! # Shapes
//! - [`WorldRect`]: an axis-aligned rectangle.
//! - [`WorldRotatedRect`]: a rectangle rotated about its centre.
//! - [`WorldCircle`]: a circle.
//! - [`WorldCapsule`]: a segment grown by a radius.
//! - [`ConvexPolygon`]: a convex polygon of at most [`MAX_POLYGON_VERTICES`] vertices.
//! - [`WorldShape`]: any of them, with a dispatching [`WorldShape::intersects`] and [`WorldShape::contact`].
//!
//! # Queries
//! Each pair of shapes has a boolean test, `intersection_test_shape1_shape2`, and a contact query,
//! `contact_shape1_shape2`, named after parry's `query_shape1_shape2` functions. A mirrored pair is a thin
//! wrapper that swaps the arguments and flips the normal.
//!
//! | pair | algorithm | file |
//! |---|---|---|
//! | rect, rect | point in the expanded rectangle ("Intersección de rectángulos") | `rect_rect.rs` |
//! | rotated rect, rect | two phases: bounding box, then the rotated edges ("Rotated rectangle intersection") | `rotated_rect_rect.rs` |
//! | rotated rect, rotated rect | separating axis test on the four edge normals (manski's "Rectangle Intersection Test (with C#)") | `rotated_rect_rotated_rect.rs` |
//! | circle, rotated rect | the centre moved into the rectangle's frame and clamped ("Circle and Rotated Rectangle Collision Detection") | `circle_rotated_rect.rs` |
//! | circle, rect | the same clamp without the rotation | `circle_rect.rs` |
//! | circle, circle | squared distance against the squared sum of radii | `circle_circle.rs` |
//! | any pair with a capsule or a polygon | each shape a convex polygon grown by a radius: separating axis test on the edge normals, then the closest points against the radii | `rounded.rs` |
//!
//! # Boundaries
//! Shapes are closed sets: two shapes that only touch (a shared edge, a corner on an edge, a circle tangent
//! to a side) collide, as "Rotated rectangle intersection" argues. [`OverlapMode::InteriorOnly`] asks for
//! an overlap of positive area instead, so that contact of zero area does not count.
//!
//! # Casts
//! [`ray_cast`] finds where a ray first meets a shape, and [`shape_cast`] where a shape moving along
//! a straight line first touches another: its time of impact, the point and the normal.
//!
//! The sources, and what each test guarantees at the boundary, are in `docs/algorithms.md`.

mod circle_circle;
mod circle_rect;
mod circle_rotated_rect;
mod contact;
mod contact_point;
mod direction;
mod overlap_mode;
mod pose;
mod ray;
mod rect_rect;
mod rotated_rect_rect;
mod rotated_rect_rotated_rect;
mod rounded;
mod shape_cast;
mod shapes;
mod world_shape;

#[cfg(test)]
mod testing;

pub use circle_circle::{contact_circle_circle, intersection_test_circle_circle};
pub use circle_rect::{
    contact_circle_rect, contact_rect_circle, intersection_test_circle_rect,
    intersection_test_rect_circle,
};
pub use circle_rotated_rect::{
    contact_circle_rotated_rect, contact_rotated_rect_circle,
    intersection_test_circle_rotated_rect, intersection_test_rotated_rect_circle,
};
pub use contact::Contact;
pub use contact_point::contact_point;
pub use overlap_mode::OverlapMode;
pub use pose::Pose2d;
pub use ray::{RayHit, ray_cast};
pub use rect_rect::{contact_rect_rect, intersection_test_rect_rect};
pub use rotated_rect_rect::{
    contact_rect_rotated_rect, contact_rotated_rect_rect, intersection_test_rect_rotated_rect,
    intersection_test_rotated_rect_rect,
};
pub use rotated_rect_rotated_rect::{
    contact_rotated_rect_rotated_rect, intersection_test_rotated_rect_rotated_rect,
};
pub use shape_cast::{ShapeHit, shape_cast};
pub use shapes::{
    ConvexPolygon, HullError, MAX_POLYGON_VERTICES, WorldCapsule, WorldCircle, WorldRect,
    WorldRotatedRect,
};
pub use world_shape::WorldShape;
