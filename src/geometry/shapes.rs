//! The world-space shapes.

use bevy::math::{Rot2, Vec2, bounding::Aabb2d};
use bevy::reflect::Reflect;

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

/// A capsule in world space: the points within `radius` of its segment, which runs through `center`
/// along the capsule's local y axis, `half_length` each way.
///
/// ```
/// use bevy::math::{Rot2, Vec2};
/// use bevy_rect_collision::geometry::WorldCapsule;
///
/// let lying = WorldCapsule::new(Vec2::ZERO, 2.0, 0.5, Rot2::FRAC_PI_2);
/// let aabb = lying.aabb();
/// assert!((aabb.max - Vec2::new(2.5, 0.5)).length() < 1e-6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldCapsule {
    /// The middle of the segment.
    pub center: Vec2,
    /// Half the segment's length: the distance from the centre to each end circle's centre; never
    /// negative.
    pub half_length: f32,
    /// The radius of the end circles, and half the capsule's width; never negative.
    pub radius: f32,
    /// The capsule's rotation: its segment runs along `rotation * Vec2::Y`.
    pub rotation: Rot2,
}

impl WorldCapsule {
    /// A capsule from its centre, half length, radius and rotation.
    #[inline]
    pub fn new(center: Vec2, half_length: f32, radius: f32, rotation: Rot2) -> Self {
        debug_assert!(
            half_length >= 0.0 && radius >= 0.0,
            "a capsule's sizes must be non-negative"
        );
        Self {
            center,
            half_length,
            radius,
            rotation,
        }
    }

    /// A capsule whose centre sits at `offset` from the pose's origin, in the pose's local space: its
    /// segment turns with the pose and stretches with its y scale, and its radius follows the larger
    /// absolute scale factor, as a circle's does.
    ///
    /// ```
    /// use bevy::math::{Rot2, Vec2};
    /// use bevy_rect_collision::geometry::{Pose2d, WorldCapsule};
    ///
    /// let pose = Pose2d::new(Vec2::new(1.0, 0.0), Rot2::IDENTITY, Vec2::new(1.0, 2.0));
    /// let capsule = WorldCapsule::from_pose(&pose, 0.5, 1.0, Vec2::ZERO);
    /// assert_eq!((capsule.half_length, capsule.radius), (2.0, 1.0));
    /// ```
    #[inline]
    pub fn from_pose(pose: &Pose2d, radius: f32, half_length: f32, offset: Vec2) -> Self {
        let scale = pose.scale.abs();
        Self {
            center: pose.transform_point(offset),
            half_length: half_length * scale.y,
            radius: radius * scale.x.max(scale.y),
            rotation: pose.rotation,
        }
    }

    /// The unit direction of the segment, from its lower end to its upper one.
    #[inline]
    pub fn axis(&self) -> Vec2 {
        Vec2::new(-self.rotation.sin, self.rotation.cos)
    }

    /// The centres of the two end circles: the ends of the segment, the lower first.
    #[inline]
    pub fn ends(&self) -> [Vec2; 2] {
        let along = self.axis() * self.half_length;
        [self.center - along, self.center + along]
    }

    /// The smallest axis-aligned box around the capsule.
    #[inline]
    pub fn aabb(&self) -> Aabb2d {
        let [low, high] = self.ends();
        Aabb2d {
            min: low.min(high) - self.radius,
            max: low.max(high) + self.radius,
        }
    }
}

/// The most vertices a [`ConvexPolygon`] has.
pub const MAX_POLYGON_VERTICES: usize = 8;

/// Why points give no [`ConvexPolygon`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HullError {
    /// A point is NaN or infinite.
    NonFinitePoint,
    /// Fewer than three of the points are not on one line: their hull has no area.
    TooFewPoints,
    /// The hull has this many vertices, more than [`MAX_POLYGON_VERTICES`].
    TooManyVertices(usize),
}

impl core::fmt::Display for HullError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            HullError::NonFinitePoint => write!(f, "a polygon's points must be finite"),
            HullError::TooFewPoints => {
                write!(f, "a polygon needs three points that are not on one line")
            }
            HullError::TooManyVertices(count) => write!(
                f,
                "a polygon has at most {MAX_POLYGON_VERTICES} vertices, its hull has {count}"
            ),
        }
    }
}

impl core::error::Error for HullError {}

/// A convex polygon of three to [`MAX_POLYGON_VERTICES`] vertices, counter-clockwise, no three on one
/// line: the hull of the points it was made from.
///
/// A collider keeps one in its own frame ([`ColliderShape::ConvexPolygon`](crate::ColliderShape)),
/// and its world shape ([`WorldShape::Polygon`](super::WorldShape)) in the world's.
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::ConvexPolygon;
///
/// // The hull drops the point inside and the duplicate, and orders the rest.
/// let points = [Vec2::ZERO, Vec2::new(2.0, 2.0), Vec2::new(2.0, 0.0), Vec2::ONE, Vec2::ZERO];
/// let triangle = ConvexPolygon::hull(&points).unwrap();
/// assert_eq!(triangle.vertices(), [Vec2::ZERO, Vec2::new(2.0, 0.0), Vec2::new(2.0, 2.0)]);
/// assert!(ConvexPolygon::hull(&[Vec2::ZERO, Vec2::ONE, Vec2::splat(2.0)]).is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Reflect)]
pub struct ConvexPolygon {
    vertices: [Vec2; MAX_POLYGON_VERTICES],
    len: u8,
}

impl core::fmt::Debug for ConvexPolygon {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ConvexPolygon")
            .field("vertices", &self.vertices())
            .finish()
    }
}

impl ConvexPolygon {
    /// No polygon: what [`Collider::convex_polygon`](crate::Collider::convex_polygon) keeps for
    /// points that give none, so that the plugin skips the collider.
    pub const EMPTY: Self = Self {
        vertices: [Vec2::ZERO; MAX_POLYGON_VERTICES],
        len: 0,
    };

    /// The convex hull of `points`, in any order, duplicates and points inside allowed (Andrew's
    /// monotone chain); vertices on a line between two others are left out.
    pub fn hull(points: &[Vec2]) -> Result<Self, HullError> {
        if points.iter().any(|point| !point.is_finite()) {
            return Err(HullError::NonFinitePoint);
        }
        let mut sorted = points.to_vec();
        let mut hull = vec![Vec2::ZERO; 2 * points.len() + 1];
        let count = hull_into(&mut sorted, &mut hull);
        if count < 3 {
            return Err(HullError::TooFewPoints);
        }
        if count > MAX_POLYGON_VERTICES {
            return Err(HullError::TooManyVertices(count));
        }
        let mut vertices = [Vec2::ZERO; MAX_POLYGON_VERTICES];
        vertices[..count].copy_from_slice(&hull[..count]);
        Ok(Self {
            vertices,
            len: count as u8,
        })
    }

    /// The vertices, counter-clockwise.
    #[inline]
    pub fn vertices(&self) -> &[Vec2] {
        &self.vertices[..usize::from(self.len)]
    }

    /// Whether this is [`Self::EMPTY`], no polygon.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The mean of the vertices: a point inside the polygon.
    #[inline]
    pub fn center(&self) -> Vec2 {
        self.vertices().iter().copied().sum::<Vec2>() / f32::from(self.len.max(1))
    }

    /// The polygon moved by `offset`.
    #[inline]
    #[must_use]
    pub fn translated(mut self, offset: Vec2) -> Self {
        for vertex in &mut self.vertices[..usize::from(self.len)] {
            *vertex += offset;
        }
        self
    }

    /// The polygon with its vertices moved by `offset` and placed by the pose, scale and mirroring
    /// included; still counter-clockwise.
    ///
    /// ```
    /// use bevy::math::{Rot2, Vec2};
    /// use bevy_rect_collision::geometry::{ConvexPolygon, Pose2d};
    ///
    /// let triangle = ConvexPolygon::hull(&[Vec2::ZERO, Vec2::X, Vec2::Y]).unwrap();
    /// let pose = Pose2d::new(Vec2::new(5.0, 0.0), Rot2::IDENTITY, Vec2::new(-2.0, 1.0));
    /// let placed = triangle.placed(&pose, Vec2::ZERO);
    /// // Mirrored, the vertices are put back counter-clockwise.
    /// assert_eq!(placed.vertices(), [Vec2::new(5.0, 1.0), Vec2::new(3.0, 0.0), Vec2::new(5.0, 0.0)]);
    /// ```
    #[inline]
    #[must_use]
    pub fn placed(&self, pose: &Pose2d, offset: Vec2) -> Self {
        let mut placed = *self;
        let len = usize::from(self.len);
        for (out, vertex) in placed.vertices[..len].iter_mut().zip(self.vertices()) {
            *out = pose.transform_point(offset + *vertex);
        }
        // A mirror turns the order clockwise.
        if pose.scale.x * pose.scale.y < 0.0 {
            placed.vertices[..len].reverse();
        }
        placed
    }

    /// The polygon with each edge moved out by `margin`, its corners mitred: it holds every point
    /// within `margin` of the polygon.
    pub(crate) fn grown(&self, margin: f32) -> Self {
        let mut grown = *self;
        let vertices = self.vertices();
        let len = vertices.len();
        let normal = |i: usize| {
            let edge = vertices[(i + 1) % len] - vertices[i];
            Vec2::new(edge.y, -edge.x).normalize_or_zero()
        };
        for i in 0..len {
            let (before, after) = (normal((i + len - 1) % len), normal(i));
            // The corner moves along the bisector, as far as both edges' lines move out by `margin`.
            grown.vertices[i] += (before + after) * (margin / (1.0 + before.dot(after)));
        }
        grown
    }

    /// The smallest axis-aligned box around the polygon.
    #[inline]
    pub fn aabb(&self) -> Aabb2d {
        let mut aabb = Aabb2d {
            min: Vec2::INFINITY,
            max: Vec2::NEG_INFINITY,
        };
        for vertex in self.vertices() {
            aabb.min = aabb.min.min(*vertex);
            aabb.max = aabb.max.max(*vertex);
        }
        aabb
    }
}

/// The convex hull of `points` into `hull`, counter-clockwise, as its number of vertices: Andrew's
/// monotone chain, keeping only turns to the left, so that duplicates and points on an edge are left
/// out. One point for points all equal, two for points on one line. `points` is sorted; `hull` needs
/// room for twice their number and one more.
pub(crate) fn hull_into(points: &mut [Vec2], hull: &mut [Vec2]) -> usize {
    points.sort_unstable_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    let turns_left = |o: Vec2, a: Vec2, b: Vec2| (a - o).perp_dot(b - o) > 0.0;
    let mut count = 0;
    for &point in points.iter() {
        while count >= 2 && !turns_left(hull[count - 2], hull[count - 1], point) {
            count -= 1;
        }
        hull[count] = point;
        count += 1;
    }
    let lower = count + 1;
    for &point in points.iter().rev().skip(1) {
        while count >= lower && !turns_left(hull[count - 2], hull[count - 1], point) {
            count -= 1;
        }
        hull[count] = point;
        count += 1;
    }
    // The last point is the first again; with all points equal, the chains are that one point.
    count = count.saturating_sub(1).max(usize::from(!points.is_empty()));
    if count == 2 && hull[0] == hull[1] {
        count = 1;
    }
    count
}
