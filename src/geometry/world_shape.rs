//! Any of the shapes, with dispatching queries.

use bevy::math::{Vec2, bounding::Aabb2d};

use super::rounded::{self, RoundedPolygon};
use super::*;

/// A collider's shape placed in the world: what the plugin derives from a `Collider` and its
/// `GlobalTransform` each frame, and what every query reads.
///
/// ```
/// use bevy::math::{Rot2, Vec2};
/// use bevy_rect_collision::geometry::*;
///
/// let wall = WorldShape::Rect(WorldRect::new(Vec2::ZERO, Vec2::new(10.0, 1.0)));
/// let ball = WorldShape::Circle(WorldCircle::new(Vec2::new(3.0, 1.5), 0.5));
/// assert!(wall.intersects(&ball, OverlapMode::Closed));
/// let contact = wall.contact(&ball, OverlapMode::Closed).unwrap();
/// assert_eq!(contact.normal, Vec2::Y);
/// assert_eq!(contact.depth, 0.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WorldShape {
    /// An axis-aligned rectangle.
    Rect(WorldRect),
    /// A rectangle rotated about its centre.
    RotatedRect(WorldRotatedRect),
    /// A circle.
    Circle(WorldCircle),
    /// A capsule: a segment grown by a radius.
    Capsule(WorldCapsule),
    /// A convex polygon.
    Polygon(ConvexPolygon),
}

impl WorldShape {
    /// The centre of the shape.
    #[inline]
    pub fn center(&self) -> Vec2 {
        match self {
            WorldShape::Rect(rect) => rect.center,
            WorldShape::RotatedRect(rect) => rect.center,
            WorldShape::Circle(circle) => circle.center,
            WorldShape::Capsule(capsule) => capsule.center,
            WorldShape::Polygon(polygon) => polygon.center(),
        }
    }

    /// The shape moved by `offset`.
    #[inline]
    pub fn translated(&self, offset: Vec2) -> Self {
        let mut shape = *self;
        match &mut shape {
            WorldShape::Rect(rect) => rect.center += offset,
            WorldShape::RotatedRect(rect) => rect.center += offset,
            WorldShape::Circle(circle) => circle.center += offset,
            WorldShape::Capsule(capsule) => capsule.center += offset,
            WorldShape::Polygon(polygon) => *polygon = polygon.translated(offset),
        }
        shape
    }

    /// The smallest axis-aligned box around the shape.
    #[inline]
    pub fn aabb(&self) -> Aabb2d {
        match self {
            WorldShape::Rect(rect) => rect.aabb(),
            WorldShape::RotatedRect(rect) => rect.aabb(),
            WorldShape::Circle(circle) => circle.aabb(),
            WorldShape::Capsule(capsule) => capsule.aabb(),
            WorldShape::Polygon(polygon) => polygon.aabb(),
        }
    }

    /// The least and greatest of `axis · p` over the points `p` of the shape, as `(min, max)`: its
    /// projection on `axis` (scaled by the axis's length, for an axis that is not a unit vector).
    ///
    /// ```
    /// use bevy::math::{Rot2, Vec2};
    /// use bevy_rect_collision::geometry::*;
    ///
    /// let turned = WorldShape::RotatedRect(WorldRotatedRect::new(Vec2::ZERO, Vec2::ONE, Rot2::FRAC_PI_4));
    /// let (low, high) = turned.extent_along(Vec2::Y).into();
    /// assert!((high - core::f32::consts::SQRT_2).abs() < 1e-6 && (low + high).abs() < 1e-6);
    /// let circle = WorldShape::Circle(WorldCircle::new(Vec2::new(3.0, 0.0), 1.0));
    /// assert_eq!(circle.extent_along(Vec2::X), Vec2::new(2.0, 4.0));
    /// ```
    #[inline]
    pub fn extent_along(&self, axis: Vec2) -> Vec2 {
        let reach = match self {
            WorldShape::Rect(rect) => axis.abs().dot(rect.half_size),
            WorldShape::RotatedRect(rect) => {
                axis.dot(rect.axis_x()).abs() * rect.half_size.x
                    + axis.dot(rect.axis_y()).abs() * rect.half_size.y
            }
            WorldShape::Circle(circle) => axis.length() * circle.radius,
            WorldShape::Capsule(capsule) => {
                axis.dot(capsule.axis()).abs() * capsule.half_length
                    + axis.length() * capsule.radius
            }
            WorldShape::Polygon(polygon) => {
                let along = polygon.vertices().iter().map(|vertex| axis.dot(*vertex));
                let low = along.clone().fold(f32::INFINITY, f32::min);
                let high = along.fold(f32::NEG_INFINITY, f32::max);
                return Vec2::new(low, high);
            }
        };
        let center = axis.dot(self.center());
        Vec2::new(center - reach, center + reach)
    }

    /// The four world-space corners of a rectangle, counter-clockwise; `None` for the other shapes.
    ///
    /// ```
    /// use bevy::math::Vec2;
    /// use bevy_rect_collision::geometry::*;
    ///
    /// let rect = WorldShape::Rect(WorldRect::new(Vec2::ZERO, Vec2::ONE));
    /// assert_eq!(rect.corners().unwrap()[2], Vec2::ONE);
    /// assert!(WorldShape::Circle(WorldCircle::new(Vec2::ZERO, 1.0)).corners().is_none());
    /// ```
    #[inline]
    pub fn corners(&self) -> Option<[Vec2; 4]> {
        match self {
            WorldShape::Rect(rect) => Some(rect.corners()),
            WorldShape::RotatedRect(rect) => Some(rect.corners()),
            WorldShape::Circle(_) | WorldShape::Capsule(_) | WorldShape::Polygon(_) => None,
        }
    }

    /// Whether every number describing the shape is finite: a shape built from a NaN or infinite pose is not.
    ///
    /// ```
    /// use bevy::math::Vec2;
    /// use bevy_rect_collision::geometry::*;
    ///
    /// assert!(!WorldShape::Circle(WorldCircle::new(Vec2::new(f32::NAN, 0.0), 1.0)).is_finite());
    /// ```
    #[inline]
    pub fn is_finite(&self) -> bool {
        match self {
            WorldShape::Rect(rect) => rect.center.is_finite() && rect.half_size.is_finite(),
            WorldShape::RotatedRect(rect) => {
                rect.center.is_finite() && rect.half_size.is_finite() && rect.rotation.is_finite()
            }
            WorldShape::Circle(circle) => circle.center.is_finite() && circle.radius.is_finite(),
            WorldShape::Capsule(capsule) => {
                capsule.center.is_finite()
                    && capsule.half_length.is_finite()
                    && capsule.radius.is_finite()
                    && capsule.rotation.is_finite()
            }
            WorldShape::Polygon(polygon) => polygon.vertices().iter().all(|v| v.is_finite()),
        }
    }

    /// Whether the shape contains `point`, boundary included in [`OverlapMode::Closed`].
    ///
    /// ```
    /// use bevy::math::Vec2;
    /// use bevy_rect_collision::geometry::*;
    ///
    /// let circle = WorldShape::Circle(WorldCircle::new(Vec2::ZERO, 1.0));
    /// assert!(circle.contains_point(Vec2::X, OverlapMode::Closed));
    /// assert!(!circle.contains_point(Vec2::X, OverlapMode::InteriorOnly));
    /// ```
    #[inline]
    pub fn contains_point(&self, point: Vec2, mode: OverlapMode) -> bool {
        let point = WorldCircle::new(point, 0.0);
        match self {
            WorldShape::Rect(rect) => intersection_test_rect_circle(rect, &point, mode),
            WorldShape::RotatedRect(rect) => {
                intersection_test_rotated_rect_circle(rect, &point, mode)
            }
            WorldShape::Circle(circle) => intersection_test_circle_circle(circle, &point, mode),
            WorldShape::Capsule(_) | WorldShape::Polygon(_) => rounded::contact(
                &RoundedPolygon::of(self),
                &RoundedPolygon::of(&point.into()),
                mode,
            )
            .is_some(),
        }
    }

    /// Whether two shapes collide, by the test for their pair of kinds.
    #[inline]
    pub fn intersects(&self, other: &WorldShape, mode: OverlapMode) -> bool {
        use WorldShape::*;
        match (self, other) {
            (Rect(a), Rect(b)) => intersection_test_rect_rect(a, b, mode),
            (Rect(a), RotatedRect(b)) => intersection_test_rect_rotated_rect(a, b, mode),
            (Rect(a), Circle(b)) => intersection_test_rect_circle(a, b, mode),
            (RotatedRect(a), Rect(b)) => intersection_test_rotated_rect_rect(a, b, mode),
            (RotatedRect(a), RotatedRect(b)) => {
                intersection_test_rotated_rect_rotated_rect(a, b, mode)
            }
            (RotatedRect(a), Circle(b)) => intersection_test_rotated_rect_circle(a, b, mode),
            (Circle(a), Rect(b)) => intersection_test_circle_rect(a, b, mode),
            (Circle(a), RotatedRect(b)) => intersection_test_circle_rotated_rect(a, b, mode),
            (Circle(a), Circle(b)) => intersection_test_circle_circle(a, b, mode),
            (a, b) => rounded::intersects(&RoundedPolygon::of(a), &RoundedPolygon::of(b), mode),
        }
    }

    /// The contact between two shapes, by the query for their pair of kinds; the normal points from
    /// `self` to `other`.
    #[inline]
    pub fn contact(&self, other: &WorldShape, mode: OverlapMode) -> Option<Contact> {
        use WorldShape::*;
        match (self, other) {
            (Rect(a), Rect(b)) => contact_rect_rect(a, b, mode),
            (Rect(a), RotatedRect(b)) => contact_rect_rotated_rect(a, b, mode),
            (Rect(a), Circle(b)) => contact_rect_circle(a, b, mode),
            (RotatedRect(a), Rect(b)) => contact_rotated_rect_rect(a, b, mode),
            (RotatedRect(a), RotatedRect(b)) => contact_rotated_rect_rotated_rect(a, b, mode),
            (RotatedRect(a), Circle(b)) => contact_rotated_rect_circle(a, b, mode),
            (Circle(a), Rect(b)) => contact_circle_rect(a, b, mode),
            (Circle(a), RotatedRect(b)) => contact_circle_rotated_rect(a, b, mode),
            (Circle(a), Circle(b)) => contact_circle_circle(a, b, mode),
            (a, b) => rounded::contact(&RoundedPolygon::of(a), &RoundedPolygon::of(b), mode),
        }
    }
}

impl From<WorldRect> for WorldShape {
    fn from(rect: WorldRect) -> Self {
        WorldShape::Rect(rect)
    }
}

impl From<WorldRotatedRect> for WorldShape {
    fn from(rect: WorldRotatedRect) -> Self {
        WorldShape::RotatedRect(rect)
    }
}

impl From<WorldCircle> for WorldShape {
    fn from(circle: WorldCircle) -> Self {
        WorldShape::Circle(circle)
    }
}

impl From<WorldCapsule> for WorldShape {
    fn from(capsule: WorldCapsule) -> Self {
        WorldShape::Capsule(capsule)
    }
}

impl From<ConvexPolygon> for WorldShape {
    fn from(polygon: ConvexPolygon) -> Self {
        WorldShape::Polygon(polygon)
    }
}

#[cfg(test)]
mod tests {
    use core::f32::consts::PI;

    use bevy::math::Rot2;

    use super::*;
    use crate::geometry::{WorldCircle, WorldRect, WorldRotatedRect};
    use crate::test_rng::TestRng;

    /// Against the corners' projections, and for a circle the points of 256 directions.
    #[test]
    fn extents_along_an_axis_are_those_of_the_shapes_points() {
        let mut rng = TestRng::new(0xe47e);
        for _ in 0..2_000 {
            let center = Vec2::new(rng.range(-50.0, 50.0), rng.range(-50.0, 50.0));
            let half = Vec2::new(rng.range(0.1, 5.0), rng.range(0.1, 5.0));
            let axis = Vec2::from_angle(rng.range(-3.2, 3.2)) * rng.range(0.5, 2.0);
            let shapes = [
                WorldShape::Rect(WorldRect::new(center, half)),
                WorldShape::RotatedRect(WorldRotatedRect::new(
                    center,
                    half,
                    Rot2::radians(rng.range(-3.2, 3.2)),
                )),
                WorldShape::Circle(WorldCircle::new(center, half.x)),
            ];
            for shape in shapes {
                let points: Vec<Vec2> = match shape.corners() {
                    Some(corners) => corners.to_vec(),
                    None => (0..256)
                        .map(|k| center + Vec2::from_angle(k as f32 / 128.0 * PI) * half.x)
                        .collect(),
                };
                let along = points.iter().map(|point| axis.dot(*point));
                let low = along.clone().fold(f32::INFINITY, f32::min);
                let high = along.fold(f32::NEG_INFINITY, f32::max);
                let extent = shape.extent_along(axis);
                // The sampled circle reaches a little less far than the circle.
                let tolerance = 1e-3 * (1.0 + center.length()) + axis.length() * half.x * 1e-3;
                assert!(
                    (extent.x - low).abs() <= tolerance && (extent.y - high).abs() <= tolerance,
                    "{shape:?} along {axis}: {extent} against ({low}, {high})"
                );
            }
        }
    }
}
