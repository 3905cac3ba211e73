//! [`Collider`] and the components derived from it.

use core::fmt;

use bevy::prelude::*;

use crate::entity_set::SmallEntitySet;
use crate::geometry::{
    ConvexPolygon, HullError, Pose2d, WorldCapsule, WorldCircle, WorldRect, WorldRotatedRect,
    WorldShape,
};
use crate::layers::CollisionLayers;

/// The shape of a [`Collider`] in the entity's local space.
#[derive(Clone, Copy, Debug, PartialEq, Reflect)]
pub enum ColliderShape {
    /// A rectangle that stays aligned with the world axes: the entity's rotation is ignored.
    Rect {
        /// Half the width and half the height, before scale.
        half_size: Vec2,
    },
    /// A rectangle that turns with the entity.
    RotatedRect {
        /// Half the width and half the height, before scale.
        half_size: Vec2,
    },
    /// A circle. Under a non-uniform scale its radius follows the larger axis.
    Circle {
        /// The radius, before scale.
        radius: f32,
    },
    /// A capsule upright along the entity's local y axis, turning with the entity. Under a
    /// non-uniform scale its length follows the y axis and its radius the larger axis.
    Capsule {
        /// The radius of the end circles, before scale.
        radius: f32,
        /// Half the distance between the end circles' centres, before scale.
        half_length: f32,
    },
    /// A convex polygon, turning with the entity.
    ConvexPolygon(ConvexPolygon),
}

/// Why a collider could not be built: the bad value is named.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ColliderError {
    /// A width, height or radius that is NaN or infinite.
    NonFiniteSize {
        /// Which size: `"width"`, `"height"` or `"radius"`.
        what: &'static str,
        /// The value given.
        value: f32,
    },
    /// A width, height or radius that is zero or negative: the shape would have no area.
    NonPositiveSize {
        /// Which size: `"width"`, `"height"` or `"radius"`.
        what: &'static str,
        /// The value given.
        value: f32,
    },
    /// A capsule's length that is negative.
    NegativeLength {
        /// The value given.
        value: f32,
    },
    /// Points that give no convex polygon.
    Polygon(HullError),
}

impl fmt::Display for ColliderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColliderError::NonFiniteSize { what, value } => {
                write!(f, "collider {what} must be finite, got {value}")
            }
            ColliderError::NonPositiveSize { what, value } => {
                write!(f, "collider {what} must be greater than zero, got {value}")
            }
            ColliderError::NegativeLength { value } => {
                write!(f, "collider length must not be negative, got {value}")
            }
            ColliderError::Polygon(error) => write!(f, "{error}"),
        }
    }
}

impl core::error::Error for ColliderError {}

fn check_size(what: &'static str, value: f32) -> Result<f32, ColliderError> {
    if !value.is_finite() {
        Err(ColliderError::NonFiniteSize { what, value })
    } else if value <= 0.0 {
        Err(ColliderError::NonPositiveSize { what, value })
    } else {
        Ok(value)
    }
}

/// A collision shape on an entity: add it with a `Transform` and the plugin does the rest.
///
/// Every pair of colliders is tested (filtered by [`CollisionLayers`]); no rigid body or marker is
/// needed. Its world-space shape is kept in [`ColliderWorldShape`], the entities it touches in
/// [`CollidingEntities`]; both are added with it.
///
/// The plain constructors accept any value and never panic: a zero, negative, NaN or infinite size
/// gives a collider that the plugin skips with one warning, marked [`InvalidCollider`], while the rest
/// keep colliding. The `try_` constructors reject such values with a [`ColliderError`] instead.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// let wall = Collider::rect(40.0, 20.0);
/// let paddle = Collider::rotated_rect(6.0, 4.5).with_offset(Vec2::new(3.0, 0.0));
/// let ball = Collider::try_circle(10.0).unwrap();
/// assert!(Collider::try_rect(-1.0, 2.0).is_err());
/// assert!(!Collider::rect(-1.0, 2.0).has_valid_size(), "skipped by the plugin");
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug, PartialEq)]
#[require(ColliderWorldShape, CollidingEntities, CollisionLayers, Transform)]
pub struct Collider {
    /// The shape, in local space.
    pub shape: ColliderShape,
    /// Where the shape's centre sits relative to the entity origin, in local space (before scale and
    /// rotation). The entity origin is the pivot the shape turns about. Defaults to zero.
    pub offset: Vec2,
}

impl Collider {
    /// A `width` × `height` rectangle aligned with the world axes, whatever the entity's rotation.
    pub fn rect(width: f32, height: f32) -> Self {
        Self::from_shape(ColliderShape::Rect {
            half_size: Vec2::new(width, height) * 0.5,
        })
    }

    /// A `width` × `height` rectangle that turns with the entity.
    pub fn rotated_rect(width: f32, height: f32) -> Self {
        Self::from_shape(ColliderShape::RotatedRect {
            half_size: Vec2::new(width, height) * 0.5,
        })
    }

    /// A circle of `radius`.
    pub fn circle(radius: f32) -> Self {
        Self::from_shape(ColliderShape::Circle { radius })
    }

    /// A capsule upright along the entity's local y axis: the points within `radius` of a segment of
    /// `length` between its end circles' centres. It turns with the entity; its whole height is
    /// `length + 2 * radius`.
    ///
    /// ```
    /// use bevy_rect_collision::prelude::*;
    ///
    /// let player = Collider::capsule(0.4, 1.0);
    /// assert!(player.has_valid_size());
    /// assert!(Collider::capsule(0.4, 0.0).has_valid_size(), "a capsule of no length is a circle");
    /// ```
    pub fn capsule(radius: f32, length: f32) -> Self {
        Self::from_shape(ColliderShape::Capsule {
            radius,
            half_length: 0.5 * length,
        })
    }

    /// The convex hull of `points`, in the entity's local space, turning with the entity: a slope, a
    /// ramp, a triangle or a hexagonal tile. The points come in any order; duplicates and points
    /// inside are dropped. The hull has at most [`MAX_POLYGON_VERTICES`](crate::geometry::MAX_POLYGON_VERTICES)
    /// vertices.
    ///
    /// Points that give no such hull (fewer than three not on one line, a point not finite, or too
    /// many vertices) give a collider the plugin skips with one warning, as for every bad size;
    /// [`Collider::try_convex_polygon`] says why instead.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_rect_collision::prelude::*;
    ///
    /// let ramp = Collider::convex_polygon(&[Vec2::ZERO, Vec2::new(4.0, 0.0), Vec2::new(4.0, 2.0)]);
    /// assert!(ramp.has_valid_size());
    /// assert!(!Collider::convex_polygon(&[Vec2::ZERO, Vec2::X]).has_valid_size());
    /// ```
    pub fn convex_polygon(points: &[Vec2]) -> Self {
        Self::from_shape(ColliderShape::ConvexPolygon(
            ConvexPolygon::hull(points).unwrap_or(ConvexPolygon::EMPTY),
        ))
    }

    /// [`Collider::capsule`], or an error naming a radius that is not finite and positive, or a
    /// length that is not finite or is negative.
    ///
    /// ```
    /// use bevy_rect_collision::prelude::*;
    ///
    /// assert!(Collider::try_capsule(0.5, -1.0).is_err());
    /// assert!(Collider::try_capsule(0.0, 1.0).is_err());
    /// assert!(Collider::try_capsule(0.5, 1.0).is_ok());
    /// ```
    pub fn try_capsule(radius: f32, length: f32) -> Result<Self, ColliderError> {
        let radius = check_size("radius", radius)?;
        if !length.is_finite() {
            return Err(ColliderError::NonFiniteSize {
                what: "length",
                value: length,
            });
        }
        if length < 0.0 {
            return Err(ColliderError::NegativeLength { value: length });
        }
        Ok(Self::capsule(radius, length))
    }

    /// [`Collider::convex_polygon`], or an error saying why the points give no polygon.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_rect_collision::prelude::*;
    ///
    /// let on_a_line = Collider::try_convex_polygon(&[Vec2::ZERO, Vec2::ONE, Vec2::splat(2.0)]);
    /// assert_eq!(
    ///     on_a_line.unwrap_err().to_string(),
    ///     "a polygon needs three points that are not on one line"
    /// );
    /// ```
    pub fn try_convex_polygon(points: &[Vec2]) -> Result<Self, ColliderError> {
        let hull = ConvexPolygon::hull(points).map_err(ColliderError::Polygon)?;
        Ok(Self::from_shape(ColliderShape::ConvexPolygon(hull)))
    }

    /// [`Collider::rect`], or an error naming a size that is not finite and positive.
    ///
    /// ```
    /// use bevy_rect_collision::prelude::*;
    ///
    /// let error = Collider::try_rect(2.0, f32::NAN).unwrap_err();
    /// assert_eq!(error.to_string(), "collider height must be finite, got NaN");
    /// ```
    pub fn try_rect(width: f32, height: f32) -> Result<Self, ColliderError> {
        Ok(Self::rect(
            check_size("width", width)?,
            check_size("height", height)?,
        ))
    }

    /// [`Collider::rotated_rect`], or an error naming a size that is not finite and positive.
    ///
    /// ```
    /// use bevy_rect_collision::prelude::*;
    ///
    /// assert!(Collider::try_rotated_rect(0.0, 1.0).is_err());
    /// assert!(Collider::try_rotated_rect(2.0, 1.0).is_ok());
    /// ```
    pub fn try_rotated_rect(width: f32, height: f32) -> Result<Self, ColliderError> {
        Ok(Self::rotated_rect(
            check_size("width", width)?,
            check_size("height", height)?,
        ))
    }

    /// [`Collider::circle`], or an error naming a radius that is not finite and positive.
    ///
    /// ```
    /// use bevy_rect_collision::prelude::*;
    ///
    /// assert_eq!(
    ///     Collider::try_circle(-2.0).unwrap_err().to_string(),
    ///     "collider radius must be greater than zero, got -2"
    /// );
    /// ```
    pub fn try_circle(radius: f32) -> Result<Self, ColliderError> {
        Ok(Self::circle(check_size("radius", radius)?))
    }

    /// A collider of `shape` centred on the entity origin.
    pub fn from_shape(shape: ColliderShape) -> Self {
        Self {
            shape,
            offset: Vec2::ZERO,
        }
    }

    /// The same collider with its centre at `offset` from the entity origin, in local space.
    ///
    /// The entity origin is the pivot: the worked example of "Rotated rectangle intersection" (a Google
    /// Answers thread), a 6 × 4.5 rectangle turning about the midpoint of its left side, is
    /// `Collider::rotated_rect(6.0, 4.5).with_offset(Vec2::new(3.0, 0.0))` on an entity at that
    /// midpoint.
    #[must_use]
    pub fn with_offset(mut self, offset: Vec2) -> Self {
        self.offset = offset;
        self
    }

    /// Whether every size is finite and positive: the collider can take part in collisions.
    pub fn has_valid_size(&self) -> bool {
        match self.shape {
            ColliderShape::Rect { half_size } | ColliderShape::RotatedRect { half_size } => {
                half_size.is_finite() && half_size.x > 0.0 && half_size.y > 0.0
            }
            ColliderShape::Circle { radius } => radius.is_finite() && radius > 0.0,
            ColliderShape::Capsule {
                radius,
                half_length,
            } => {
                radius.is_finite() && radius > 0.0 && half_length.is_finite() && half_length >= 0.0
            }
            ColliderShape::ConvexPolygon(polygon) => !polygon.is_empty(),
        }
    }

    /// The collider placed in the world by `pose`; `None` when the collider's size, the pose or the
    /// result is invalid (not finite, or of zero size).
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_rect_collision::geometry::{Pose2d, WorldShape};
    /// use bevy_rect_collision::prelude::*;
    ///
    /// let pose = Pose2d::from_translation(Vec2::new(5.0, 0.0));
    /// let shape = Collider::circle(2.0).world_shape(&pose).unwrap();
    /// assert_eq!(shape.center(), Vec2::new(5.0, 0.0));
    /// assert!(Collider::circle(f32::NAN).world_shape(&pose).is_none());
    /// ```
    // Inlined into the prepare stage's loop, which a call per collider slows (`collision_bench`, W1).
    #[inline(always)]
    pub fn world_shape(&self, pose: &Pose2d) -> Option<WorldShape> {
        let (shape, center, size) = match self.shape {
            ColliderShape::Rect { half_size } => {
                let rect = WorldRect::from_pose(pose, half_size, self.offset);
                (rect.into(), rect.center, rect.half_size)
            }
            ColliderShape::RotatedRect { half_size } => {
                let rect = WorldRotatedRect::from_pose(pose, half_size, self.offset);
                (rect.into(), rect.center, rect.half_size)
            }
            ColliderShape::Circle { radius } => {
                let circle = WorldCircle::from_pose(pose, radius, self.offset);
                (circle.into(), circle.center, Vec2::splat(circle.radius))
            }
            // Kept out of line, so that the rectangles and circles of the prepare stage's loop stay
            // a few instructions (`collision_bench`, W1).
            ColliderShape::Capsule { .. } | ColliderShape::ConvexPolygon(_) => {
                self.rounded_world_shape(pose)?
            }
        };
        // One check without branches, where a branch per number would cost more than building the
        // shape (`cargo bench --bench prepare`). The translation reaches
        // the centre, and a size that is not finite and positive gives a size that is not either; huge
        // poses can overflow to infinity and tiny scales underflow to zero, which the same check
        // catches. A scale of zero on one axis is checked apart: a circle's radius follows the other.
        let valid = Vec4::new(center.x, center.y, size.x, size.y).is_finite_mask()
            & Vec4::new(
                pose.rotation.cos,
                pose.rotation.sin,
                pose.scale.x,
                pose.scale.y,
            )
            .is_finite_mask();
        // The sizes positive and the scales not zero in one comparison of four lanes: a scale's
        // magnitude is positive exactly where the scale is neither zero nor NaN, and NaN fails the
        // check above anyway.
        let positive =
            Vec4::new(size.x, size.y, pose.scale.x.abs(), pose.scale.y.abs()).cmpgt(Vec4::ZERO);
        (valid & positive).all().then_some(shape)
    }

    /// A capsule or a polygon placed by `pose`, with a point and a size for [`Self::world_shape`]'s
    /// check: finite and positive where the shape is valid.
    #[inline(never)]
    fn rounded_world_shape(&self, pose: &Pose2d) -> Option<(WorldShape, Vec2, Vec2)> {
        match self.shape {
            ColliderShape::Capsule {
                radius,
                half_length,
            } => {
                let capsule = WorldCapsule::from_pose(pose, radius, half_length, self.offset);
                // A capsule of no length is valid: its radius gives it area.
                let length_valid = capsule.half_length >= 0.0 && capsule.half_length.is_finite();
                let size = if length_valid {
                    Vec2::splat(capsule.radius)
                } else {
                    Vec2::ZERO
                };
                Some((capsule.into(), capsule.center, size))
            }
            ColliderShape::ConvexPolygon(polygon) if !polygon.is_empty() => {
                let placed = polygon.placed(pose, self.offset);
                // The box has area only where the polygon does.
                let aabb = placed.aabb();
                let finite = placed.vertices().iter().all(|vertex| vertex.is_finite());
                let corner = if finite { aabb.min } else { Vec2::NAN };
                Some((placed.into(), corner, aabb.max - aabb.min))
            }
            _ => None,
        }
    }

    /// The collider placed in the world by `transform`, as the prepare stage places it: the shape
    /// at [`pose_from_global_transform`], with the transform's axes worked out once.
    #[inline(always)]
    pub(crate) fn world_shape_from_transform(
        &self,
        transform: &GlobalTransform,
    ) -> Option<WorldShape> {
        self.world_shape(&TransformAxes::of(transform).pose())
    }
}

/// The 2D pose of a `GlobalTransform`: translation, rotation about Z, and scale, mirroring included.
///
/// The rotation comes from the transformed X axis, so a non-uniform scale under a rotated parent
/// (which shears) keeps the X axis exact and the Y axis's length.
///
/// A transform whose axes have length 1 to within rounding is unscaled: its scale is exactly 1 (−1 on
/// Y where it mirrors). Bevy's rotations leave their axes' squared lengths a little off 1 (up to about
/// 1,000 units in the last place after a few hundred `Transform::rotate_z` calls, as the quaternion's
/// length drifts), which would otherwise scale the shapes by up to 6e-5 and make a `Collider::rect`
/// change size as its entity turns. Squared lengths within 1,024 units of 1 count as 1.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::collider::pose_from_global_transform;
///
/// let transform = GlobalTransform::from(
///     Transform::from_xyz(1.0, 2.0, 3.0)
///         .with_rotation(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2))
///         .with_scale(Vec3::new(2.0, -1.0, 1.0)),
/// );
/// let pose = pose_from_global_transform(&transform);
/// assert_eq!(pose.translation, Vec2::new(1.0, 2.0));
/// assert!((pose.rotation.as_radians() - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
/// assert!((pose.scale - Vec2::new(2.0, -1.0)).length() < 1e-6);
///
/// // Turned many times over: the quaternion's rounding does not scale the pose.
/// let mut turning = Transform::default();
/// for _ in 0..300 {
///     turning.rotate_z(0.01);
/// }
/// assert_eq!(pose_from_global_transform(&turning.into()).scale, Vec2::ONE);
/// ```
#[inline]
pub fn pose_from_global_transform(transform: &GlobalTransform) -> Pose2d {
    TransformAxes::of(transform).pose()
}

/// What a transform's pose and shapes are worked out from: its translation, its X and Y axes in one
/// vector (x, y, z, w: the X axis, then the Y axis), their squared lengths, each in both of its axis's
/// lanes (`a + b` and `b + a` have the same bits), and the axes again when they are unscaled. Worked
/// out once, whether the shape then needs the pose or not.
#[derive(Clone, Copy, Debug)]
struct TransformAxes {
    translation: Vec2,
    axes: Vec4,
    squared_lengths: Vec4,
    unscaled: Option<UnscaledAxes>,
}

impl TransformAxes {
    /// The axes of `transform`.
    #[inline]
    fn of(transform: &GlobalTransform) -> Self {
        let affine = transform.affine();
        let (x_axis, y_axis) = (affine.matrix3.x_axis, affine.matrix3.y_axis);
        let axes = Vec4::new(x_axis.x, x_axis.y, y_axis.x, y_axis.y);
        let squares = axes * axes;
        let squared_lengths = squares + squares.yxwz();
        Self {
            translation: affine.translation.truncate(),
            axes,
            squared_lengths,
            unscaled: UnscaledAxes::new(axes, squared_lengths),
        }
    }

    /// The pose, as [`pose_from_global_transform`] tells it.
    #[inline]
    fn pose(&self) -> Pose2d {
        let Self {
            translation,
            axes,
            unscaled,
            ..
        } = *self;
        if let Some(unscaled) = unscaled {
            let scale_y = if unscaled.mirrored() { -1.0 } else { 1.0 };
            return Pose2d::new(translation, unscaled.rotation(), Vec2::new(1.0, scale_y));
        }
        // Both axes in one vector: their lengths take one square root instruction and the unit axes
        // one division, where one axis at a time takes two and four (`cargo bench --bench prepare`).
        // Each lane has the bits the scalar operation gives.
        let lengths = self.lengths();
        let units = axes / lengths;
        // The determinant's sign from unit axes, where it cannot underflow: negative means mirrored.
        let mirrored = units.x * units.w - units.y * units.z < 0.0;
        let scale_y = if mirrored { -lengths.z } else { lengths.z };
        // Built from its fields: `Rot2::from_sin_cos` debug-asserts a unit rotation, and a zero or NaN
        // scale must give an invalid pose, not a panic.
        let rotation = Rot2 {
            cos: units.x,
            sin: units.y,
        };
        Pose2d::new(translation, rotation, Vec2::new(lengths.x, scale_y))
    }

    /// The axes' lengths, each in both of its axis's lanes, as `axes` lays them out. The rare lengths
    /// go through a function that returns the same vector: returning a whole `Pose2d` from it would put
    /// the pose in memory, in stores too narrow for the loads that read it back (`cargo bench --bench
    /// prepare`).
    #[inline]
    fn lengths(&self) -> Vec4 {
        let squared_lengths = self.squared_lengths;
        if squared_lengths.x.is_normal() & squared_lengths.z.is_normal() {
            squared_lengths.sqrt()
        } else {
            robust_lengths(self.axes.xy(), self.axes.zw())
        }
    }
}

/// How far, in units in the last place, a squared axis length may lie from 1 for [`UnscaledAxes`]. The
/// rotations of unscaled transforms give squared lengths a few units away, and 300 calls of
/// `rotate_z(0.01)` up to about 1,000 (workload W1's colliders). A test checks the square root's
/// shortcut on every float of this range; a one-off check of every float found it exact to 4,096 units
/// either side, and not at 8,192.
const NEAR_ONE_ULPS: u32 = 1024;

/// A transform's axes when their squared lengths both lie within [`NEAR_ONE_ULPS`] units in the last
/// place of 1: an unscaled transform, whose scale [`pose_from_global_transform`] takes as exactly 1.
#[derive(Clone, Copy, Debug)]
struct UnscaledAxes {
    /// As [`TransformAxes`] lays them out.
    axes: Vec4,
    squared_x_length: f32,
}

impl UnscaledAxes {
    /// The axes, when both squared lengths lie near 1; `None` otherwise (NaN lies in no range).
    #[inline]
    fn new(axes: Vec4, squared_lengths: Vec4) -> Option<Self> {
        let one = 1.0f32.to_bits();
        let (low, high) = (
            f32::from_bits(one - NEAR_ONE_ULPS),
            f32::from_bits(one + NEAR_ONE_ULPS),
        );
        // Positive floats order as their bits do, so the range of floats is the range of bits.
        let near_one =
            squared_lengths.cmpge(Vec4::splat(low)) & squared_lengths.cmple(Vec4::splat(high));
        near_one.all().then_some(Self {
            axes,
            squared_x_length: squared_lengths.x,
        })
    }

    /// The rotation: the X axis divided by its length, which [`near_one_square_root`] takes without
    /// the square root instruction's latency.
    #[inline]
    fn rotation(self) -> Rot2 {
        let length = near_one_square_root(self.squared_x_length);
        Rot2 {
            cos: self.axes.x / length,
            sin: self.axes.y / length,
        }
    }

    /// Whether the transform mirrors: the axes' determinant is negative. Lengths near 1 cannot make it
    /// underflow.
    #[inline]
    fn mirrored(self) -> bool {
        self.axes.x * self.axes.w - self.axes.y * self.axes.z < 0.0
    }
}

/// The square root of a `square` within [`NEAR_ONE_ULPS`] units in the last place of 1: there, its
/// bits are the square's bits and those of 1 averaged, rounded down, the same bits as the square root
/// instruction gives, at a fraction of its latency (`collision_bench` W1).
#[inline]
fn near_one_square_root(square: f32) -> f32 {
    f32::from_bits((square.to_bits() + 1.0f32.to_bits()) >> 1)
}

/// The lengths of `x_axis` and `y_axis`, each in two lanes as [`pose_from_global_transform`] lays
/// them out, exact where squaring would under- or overflow (scales near 1e-20 or 1e20).
#[cold]
fn robust_lengths(x_axis: Vec2, y_axis: Vec2) -> Vec4 {
    let (x, y) = (robust_length(x_axis), robust_length(y_axis));
    Vec4::new(x, x, y, y)
}

/// The length of `v`: the square root of the squared length when that is a normal number, `hypot`
/// (several times slower) otherwise.
#[inline]
fn robust_length(v: Vec2) -> f32 {
    let squared = v.length_squared();
    if squared.is_normal() {
        squared.sqrt()
    } else {
        v.x.hypot(v.y)
    }
}

/// The world-space shape of a [`Collider`], rebuilt by the plugin from the entity's `GlobalTransform`
/// in [`CollisionSystems::Prepare`](crate::CollisionSystems::Prepare) whenever either changes.
///
/// `None` until the first update, while the collider is invalid (a NaN, infinite or zero-scale
/// transform, or a bad size), and once the `Collider` is removed: such a collider touches nothing.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// fn print_corners(shapes: Query<&ColliderWorldShape>) {
///     for shape in &shapes {
///         if let Some(corners) = shape.corners() {
///             println!("{corners:?}");
///         }
///     }
/// }
/// # bevy::ecs::system::assert_is_system(print_corners);
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct ColliderWorldShape(pub Option<WorldShape>);

impl ColliderWorldShape {
    /// The four world-space corners of a rectangle, counter-clockwise; `None` for a circle or an
    /// invalid collider.
    pub fn corners(&self) -> Option<[Vec2; 4]> {
        self.0.as_ref().and_then(WorldShape::corners)
    }

    /// The smallest world-space axis-aligned box around the shape; `None` for an invalid collider.
    pub fn aabb(&self) -> Option<bevy::math::bounding::Aabb2d> {
        self.0.as_ref().map(WorldShape::aabb)
    }
}

/// The entities this collider touches now, kept by the plugin in step with the events.
///
/// Added with every [`Collider`].
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// fn report(query: Query<(Entity, &CollidingEntities)>) {
///     for (entity, touching) in &query {
///         if !touching.is_empty() {
///             println!("{entity} touches {} colliders", touching.len());
///         }
///     }
/// }
/// # bevy::ecs::system::assert_is_system(report);
/// ```
#[derive(Component, Clone, Debug, Default, PartialEq, Eq)]
pub struct CollidingEntities(pub(crate) SmallEntitySet);

impl CollidingEntities {
    /// Whether this collider touches `entity`.
    pub fn contains(&self, entity: &Entity) -> bool {
        self.0.contains(*entity)
    }

    /// The entities touched, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = Entity> + '_ {
        self.0.iter()
    }

    /// How many entities are touched.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing is touched.
    pub fn is_empty(&self) -> bool {
        self.0.len() == 0
    }
}

/// The query filter for colliders that take part in collisions and queries: with a [`Collider`] and
/// without [`ColliderDisabled`].
pub type ActiveColliderFilter = (With<Collider>, Without<ColliderDisabled>);

/// The colliders that take part, with their world shapes and layers: what the broad phase and the
/// spatial queries read.
pub(crate) type ActiveColliders<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static ColliderWorldShape,
        &'static CollisionLayers,
    ),
    ActiveColliderFilter,
>;

/// While present, the entity's collider takes no part in collisions or queries: its open contacts end
/// with [`CollisionEnded`](crate::CollisionEnded), and it starts colliding again when the marker is
/// removed.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default)]
pub struct ColliderDisabled;

/// Makes a collider's motion between two collision updates count, not only where it ends up, so that a
/// fast bullet touches the thin wall it passed through.
///
/// The collider is moved in a straight line from where it was at the last update to where it is now,
/// and whatever it touched on the way touches it in this update: the pair gets its
/// [`CollisionStarted`](crate::CollisionStarted), with the
/// [`time_of_impact`](crate::CollisionStarted::time_of_impact) and the normal and point at first
/// contact, and its [`CollisionEnded`](crate::CollisionEnded) at the next update if they no longer
/// touch. [`CollidingEntities`] lists the pair for the update. Where both
/// colliders of a pair are swept, their motion relative to each other is; a collider without the
/// marker is taken where it is at the end of the update.
///
/// Only the translation is swept: the collider has its end rotation all along the way. A collider
/// set far away by the game is swept across the whole jump, unless it carries [`Teleported`] for
/// that update.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// fn fire(mut commands: Commands) {
///     commands.spawn((Transform::default(), Collider::circle(0.1), SweptCollider));
/// }
/// # bevy::ecs::system::assert_is_system(fire);
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default)]
pub struct SweptCollider;

/// Marks a [`SweptCollider`] that the game moved by a jump, not a motion: the next collision update
/// takes it where it ends up, without a sweep, and then removes the marker.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default)]
pub struct Teleported;

/// Makes a collider a one-way platform: it stops a moving collider only from the side its local +y
/// axis faces (turned with its entity's rotation, so a platform turned over holds from below).
///
/// It stops [`SpatialQuery::move_and_slide`], [`SpatialQuery::cast_collider`] and the shape casts
/// ([`SpatialQuery::cast_shape`], [`SpatialQuery::cast_shape_all`]) only where the moving shape
/// starts wholly on that side and moves against it: a character jumps up through it, lands on it from
/// above, and walks along it. [`MoveAndSlideConfig::drop_through`] lets one move pass every one-way
/// platform. Overlaps are unchanged: a collider inside a one-way platform touches it, with its
/// events, and point, box, shape and ray queries find it as any other.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// fn spawn_ledge(mut commands: Commands) {
///     commands.spawn((Transform::from_xyz(0.0, 40.0, 0.0), Collider::rect(64.0, 8.0), OneWayPlatform));
/// }
/// # bevy::ecs::system::assert_is_system(spawn_ledge);
/// ```
///
/// [`SpatialQuery::move_and_slide`]: crate::SpatialQuery::move_and_slide
/// [`SpatialQuery::cast_collider`]: crate::SpatialQuery::cast_collider
/// [`SpatialQuery::cast_shape`]: crate::SpatialQuery::cast_shape
/// [`SpatialQuery::cast_shape_all`]: crate::SpatialQuery::cast_shape_all
/// [`MoveAndSlideConfig::drop_through`]: crate::MoveAndSlideConfig::drop_through
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default)]
pub struct OneWayPlatform;

/// Marks a collider whose shape is invalid (a NaN, infinite or zero-scale transform, or a bad size):
/// the plugin skips it, warns once, and removes the marker when it becomes valid again.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InvalidCollider;

/// Puts the default [`CollisionLayers`] back on a collider whose layers were removed by hand, once the
/// commands of the removal run: `Collider` requires them, and a collider without them would take part
/// in nothing, with no change the pipeline could see. Nothing happens when the `Collider` went too, or
/// the entity was despawned. The layers inserted count as changed ones: a pair they allow starts on the
/// next update, one they forbid ends.
pub(crate) fn restore_default_layers(removed: On<Remove, CollisionLayers>, mut commands: Commands) {
    commands
        .entity(removed.entity)
        .queue_silenced(|mut entity: EntityWorldMut| {
            if entity.contains::<Collider>() && !entity.contains::<CollisionLayers>() {
                entity.insert(CollisionLayers::default());
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check `world_shape` makes in one go, spelled out: the collider's size and the pose valid,
    /// and the result finite and of positive size.
    fn valid_by_parts(collider: &Collider, pose: &Pose2d, shape: &WorldShape) -> bool {
        let positive = match shape {
            WorldShape::Rect(r) => r.half_size.x > 0.0 && r.half_size.y > 0.0,
            WorldShape::RotatedRect(r) => r.half_size.x > 0.0 && r.half_size.y > 0.0,
            WorldShape::Circle(c) => c.radius > 0.0,
            WorldShape::Capsule(c) => c.radius > 0.0 && c.half_length >= 0.0,
            WorldShape::Polygon(p) => {
                let size = p.aabb().max - p.aabb().min;
                size.x > 0.0 && size.y > 0.0
            }
        };
        collider.has_valid_size() && pose.is_valid() && shape.is_finite() && positive
    }

    /// `pose_from_global_transform` one axis at a time, as it was before both axes went in one vector,
    /// with the scale of axes whose squared lengths lie near 1 taken as 1.
    fn pose_one_axis_at_a_time(transform: &GlobalTransform) -> Pose2d {
        let affine = transform.affine();
        let (x_axis, y_axis) = (
            affine.matrix3.x_axis.truncate(),
            affine.matrix3.y_axis.truncate(),
        );
        let (squared_x, squared_y) = (x_axis.length_squared(), y_axis.length_squared());
        let near_one = |square: f32| square.to_bits().abs_diff(1.0f32.to_bits()) <= NEAR_ONE_ULPS;
        if near_one(squared_x) && near_one(squared_y) {
            // Unscaled: the unit X axis, and a scale of 1 mirrored by the axes' determinant.
            let unit_x = x_axis / squared_x.sqrt();
            let scale_y = if x_axis.perp_dot(y_axis) < 0.0 {
                -1.0
            } else {
                1.0
            };
            return Pose2d::new(
                affine.translation.truncate(),
                Rot2 {
                    cos: unit_x.x,
                    sin: unit_x.y,
                },
                Vec2::new(1.0, scale_y),
            );
        }
        let (scale_x, length_y) = (robust_length(x_axis), robust_length(y_axis));
        let unit_x = x_axis / scale_x;
        let mirrored = unit_x.perp_dot(y_axis / length_y) < 0.0;
        let scale_y = if mirrored { -length_y } else { length_y };
        let rotation = Rot2 {
            cos: unit_x.x,
            sin: unit_x.y,
        };
        Pose2d::new(
            affine.translation.truncate(),
            rotation,
            Vec2::new(scale_x, scale_y),
        )
    }

    #[test]
    fn pose_has_the_bits_of_the_one_axis_at_a_time_computation() {
        let bits = |pose: &Pose2d| {
            [
                pose.translation.x,
                pose.translation.y,
                pose.rotation.cos,
                pose.rotation.sin,
                pose.scale.x,
                pose.scale.y,
            ]
            .map(f32::to_bits)
        };
        // Axis components from every scale where squaring is exact, underflows or overflows, with
        // their signs, zeros and non-finite values: sheared, mirrored and degenerate axes included.
        let mut next = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut component = || {
            let r = next();
            match r % 16 {
                0 => 0.0,
                1 => -0.0,
                2 => f32::NAN,
                3 => f32::INFINITY,
                _ => {
                    let mantissa = (r >> 8) as u32 as f32 / u32::MAX as f32 + 0.5;
                    let exponent = ((r >> 40) % 60) as i32 - 30;
                    let sign = if r & 16 == 0 { 1.0 } else { -1.0 };
                    sign * mantissa * 10f32.powi(exponent)
                }
            }
        };
        let (mut fallbacks, mut cases) = (0, 0);
        for _ in 0..200_000 {
            let (x_axis, y_axis) = (
                Vec3A::new(component(), component(), 0.0),
                Vec3A::new(component(), component(), 0.0),
            );
            let affine = bevy::math::Affine3A {
                matrix3: bevy::math::Mat3A::from_cols(x_axis, y_axis, Vec3A::Z),
                translation: Vec3A::new(component(), component(), 0.0),
            };
            let transform = GlobalTransform::from(affine);
            let expected = pose_one_axis_at_a_time(&transform);
            assert_eq!(
                bits(&pose_from_global_transform(&transform)),
                bits(&expected),
                "axes {x_axis:?}, {y_axis:?}: {expected:?}"
            );
            cases += 1;
            fallbacks += usize::from(
                !(x_axis.truncate().length_squared().is_normal()
                    && y_axis.truncate().length_squared().is_normal()),
            );
        }
        assert!(
            fallbacks > cases / 10 && fallbacks < cases * 9 / 10,
            "both paths tested: {fallbacks} of {cases} took the fallback"
        );
    }

    #[test]
    fn near_one_square_roots_have_the_bits_of_the_square_root_instruction() {
        let one = 1.0f32.to_bits();
        for bits in one - NEAR_ONE_ULPS..=one + NEAR_ONE_ULPS {
            let (a, b) = (f32::from_bits(bits), f32::from_bits(2 * one - bits));
            let squared_lengths = Vec4::new(a, a, b, b);
            assert!(
                UnscaledAxes::new(Vec4::ONE, squared_lengths).is_some(),
                "{a} and {b}"
            );
            assert_eq!(
                near_one_square_root(a).to_bits(),
                a.sqrt().to_bits(),
                "square root of {a}"
            );
        }
        let just_outside = [
            f32::from_bits(one - NEAR_ONE_ULPS - 1),
            f32::from_bits(one + NEAR_ONE_ULPS + 1),
        ];
        for other in just_outside
            .into_iter()
            .chain([0.0, 0.25, 4.0, f32::NAN, f32::INFINITY])
        {
            for squared_lengths in [
                Vec4::new(1.0, 1.0, other, other),
                Vec4::new(other, other, 1.0, 1.0),
            ] {
                assert!(
                    UnscaledAxes::new(Vec4::ONE, squared_lengths).is_none(),
                    "{other} is not near one"
                );
            }
        }
    }

    #[test]
    fn unscaled_rotations_give_the_bits_of_the_one_axis_at_a_time_computation() {
        let mut near_one = 0;
        let angles = 20_000;
        for step in 0..angles {
            let angle = (step as f32 / angles as f32 - 0.5) * 7.0;
            for mirror in [1.0, -1.0] {
                let transform = GlobalTransform::from(
                    Transform::from_xyz(3.5, -2.0, 1.0)
                        .with_rotation(Quat::from_rotation_z(angle))
                        .with_scale(Vec3::new(1.0, mirror, 1.0)),
                );
                let pose = pose_from_global_transform(&transform);
                let expected = pose_one_axis_at_a_time(&transform);
                assert_eq!(
                    [
                        pose.rotation.cos,
                        pose.rotation.sin,
                        pose.scale.x,
                        pose.scale.y
                    ]
                    .map(f32::to_bits),
                    [
                        expected.rotation.cos,
                        expected.rotation.sin,
                        expected.scale.x,
                        expected.scale.y
                    ]
                    .map(f32::to_bits),
                    "angle {angle}, mirror {mirror}"
                );
                let affine = transform.affine();
                let squares = [affine.matrix3.x_axis, affine.matrix3.y_axis]
                    .map(|axis| axis.truncate().length_squared());
                let squared_lengths = Vec4::new(squares[0], squares[0], squares[1], squares[1]);
                near_one += usize::from(UnscaledAxes::new(Vec4::ONE, squared_lengths).is_some());
            }
        }
        assert_eq!(
            near_one,
            2 * angles,
            "every unscaled rotation takes the shortcut"
        );
    }

    /// Entities turned a little every frame, as workload W1 turns its colliders: the quaternion's
    /// length drifts from 1, and the axes' squared lengths with it.
    fn turned_every_frame(frames: usize) -> impl Iterator<Item = (usize, GlobalTransform)> {
        (0..200).flat_map(move |start| {
            let mut transform = Transform::from_xyz(-4.0, 7.5, 0.0)
                .with_rotation(Quat::from_rotation_z(start as f32 * 0.031));
            (0..frames).map(move |frame| {
                transform.rotate_z(0.01);
                (frame, GlobalTransform::from(transform))
            })
        })
    }

    #[test]
    fn transforms_turned_every_frame_stay_unscaled() {
        let mut farthest = 0;
        for (frame, transform) in turned_every_frame(300) {
            let pose = pose_from_global_transform(&transform);
            assert_eq!(pose.scale, Vec2::ONE, "frame {frame}: {transform:?}");
            let squared = transform
                .affine()
                .matrix3
                .x_axis
                .truncate()
                .length_squared();
            farthest = farthest.max(squared.to_bits().abs_diff(1.0f32.to_bits()));
        }
        assert!(farthest > 64, "the lengths drift: {farthest} units at most");
    }

    /// Against Bevy's own transform of the local points: the corners of a turned rectangle and the
    /// centre of a circle, under turned, mirrored and scaled transforms, and turned every frame for
    /// a few frames and for long.
    #[test]
    fn world_shapes_put_local_points_where_the_transform_puts_them() {
        let mut rng = crate::test_rng::TestRng::new(0x51f1_5eed);
        // Turned for 5,000 frames, the axes' lengths drift out of an unscaled transform's range.
        let mut transforms: Vec<GlobalTransform> = turned_every_frame(20)
            .chain(turned_every_frame(5000).step_by(100))
            .map(|(_, transform)| transform)
            .collect();
        for _ in 0..5_000 {
            let scale = Vec3::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0), 1.0);
            transforms.push(GlobalTransform::from(
                Transform::from_xyz(rng.range(-50.0, 50.0), rng.range(-50.0, 50.0), 0.0)
                    .with_rotation(Quat::from_rotation_z(rng.range(-3.5, 3.5)))
                    .with_scale(scale),
            ));
        }
        let (half, offset, radius) = (Vec2::new(1.5, 0.25), Vec2::new(-1.0, 2.0), 1.25);
        let close = |a: Vec2, b: Vec2| a.distance(b) <= 1e-4 * (1.0 + b.length());
        for transform in &transforms {
            let world = |local: Vec2| transform.transform_point(local.extend(0.0)).truncate();
            let rect = Collider::rotated_rect(2.0 * half.x, 2.0 * half.y).with_offset(offset);
            let corners = rect
                .world_shape_from_transform(transform)
                .and_then(|shape| shape.corners())
                .expect("a valid turned rectangle has corners");
            for sign in [
                Vec2::new(1.0, 1.0),
                Vec2::new(-1.0, 1.0),
                -Vec2::ONE,
                Vec2::new(1.0, -1.0),
            ] {
                let expected = world(offset + sign * half);
                assert!(
                    corners.iter().any(|&corner| close(corner, expected)),
                    "corner {expected} of {corners:?} at {transform:?}"
                );
            }
            let Some(WorldShape::Circle(circle)) = Collider::circle(radius)
                .with_offset(offset)
                .world_shape_from_transform(transform)
            else {
                panic!("a valid circle at {transform:?}");
            };
            let (scale, _, _) = transform.to_scale_rotation_translation();
            assert!(
                close(circle.center, world(offset)),
                "{circle:?} at {transform:?}"
            );
            let expected_radius = radius * scale.x.abs().max(scale.y.abs());
            assert!(
                (circle.radius - expected_radius).abs() <= 1e-4 * expected_radius,
                "{circle:?}, radius {expected_radius} expected, at {transform:?}"
            );
        }
    }

    #[test]
    fn world_shape_rejects_exactly_what_the_checks_by_parts_reject() {
        let specials = [
            1.0,
            -1.0,
            0.0,
            -0.0,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e-30,
            1e30,
            f32::MAX,
        ];
        let rotations = [
            Rot2::IDENTITY,
            Rot2::radians(0.7),
            Rot2 {
                cos: f32::NAN,
                sin: 0.0,
            },
            Rot2 {
                cos: 1.0,
                sin: f32::INFINITY,
            },
        ];
        let (mut accepted, mut rejected) = (0, 0);
        for &size in &specials {
            for &scale in &specials {
                for &translation in &specials {
                    // The second axis's scale, mirrored, zero of both signs and NaN too.
                    for (rotation, scale_y) in rotations.into_iter().flat_map(|rotation| {
                        [1.5, -1.5, 0.0, -0.0, f32::NAN].map(|y| (rotation, y))
                    }) {
                        for offset in [Vec2::ZERO, Vec2::new(3.0, -1.0)] {
                            let pose = Pose2d::new(
                                Vec2::new(translation, 2.0),
                                rotation,
                                Vec2::new(scale, scale_y),
                            );
                            for shape in [
                                ColliderShape::Rect {
                                    half_size: Vec2::new(size, 1.0),
                                },
                                ColliderShape::RotatedRect {
                                    half_size: Vec2::new(1.0, size),
                                },
                                ColliderShape::Circle { radius: size },
                                ColliderShape::Capsule {
                                    radius: size,
                                    half_length: 1.0,
                                },
                                ColliderShape::Capsule {
                                    radius: 1.0,
                                    half_length: size,
                                },
                                Collider::convex_polygon(&[
                                    Vec2::ZERO,
                                    Vec2::new(size, 0.0),
                                    Vec2::new(0.0, 1.0),
                                ])
                                .shape,
                            ] {
                                let collider = Collider::from_shape(shape).with_offset(offset);
                                let built = collider.world_shape(&pose);
                                // The same shape, built without any check.
                                let unchecked: WorldShape = match shape {
                                    ColliderShape::Rect { half_size } => {
                                        WorldRect::from_pose(&pose, half_size, offset).into()
                                    }
                                    ColliderShape::RotatedRect { half_size } => {
                                        WorldRotatedRect::from_pose(&pose, half_size, offset).into()
                                    }
                                    ColliderShape::Circle { radius } => {
                                        WorldCircle::from_pose(&pose, radius, offset).into()
                                    }
                                    ColliderShape::Capsule {
                                        radius,
                                        half_length,
                                    } => {
                                        WorldCapsule::from_pose(&pose, radius, half_length, offset)
                                            .into()
                                    }
                                    ColliderShape::ConvexPolygon(polygon) => {
                                        polygon.placed(&pose, offset).into()
                                    }
                                };
                                let expected = valid_by_parts(&collider, &pose, &unchecked);
                                assert_eq!(built.is_some(), expected, "{collider:?} at {pose:?}");
                                if expected {
                                    accepted += 1;
                                } else {
                                    rejected += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(
            accepted > 100 && rejected > 100,
            "both answers tested: {accepted} accepted, {rejected} rejected"
        );
    }
}
