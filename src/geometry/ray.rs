//! Ray casts against the world-space shapes.

use bevy::math::{Ray2d, Rot2, Vec2};

use super::WorldShape;
use super::direction::direction_and_length;
use super::rounded::{self, RoundedPolygon};

/// Where a ray first meets a shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// Distance along the ray's (unit) direction from its origin to the hit; zero when the origin is
    /// inside the shape or on its boundary.
    pub distance: f32,
    /// Unit normal of the shape's boundary at the hit, pointing out of the shape; the reverse of the ray's
    /// direction when the origin is inside.
    pub normal: Vec2,
}

/// The first point where `ray` meets `shape` within `max_distance`, or `None`.
///
/// Shapes are solid: a ray that starts inside hits at distance zero. Rectangles use the slab method in
/// the rectangle's own frame; circles solve the quadratic for the ray's distance to the centre;
/// polygons clip the ray by each edge's half-plane (Cyrus–Beck), and capsules take the first hit of
/// their end circles and the rectangles along their sides.
///
/// ```
/// use bevy::math::{Dir2, Ray2d, Vec2};
/// use bevy_rect_collision::geometry::*;
///
/// let wall = WorldShape::Rect(WorldRect::new(Vec2::new(5.0, 0.0), Vec2::splat(1.0)));
/// let ray = Ray2d::new(Vec2::ZERO, Dir2::X);
/// let hit = ray_cast(&wall, ray, 100.0).unwrap();
/// assert_eq!(hit.distance, 4.0);
/// assert_eq!(hit.normal, -Vec2::X);
/// assert!(ray_cast(&wall, ray, 3.0).is_none());
/// ```
pub fn ray_cast(shape: &WorldShape, ray: Ray2d, max_distance: f32) -> Option<RayHit> {
    let hit = match shape {
        WorldShape::Rect(rect) => ray_cast_box(rect.center, rect.half_size, Rot2::IDENTITY, ray),
        WorldShape::RotatedRect(rect) => {
            ray_cast_box(rect.center, rect.half_size, rect.rotation, ray)
        }
        WorldShape::Circle(circle) => ray_cast_circle(circle.center, circle.radius, ray),
        WorldShape::Capsule(_) | WorldShape::Polygon(_) => {
            rounded::ray_cast(&RoundedPolygon::of(shape), ray)
        }
    }?;
    (hit.distance <= max_distance).then_some(hit)
}

pub(super) fn ray_cast_box(
    center: Vec2,
    half_size: Vec2,
    rotation: Rot2,
    ray: Ray2d,
) -> Option<RayHit> {
    let inverse = rotation.inverse();
    let origin = inverse * (ray.origin - center);
    let direction = inverse * *ray.direction;
    let mut entry = f32::NEG_INFINITY;
    let mut exit = f32::INFINITY;
    let mut entry_normal = Vec2::ZERO;
    for axis in 0..2 {
        let (o, d, h) = (origin[axis], direction[axis], half_size[axis]);
        if d == 0.0 {
            // Parallel to this slab: inside it for every distance, or never.
            if o.abs() > h {
                return None;
            }
            continue;
        }
        let near_side = if d > 0.0 { -h } else { h };
        let near = (near_side - o) / d;
        let far = (-near_side - o) / d;
        if near > entry {
            entry = near;
            entry_normal = Vec2::ZERO;
            entry_normal[axis] = near_side.signum();
        }
        exit = exit.min(far);
    }
    if entry > exit || exit < 0.0 {
        return None;
    }
    if entry <= 0.0 {
        return Some(RayHit {
            distance: 0.0,
            normal: -*ray.direction,
        });
    }
    Some(RayHit {
        distance: entry,
        normal: rotation * entry_normal,
    })
}

pub(super) fn ray_cast_circle(center: Vec2, radius: f32, ray: Ray2d) -> Option<RayHit> {
    let from_center = ray.origin - center;
    let outside = from_center.length_squared() - radius * radius;
    if outside <= 0.0 {
        return Some(RayHit {
            distance: 0.0,
            normal: -*ray.direction,
        });
    }
    let along = from_center.dot(*ray.direction);
    let discriminant = along * along - outside;
    if along > 0.0 || discriminant < 0.0 {
        return None;
    }
    let distance = -along - discriminant.sqrt();
    let normal = direction_and_length(from_center + *ray.direction * distance)
        .map_or(-*ray.direction, |(unit, _)| unit);
    Some(RayHit {
        distance: distance.max(0.0),
        normal,
    })
}
