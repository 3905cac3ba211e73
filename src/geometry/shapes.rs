//! The three world-space shapes.

use bevy::math::{Rot2, Vec2, bounding::Aabb2d};

use super::Pose2d;

/// An axis-aligned rectangle in world space.
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::WorldRect;
///
/// let rect = WorldRect::from_min_max(Vec2::new(-1.0, 1.0), Vec2::new(5.0, 5.5));
/// assert_eq!(rect.center, Vec2::new(2.0, 3.25));
/// assert_eq!(rect.half_size, Vec2::new(3.0, 2.25));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldRect {
    /// Centre of the rectangle.
    pub center: Vec2,
    /// Half the width and half the height; never negative.
    pub half_size: Vec2,
}

impl WorldRect {
    /// A rectangle from its centre and half size.
    #[inline]
    pub fn new(center: Vec2, half_size: Vec2) -> Self {
        debug_assert!(
            half_size.x >= 0.0 && half_size.y >= 0.0,
            "half sizes must be non-negative"
        );
        Self { center, half_size }
    }

    /// A rectangle from its lowest and highest corners.
    #[inline]
    pub fn from_min_max(min: Vec2, max: Vec2) -> Self {
        Self::new((min + max) * 0.5, (max - min) * 0.5)
    }

    /// A rectangle of `half_size` whose centre sits at `offset` from the pose's origin.
    ///
    /// The pose's rotation is ignored, for the offset too: the rectangle stays aligned with the world axes.
    /// Its size is multiplied by the absolute scale, so a negative scale mirrors the offset only.
    ///
    /// ```
    /// use bevy::math::{Rot2, Vec2};
    /// use bevy_rect_collision::geometry::{Pose2d, WorldRect};
    ///
    /// let pose = Pose2d::new(Vec2::new(10.0, 0.0), Rot2::FRAC_PI_4, Vec2::new(-2.0, 1.0));
    /// let rect = WorldRect::from_pose(&pose, Vec2::new(1.0, 3.0), Vec2::new(1.0, 0.0));
    /// assert_eq!(rect.center, Vec2::new(8.0, 0.0));
    /// assert_eq!(rect.half_size, Vec2::new(2.0, 3.0));
    /// ```
    #[inline]
    pub fn from_pose(pose: &Pose2d, half_size: Vec2, offset: Vec2) -> Self {
        Self {
            center: pose.translation + offset * pose.scale,
            half_size: half_size * pose.scale.abs(),
        }
    }

    /// The lowest corner.
    #[inline]
    pub fn min(&self) -> Vec2 {
        self.center - self.half_size
    }

    /// The highest corner.
    #[inline]
    pub fn max(&self) -> Vec2 {
        self.center + self.half_size
    }

    /// The four corners, counter-clockwise from the lowest.
    ///
    /// ```
    /// use bevy::math::Vec2;
    /// use bevy_rect_collision::geometry::WorldRect;
    ///
    /// let rect = WorldRect::new(Vec2::ZERO, Vec2::new(2.0, 1.0));
    /// assert_eq!(rect.corners()[0], Vec2::new(-2.0, -1.0));
    /// assert_eq!(rect.corners()[2], Vec2::new(2.0, 1.0));
    /// ```
    #[inline]
    pub fn corners(&self) -> [Vec2; 4] {
        let (min, max) = (self.min(), self.max());
        [min, Vec2::new(max.x, min.y), max, Vec2::new(min.x, max.y)]
    }

    /// The rectangle itself as a bounding box.
    #[inline]
    pub fn aabb(&self) -> Aabb2d {
        Aabb2d {
            min: self.min(),
            max: self.max(),
        }
    }

    /// The same rectangle, seen as a rotated rectangle with no rotation.
    #[inline]
    pub fn to_rotated(&self) -> WorldRotatedRect {
        WorldRotatedRect::new(self.center, self.half_size, Rot2::IDENTITY)
    }
}

/// A rectangle in world space, rotated about its centre.
///
/// ```
/// use bevy::math::{Rot2, Vec2};
/// use bevy_rect_collision::geometry::WorldRotatedRect;
///
/// let rect = WorldRotatedRect::new(Vec2::ZERO, Vec2::new(2.0, 1.0), Rot2::FRAC_PI_2);
/// let aabb = rect.aabb();
/// assert!((aabb.max - Vec2::new(1.0, 2.0)).length() < 1e-6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldRotatedRect {
    /// Centre of the rectangle.
    pub center: Vec2,
    /// Half the extent along the rectangle's own x and y axes; never negative.
    pub half_size: Vec2,
    /// The rectangle's rotation: its local x axis is `rotation * Vec2::X`.
    pub rotation: Rot2,
}

impl WorldRotatedRect {
    /// A rotated rectangle from its centre, half size and rotation.
    #[inline]
    pub fn new(center: Vec2, half_size: Vec2, rotation: Rot2) -> Self {
        debug_assert!(
            half_size.x >= 0.0 && half_size.y >= 0.0,
            "half sizes must be non-negative"
        );
        Self {
            center,
            half_size,
            rotation,
        }
    }

    /// A rectangle of `half_size` whose centre sits at `offset` from the pose's origin, in the pose's
    /// local space: the rectangle turns about the pose's origin, its pivot.
    ///
    /// The worked example of "Rotated rectangle intersection" rotates a 6 × 4.5 rectangle about the
    /// midpoint of its left side: that is a pose at that midpoint and an offset of half the width.
    ///
    /// ```
    /// use bevy::math::{Rot2, Vec2};
    /// use bevy_rect_collision::geometry::{Pose2d, WorldRotatedRect};
    ///
    /// let pivot = Pose2d::from_translation_rotation(Vec2::new(-1.0, 3.25), Rot2::FRAC_PI_2);
    /// let rect = WorldRotatedRect::from_pose(&pivot, Vec2::new(3.0, 2.25), Vec2::new(3.0, 0.0));
    /// assert!((rect.center - Vec2::new(-1.0, 6.25)).length() < 1e-6);
    /// ```
    #[inline]
    pub fn from_pose(pose: &Pose2d, half_size: Vec2, offset: Vec2) -> Self {
        Self {
            center: pose.transform_point(offset),
            half_size: half_size * pose.scale.abs(),
            rotation: pose.rotation,
        }
    }

    /// The rectangle's local x axis in world space (unit length).
    #[inline]
    pub fn axis_x(&self) -> Vec2 {
        Vec2::new(self.rotation.cos, self.rotation.sin)
    }

    /// The rectangle's local y axis in world space (unit length).
    #[inline]
    pub fn axis_y(&self) -> Vec2 {
        Vec2::new(-self.rotation.sin, self.rotation.cos)
    }

    /// The four corners in world space, counter-clockwise from the one at local `(-x, -y)`.
    ///
    /// ```
    /// use bevy::math::{Rot2, Vec2};
    /// use bevy_rect_collision::geometry::WorldRotatedRect;
    ///
    /// let rect = WorldRotatedRect::new(Vec2::ZERO, Vec2::new(2.0, 1.0), Rot2::FRAC_PI_2);
    /// assert!((rect.corners()[0] - Vec2::new(1.0, -2.0)).length() < 1e-6);
    /// ```
    #[inline]
    pub fn corners(&self) -> [Vec2; 4] {
        let x = self.axis_x() * self.half_size.x;
        let y = self.axis_y() * self.half_size.y;
        let c = self.center;
        [c - x - y, c + x - y, c + x + y, c - x + y]
    }

    /// The point of the rectangle (boundary or interior) closest to `point`: the clamp of "Circle and
    /// Rotated Rectangle Collision Detection", of the point moved into the rectangle's frame, moved back. A point inside is its own closest point.
    ///
    /// ```
    /// use bevy::math::{Rot2, Vec2};
    /// use bevy_rect_collision::geometry::WorldRotatedRect;
    ///
    /// let upright = WorldRotatedRect::new(Vec2::ZERO, Vec2::new(2.0, 1.0), Rot2::FRAC_PI_2);
    /// let closest = upright.closest_point(Vec2::new(3.0, 5.0));
    /// assert!((closest - Vec2::new(1.0, 2.0)).length() < 1e-6);
    /// ```
    #[inline]
    pub fn closest_point(&self, point: Vec2) -> Vec2 {
        let local = self.rotation.inverse() * (point - self.center);
        self.center + self.rotation * local.clamp(-self.half_size, self.half_size)
    }

    /// Half the size of the smallest axis-aligned box around the rectangle (phase 1 of "Rotated
    /// rectangle intersection").
    #[inline]
    pub fn bounding_half_size(&self) -> Vec2 {
        rotated_extent(
            self.half_size,
            self.rotation.cos.abs(),
            self.rotation.sin.abs(),
        )
    }

    /// The smallest axis-aligned box around the rectangle.
    #[inline]
    pub fn aabb(&self) -> Aabb2d {
        let half = self.bounding_half_size();
        Aabb2d {
            min: self.center - half,
            max: self.center + half,
        }
    }
}

/// A circle in world space.
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::WorldCircle;
///
/// let circle = WorldCircle::new(Vec2::new(1.0, 2.0), 0.5);
/// assert_eq!(circle.aabb().min, Vec2::new(0.5, 1.5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldCircle {
    /// Centre of the circle.
    pub center: Vec2,
    /// Radius; never negative.
    pub radius: f32,
}

impl WorldCircle {
    /// A circle from its centre and radius.
    #[inline]
    pub fn new(center: Vec2, radius: f32) -> Self {
        debug_assert!(radius >= 0.0, "the radius must be non-negative");
        Self { center, radius }
    }

    /// A circle of `radius` whose centre sits at `offset` from the pose's origin, in the pose's local space.
    ///
    /// A circle cannot follow a non-uniform scale: its radius is multiplied by the larger absolute scale
    /// factor, so the circle covers the ellipse the scale would draw.
    ///
    /// ```
    /// use bevy::math::{Rot2, Vec2};
    /// use bevy_rect_collision::geometry::{Pose2d, WorldCircle};
    ///
    /// let pose = Pose2d::new(Vec2::ZERO, Rot2::IDENTITY, Vec2::new(2.0, -3.0));
    /// let circle = WorldCircle::from_pose(&pose, 1.0, Vec2::new(0.0, 1.0));
    /// assert_eq!(circle.center, Vec2::new(0.0, -3.0));
    /// assert_eq!(circle.radius, 3.0);
    /// ```
    #[inline]
    pub fn from_pose(pose: &Pose2d, radius: f32, offset: Vec2) -> Self {
        let scale = pose.scale.abs();
        Self {
            center: pose.transform_point(offset),
            radius: radius * scale.x.max(scale.y),
        }
    }

    /// The smallest axis-aligned box around the circle.
    #[inline]
    pub fn aabb(&self) -> Aabb2d {
        Aabb2d {
            min: self.center - self.radius,
            max: self.center + self.radius,
        }
    }
}

/// Half the extent, along two perpendicular axes, of a box of `half_size` turned by an angle whose cosine
/// and sine have the absolute values `abs_cos` and `abs_sin`: the projection radius used by every
/// rectangle test.
#[inline]
pub(crate) fn rotated_extent(half_size: Vec2, abs_cos: f32, abs_sin: f32) -> Vec2 {
    Vec2::new(
        abs_cos * half_size.x + abs_sin * half_size.y,
        abs_sin * half_size.x + abs_cos * half_size.y,
    )
}
