//! A 2D placement with scale: where a shape's entity stands in the world.

use bevy::math::{Rot2, Vec2};

/// Translation, rotation and scale of an entity in the plane: the 2D part of a `GlobalTransform`.
///
/// A shape's local centre (its offset) is scaled, then rotated, then translated, so the entity origin is
/// the pivot the shape turns about. Negative scale mirrors; the shape stays a valid rectangle or circle.
///
/// ```
/// use bevy::math::{Rot2, Vec2};
/// use bevy_rect_collision::geometry::Pose2d;
///
/// let pose = Pose2d::new(Vec2::new(10.0, 0.0), Rot2::FRAC_PI_2, Vec2::splat(2.0));
/// let point = pose.transform_point(Vec2::new(1.0, 0.0));
/// assert!((point - Vec2::new(10.0, 2.0)).length() < 1e-6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose2d {
    /// Position of the entity origin (the pivot), in world units.
    pub translation: Vec2,
    /// Rotation about the entity origin.
    pub rotation: Rot2,
    /// Scale along the entity's local axes; negative values mirror.
    pub scale: Vec2,
}

impl Default for Pose2d {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Pose2d {
    /// The pose at the origin, unrotated, with unit scale.
    pub const IDENTITY: Self = Self {
        translation: Vec2::ZERO,
        rotation: Rot2::IDENTITY,
        scale: Vec2::ONE,
    };

    /// A pose from its three parts.
    #[inline]
    pub const fn new(translation: Vec2, rotation: Rot2, scale: Vec2) -> Self {
        Self {
            translation,
            rotation,
            scale,
        }
    }

    /// A pose that only translates.
    ///
    /// ```
    /// use bevy::math::Vec2;
    /// use bevy_rect_collision::geometry::Pose2d;
    ///
    /// assert_eq!(Pose2d::from_translation(Vec2::X).transform_point(Vec2::Y), Vec2::new(1.0, 1.0));
    /// ```
    #[inline]
    pub const fn from_translation(translation: Vec2) -> Self {
        Self {
            translation,
            rotation: Rot2::IDENTITY,
            scale: Vec2::ONE,
        }
    }

    /// A pose that translates and rotates, with unit scale.
    #[inline]
    pub const fn from_translation_rotation(translation: Vec2, rotation: Rot2) -> Self {
        Self {
            translation,
            rotation,
            scale: Vec2::ONE,
        }
    }

    /// Maps a point from the entity's local space into world space: scale, rotate, translate.
    #[inline]
    pub fn transform_point(&self, local: Vec2) -> Vec2 {
        self.translation + self.rotation * (local * self.scale)
    }

    /// Whether every part is finite and the scale is non-zero on both axes: the condition for the shapes
    /// built from this pose to be meaningful.
    ///
    /// ```
    /// use bevy::math::{Rot2, Vec2};
    /// use bevy_rect_collision::geometry::Pose2d;
    ///
    /// assert!(Pose2d::IDENTITY.is_valid());
    /// assert!(!Pose2d::new(Vec2::ZERO, Rot2::IDENTITY, Vec2::new(1.0, 0.0)).is_valid());
    /// assert!(!Pose2d::from_translation(Vec2::new(f32::NAN, 0.0)).is_valid());
    /// ```
    #[inline]
    pub fn is_valid(&self) -> bool {
        self.translation.is_finite()
            && self.rotation.is_finite()
            && self.scale.is_finite()
            && self.scale.x != 0.0
            && self.scale.y != 0.0
    }
}
