//! Shape casts: where a shape moving along a straight line first touches another.

use bevy::math::{Dir2, Ray2d, Rot2, Vec2};

use super::contact_point::meeting_point;
use super::ray::{ray_cast_box, ray_cast_circle};
use super::rounded::{self, RoundedPolygon};
use super::{OverlapMode, WorldShape, contact_point};

/// Where a cast shape first touches another.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeHit {
    /// How far the shape moved along the cast's (unit) direction when it first touched: its time of
    /// impact, at unit speed. Zero when the shapes touch or overlap at the start.
    pub distance: f32,
    /// Where the shapes touch at that time, in world space: on the surfaces of both. Where they
    /// overlap at the start, [`contact_point`]'s point of their contact.
    pub point: Vec2,
    /// Unit normal of the hit shape's surface at `point`, pointing toward the cast shape. Where they
    /// overlap at the start, the direction that separates them soonest.
    pub normal: Vec2,
}

/// Where `moving`, moved along `direction`, first touches `target` within `max_distance`, or `None`.
///
/// Shapes are solid and closed: a shape that touches or overlaps `target` at the start hits it at
/// distance zero, whichever way it moves. The test is exact for a straight motion without rotation:
///
/// - two rectangles (either kind): the separating axis test on their four edge normals, each
///   giving the interval of distances over which the shapes' shadows on it overlap (Ericson,
///   Real-Time Collision Detection, 5.5.8, "Intersecting Moving Convex Polygons");
/// - a circle and a rectangle: a ray from the circle's centre against the rectangle grown by the
///   radius with rounded corners, in the rectangle's frame;
/// - two circles: a ray from one centre against a circle of the two radii;
/// - any pair with a capsule or a polygon: a ray against the Minkowski difference of the two shapes,
///   each a convex polygon grown by a radius.
///
/// ```
/// use bevy::math::{Dir2, Vec2};
/// use bevy_rect_collision::geometry::*;
///
/// let wall = WorldShape::Rect(WorldRect::new(Vec2::new(10.0, 0.0), Vec2::new(1.0, 5.0)));
/// let ball = WorldShape::Circle(WorldCircle::new(Vec2::ZERO, 2.0));
/// let hit = shape_cast(&ball, Dir2::X, 100.0, &wall).unwrap();
/// assert_eq!(hit.distance, 7.0);
/// assert_eq!(hit.normal, -Vec2::X);
/// assert_eq!(hit.point, Vec2::new(9.0, 0.0));
/// assert!(shape_cast(&ball, Dir2::Y, 100.0, &wall).is_none());
/// ```
pub fn shape_cast(
    moving: &WorldShape,
    direction: Dir2,
    max_distance: f32,
    target: &WorldShape,
) -> Option<ShapeHit> {
    if max_distance.is_nan() || max_distance < 0.0 {
        return None;
    }
    if let Some(contact) = target.contact(moving, OverlapMode::Closed) {
        return Some(ShapeHit {
            distance: 0.0,
            point: contact_point(target, moving, &contact),
            normal: contact.normal,
        });
    }
    let rounded =
        |shape: &WorldShape| matches!(shape, WorldShape::Capsule(_) | WorldShape::Polygon(_));
    let (distance, normal) = match (moving, target) {
        (a, b) if rounded(a) || rounded(b) => {
            rounded::cast(&RoundedPolygon::of(a), direction, &RoundedPolygon::of(b))?
        }
        (WorldShape::Circle(a), WorldShape::Circle(b)) => {
            let ray = Ray2d::new(a.center, direction);
            let hit = ray_cast_circle(b.center, a.radius + b.radius, ray)?;
            (hit.distance, hit.normal)
        }
        (WorldShape::Circle(circle), rect) => {
            circle_against_rect(circle.center, circle.radius, *direction, rect)?
        }
        (rect, WorldShape::Circle(circle)) => {
            // The circle moving the other way meets the rectangle at the same distance, on the
            // same line of contact.
            let (distance, normal) =
                circle_against_rect(circle.center, circle.radius, -*direction, rect)?;
            (distance, -normal)
        }
        (a, b) => rect_against_rect(a, *direction, b)?,
    };
    if distance > max_distance {
        return None;
    }
    // The shapes touch: a side meets the other shape only where it lies along the normal, within
    // rounding, and otherwise a corner meets it, which is on both.
    let moved = moving.translated(*direction * distance);
    // A rounded shape meets the other over the closest point of its core, which may lie off the
    // shapes' furthest points along the normal where the rounding begins.
    let point = (rounded(moving) || rounded(target))
        .then(|| rounded::touching_point(&RoundedPolygon::of(target), &RoundedPolygon::of(&moved)))
        .flatten()
        .unwrap_or_else(|| meeting_point(target, &moved, normal, 1e-5));
    Some(ShapeHit {
        distance,
        point,
        normal,
    })
}

/// A rectangle's centre, half size and rotation, whichever kind it is; `None` for a circle.
fn as_box(shape: &WorldShape) -> Option<(Vec2, Vec2, Rot2)> {
    match shape {
        WorldShape::Rect(rect) => Some((rect.center, rect.half_size, Rot2::IDENTITY)),
        WorldShape::RotatedRect(rect) => Some((rect.center, rect.half_size, rect.rotation)),
        WorldShape::Circle(_) | WorldShape::Capsule(_) | WorldShape::Polygon(_) => None,
    }
}

/// A circle of `radius` moving from `center` along the unit `direction` against the rectangle
/// `rect`, apart at the start: the distance at first contact, and the rectangle's normal there.
fn circle_against_rect(
    center: Vec2,
    radius: f32,
    direction: Vec2,
    rect: &WorldShape,
) -> Option<(f32, Vec2)> {
    let (rect_center, half_size, rotation) = as_box(rect)?;
    let ray = Ray2d::new(center, Dir2::new(direction).ok()?);
    // The ray from the centre against the rectangle grown by the radius; where it enters beside a
    // corner, past both sides' ends, it meets that corner's rounding or misses: the grown shape is
    // convex, so a ray that misses the rounding never reaches its sides.
    let hit = ray_cast_box(rect_center, half_size + radius, rotation, ray)?;
    let local = rotation.inverse() * (center + direction * hit.distance - rect_center);
    if local.x.abs() <= half_size.x || local.y.abs() <= half_size.y {
        return Some((hit.distance, hit.normal));
    }
    let corner = rect_center + rotation * (half_size * local.signum());
    let hit = ray_cast_circle(corner, radius, ray)?;
    Some((hit.distance, hit.normal))
}

/// The rectangle `moving` moving along the unit `direction` against the rectangle `target`, apart at
/// the start: the distance at first contact, and `target`'s normal there, by the separating axis
/// test on the four edge normals.
fn rect_against_rect(
    moving: &WorldShape,
    direction: Vec2,
    target: &WorldShape,
) -> Option<(f32, Vec2)> {
    let (a_center, a_half, a_rotation) = as_box(moving)?;
    let (b_center, b_half, b_rotation) = as_box(target)?;
    // The half width of a box's shadow on the unit `axis`.
    let reach = |half: Vec2, rotation: Rot2, axis: Vec2| {
        let local = rotation.inverse() * axis;
        half.x * local.x.abs() + half.y * local.y.abs()
    };
    let (mut enter, mut exit) = (f32::NEG_INFINITY, f32::INFINITY);
    let mut normal = Vec2::ZERO;
    for axis in [
        a_rotation * Vec2::X,
        a_rotation * Vec2::Y,
        b_rotation * Vec2::X,
        b_rotation * Vec2::Y,
    ] {
        // The gap between the shadows' centres, and the sum of their half widths: the shadows
        // overlap while the gap, closing at `speed`, is no more than the sum.
        let gap = (b_center - a_center).dot(axis);
        let sum = reach(a_half, a_rotation, axis) + reach(b_half, b_rotation, axis);
        let speed = direction.dot(axis);
        if speed == 0.0 {
            if gap.abs() > sum {
                return None;
            }
            continue;
        }
        let (near, far) = ((gap - sum) / speed, (gap + sum) / speed);
        let (axis_enter, axis_exit) = (near.min(far), near.max(far));
        if axis_enter > enter {
            enter = axis_enter;
            normal = -axis * speed.signum();
        }
        exit = exit.min(axis_exit);
    }
    (enter <= exit && exit >= 0.0 && normal != Vec2::ZERO).then_some((enter.max(0.0), normal))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::testing::{angles, assert_near};
    use crate::geometry::{WorldCircle, WorldRect, WorldRotatedRect};

    /// How far `shape` reaches along `direction`.
    fn support(shape: &WorldShape, direction: Vec2) -> f32 {
        match shape.corners() {
            Some(corners) => corners
                .iter()
                .map(|c| c.dot(direction))
                .fold(f32::MIN, f32::max),
            None => shape.center().dot(direction) + 0.5 * (shape.aabb().max.x - shape.aabb().min.x),
        }
    }

    /// Asserts that `hit` is consistent with `moved`, the cast shape where it stopped, and `target`:
    /// a unit normal; the point on both shapes; and the line through the point across the normal
    /// between them, `target` behind it and `moved` ahead.
    #[track_caller]
    fn assert_consistent(moved: &WorldShape, target: &WorldShape, hit: &ShapeHit, case: &str) {
        assert!(
            (hit.normal.length() - 1.0).abs() <= 1e-5,
            "{case}: a unit normal"
        );
        for shape in [target, moved] {
            assert_near(contact_point_on(shape, hit.point), hit.point, case);
        }
        let at = hit.point.dot(hit.normal);
        assert!(
            support(target, hit.normal) <= at + 1e-4,
            "{case}: the target behind the line"
        );
        assert!(
            -support(moved, -hit.normal) >= at - 1e-4,
            "{case}: the cast shape ahead of the line"
        );
    }

    /// The point of `shape` nearest to `point`.
    fn contact_point_on(shape: &WorldShape, point: Vec2) -> Vec2 {
        match shape {
            WorldShape::Rect(rect) => rect.to_rotated().closest_point(point),
            WorldShape::RotatedRect(rect) => rect.closest_point(point),
            WorldShape::Circle(circle) => {
                let offset = point - circle.center;
                circle.center + offset.clamp_length_max(circle.radius)
            }
            WorldShape::Capsule(_) | WorldShape::Polygon(_) => {
                unreachable!("the casts here are of rectangles and circles")
            }
        }
    }

    /// Each kind at `center`, turned by `rotation` where it turns, and how far it reaches along X
    /// from its centre.
    fn kinds(center: Vec2, rotation: Rot2) -> [(WorldShape, f32); 3] {
        // A square, which is symmetric about X at every one of the angles, as the others are.
        let rotated = WorldRotatedRect::new(center, Vec2::splat(1.2), rotation);
        [
            (WorldRect::new(center, Vec2::new(1.0, 2.0)).into(), 1.0),
            (rotated.into(), rotated.bounding_half_size().x),
            (WorldCircle::new(center, 0.75).into(), 0.75),
        ]
    }

    /// Asserts that `moving` cast along +X hits `target`, at the origin, after `expected`, on the
    /// line along which `target` reaches furthest toward it, at a point of both shapes; and that `target` cast the other way hits
    /// `moving` at the same distance, with the normal the other way.
    #[track_caller]
    fn assert_hits(
        moving: &WorldShape,
        target: &WorldShape,
        expected: f32,
        point: Vec2,
        case: &str,
    ) {
        let hit =
            shape_cast(moving, Dir2::X, 100.0, target).unwrap_or_else(|| panic!("{case}: a hit"));
        assert!(
            (hit.distance - expected).abs() <= 1e-5,
            "{case}: distance {} for {expected}",
            hit.distance
        );
        if expected > 0.0 {
            let moved = moving.translated(Vec2::X * hit.distance);
            assert_consistent(&moved, target, &hit, case);
            // On the line where the target reaches furthest toward the cast shape.
            assert!(
                (hit.point.x - point.x).abs() <= 1e-5,
                "{case}: {:?}",
                hit.point
            );
            assert!(
                hit.normal.x < 0.0,
                "{case}: the normal {:?} faces the cast",
                hit.normal
            );
        }
        let swapped = shape_cast(target, Dir2::NEG_X, 100.0, moving)
            .unwrap_or_else(|| panic!("{case}, swapped: a hit"));
        assert!(
            (swapped.distance - expected).abs() <= 1e-5,
            "{case}, swapped: distance {} for {expected}",
            swapped.distance
        );
        if expected > 0.0 {
            let moved = target.translated(-Vec2::X * swapped.distance);
            assert_consistent(&moved, moving, &swapped, case);
            assert!(
                swapped.normal.x > 0.0,
                "{case}: the normal {:?} faces the cast",
                swapped.normal
            );
        }
    }

    /// Every pair of kinds at 0°, 90° and 45°, on a line along X, which each kind is symmetric about
    /// at those angles: separated, touching, overlapping, contained, too far, moving away and
    /// passing beside.
    #[test]
    fn every_pair_of_kinds_on_a_line() {
        for (angle, rotation) in angles().into_iter().take(3) {
            for (k, (target, target_reach)) in kinds(Vec2::ZERO, rotation).into_iter().enumerate() {
                for (j, (_, moving_reach)) in kinds(Vec2::ZERO, rotation).into_iter().enumerate() {
                    let case = format!("{angle}, moving kind {j} against kind {k}");
                    let at = |x: f32| kinds(Vec2::new(x, 0.0), rotation)[j].0;
                    let touching = -(target_reach + moving_reach);
                    let face = Vec2::new(-target_reach, 0.0);
                    assert_hits(
                        &at(touching - 3.0),
                        &target,
                        3.0,
                        face,
                        &format!("{case}, apart"),
                    );
                    assert_hits(
                        &at(touching),
                        &target,
                        0.0,
                        face,
                        &format!("{case}, touching"),
                    );
                    assert_hits(
                        &at(touching + 0.2),
                        &target,
                        0.0,
                        face,
                        &format!("{case}, overlapping"),
                    );
                    assert_hits(&at(0.0), &target, 0.0, face, &format!("{case}, contained"));
                    let apart = at(touching - 3.0);
                    assert_eq!(
                        shape_cast(&apart, Dir2::X, 2.999, &target),
                        None,
                        "{case}: short of it"
                    );
                    let reach = shape_cast(&apart, Dir2::X, 100.0, &target).map(|hit| hit.distance);
                    assert!(
                        shape_cast(&apart, Dir2::X, reach.unwrap_or(0.0), &target).is_some(),
                        "{case}: reaching it exactly"
                    );
                    assert_eq!(
                        shape_cast(&apart, Dir2::NEG_X, 100.0, &target),
                        None,
                        "{case}: moving away"
                    );
                    let beside = kinds(Vec2::new(0.0, 6.0), rotation)[j].0;
                    assert_eq!(
                        shape_cast(&beside, Dir2::X, 100.0, &target),
                        None,
                        "{case}: passing beside"
                    );
                }
            }
        }
    }

    /// A circle passing a rectangle's corner meets the corner's rounding, later than the grown
    /// rectangle's side, or misses it where the grown rectangle alone would be hit.
    #[test]
    fn a_circle_meets_a_corner_on_its_rounding() {
        let wall: WorldShape = WorldRect::new(Vec2::ZERO, Vec2::splat(1.0)).into();
        // The centre passes 1.5 above the wall's axis: the circle of radius 1 meets the corner at
        // (-1, 1) when its centre is at (-1 - sqrt(0.75), 1.5).
        let ball: WorldShape = WorldCircle::new(Vec2::new(-5.0, 1.5), 1.0).into();
        let hit = shape_cast(&ball, Dir2::X, 100.0, &wall).expect("a hit on the rounding");
        assert!((hit.distance - (4.0 - 0.75f32.sqrt())).abs() <= 1e-5);
        assert_near(hit.point, Vec2::new(-1.0, 1.0), "the corner");
        assert_near(
            hit.normal,
            Vec2::new(-(0.75f32.sqrt()), 0.5),
            "from the corner to the centre",
        );
        // Along y = x + 3.7 the centre crosses the grown square's corner, 1.2 from the wall's corner:
        // a miss.
        let past: WorldShape = WorldCircle::new(Vec2::new(-5.0, -1.3), 1.0).into();
        let up_right = Dir2::from_xy(1.0, 1.0).unwrap();
        assert_eq!(shape_cast(&past, up_right, 100.0, &wall), None);
    }

    /// Two boxes sliding along each other's sides touch all along the way: a hit at zero. Shifted
    /// apart by a hair they never touch.
    #[test]
    fn parallel_sides_touch_or_never_meet() {
        let floor: WorldShape = WorldRect::new(Vec2::ZERO, Vec2::new(10.0, 1.0)).into();
        let resting: WorldShape = WorldRect::new(Vec2::new(0.0, 2.0), Vec2::splat(1.0)).into();
        let hit = shape_cast(&resting, Dir2::X, 5.0, &floor).expect("touching at the start");
        assert_eq!(hit.distance, 0.0);
        assert_near(hit.normal, Vec2::Y, "the floor's normal");
        let lifted: WorldShape = WorldRect::new(Vec2::new(0.0, 2.001), Vec2::splat(1.0)).into();
        assert_eq!(shape_cast(&lifted, Dir2::X, 5.0, &floor), None);
    }

    #[test]
    fn a_diagonal_cast_meets_the_nearer_side() {
        let wall: WorldShape =
            WorldRotatedRect::new(Vec2::ZERO, Vec2::splat(1.0), Rot2::FRAC_PI_4).into();
        let crate_box: WorldShape = WorldRect::new(Vec2::new(-4.0, -4.0), Vec2::splat(0.5)).into();
        let hit =
            shape_cast(&crate_box, Dir2::from_xy(1.0, 1.0).unwrap(), 100.0, &wall).expect("a hit");
        // The crate's corner (-3.5, -3.5) meets the diamond's lower-left side x + y = -sqrt(2).
        let expected = (7.0 - 2.0f32.sqrt()) / 2.0f32.sqrt();
        assert!((hit.distance - expected).abs() <= 1e-5, "{}", hit.distance);
        assert_near(hit.normal, -Vec2::ONE.normalize(), "the side's normal");
    }

    #[test]
    fn bad_distances_find_nothing() {
        let [(a, _), (b, _), _] = kinds(Vec2::ZERO, Rot2::IDENTITY);
        assert_eq!(shape_cast(&a, Dir2::X, f32::NAN, &b), None);
        assert_eq!(shape_cast(&a, Dir2::X, -1.0, &b), None);
    }
}
