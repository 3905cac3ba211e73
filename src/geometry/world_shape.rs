//! Any of the three shapes, with dispatching queries.

use bevy::math::{Vec2, bounding::Aabb2d};

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
}

impl WorldShape {
    /// The centre of the shape.
    #[inline]
    pub fn center(&self) -> Vec2 {
        match self {
            WorldShape::Rect(rect) => rect.center,
            WorldShape::RotatedRect(rect) => rect.center,
            WorldShape::Circle(circle) => circle.center,
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
        }
    }

    /// The four world-space corners of a rectangle, counter-clockwise; `None` for a circle.
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
            WorldShape::Circle(_) => None,
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
