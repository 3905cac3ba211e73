//! Where two touching or overlapping shapes meet.

use bevy::math::Vec2;

use super::rounded::RoundedPolygon;
use super::{Contact, WorldShape};

/// The part of a shape that reaches furthest along a direction: how far it reaches, and the span it
/// covers across the direction (a single value for a corner or a circle, an interval for a side).
struct SupportFeature {
    reach: f32,
    across_min: f32,
    across_max: f32,
}

fn support_feature(shape: &WorldShape, direction: Vec2, side_share: f32) -> SupportFeature {
    let across = direction.perp();
    if let WorldShape::Circle(circle) = shape {
        let c = circle.center.dot(across);
        return SupportFeature {
            reach: circle.center.dot(direction) + circle.radius,
            across_min: c,
            across_max: c,
        };
    }
    match shape.corners() {
        Some(corners) => side_of(&corners, 0.0, direction, side_share),
        None => {
            let rounded = RoundedPolygon::of(shape);
            side_of(rounded.core(), rounded.radius(), direction, side_share)
        }
    }
}

/// The support feature of the convex hull of `points` grown by `radius`: the points within
/// `side_share` of the hull's size of the furthest one form its side, and the rounding adds the
/// radius to the reach.
fn side_of(points: &[Vec2], radius: f32, direction: Vec2, side_share: f32) -> SupportFeature {
    let across = direction.perp();
    let reach = points
        .iter()
        .map(|point| point.dot(direction))
        .fold(f32::NEG_INFINITY, f32::max);
    let size = points
        .iter()
        .map(|point| point.distance(points[0]))
        .fold(0.0, f32::max);
    let tolerance = side_share * size;
    let (mut across_min, mut across_max) = (f32::INFINITY, f32::NEG_INFINITY);
    for point in points
        .iter()
        .filter(|p| p.dot(direction) >= reach - tolerance)
    {
        across_min = across_min.min(point.dot(across));
        across_max = across_max.max(point.dot(across));
    }
    SupportFeature {
        reach: reach + radius,
        across_min,
        across_max,
    }
}

/// A representative point where `a` and `b` meet, given their `contact` (normal from `a` to `b`): for
/// drawing contacts, or for a game that needs a place for sparks or decals.
///
/// Along the normal it lies halfway between `a`'s side (or corner) facing `b` and `b`'s facing `a`;
/// across the normal, in the middle of the span where those two features overlap. Two overlapping boxes
/// give the centre of their overlap; two circles, the middle of their lens.
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::*;
///
/// let a = WorldShape::Rect(WorldRect::from_min_max(Vec2::ZERO, Vec2::splat(2.0)));
/// let b = WorldShape::Rect(WorldRect::from_min_max(Vec2::new(1.5, 1.0), Vec2::new(3.5, 3.0)));
/// let contact = a.contact(&b, OverlapMode::Closed).unwrap();
/// assert_eq!(contact_point(&a, &b, &contact), Vec2::new(1.75, 1.5));
/// ```
pub fn contact_point(a: &WorldShape, b: &WorldShape, contact: &Contact) -> Vec2 {
    // A corner within a thousandth of the shape's size of a side's reach counts as the side's, so
    // that the point of a box resting nearly flat on another stays in the middle of their overlap.
    meeting_point(a, b, contact.normal, 1e-3)
}

/// [`contact_point`] for the unit `normal` from `a` to `b`, a corner within `side_share` of the
/// shape's size of the furthest one counting as part of its side.
pub(crate) fn meeting_point(a: &WorldShape, b: &WorldShape, normal: Vec2, side_share: f32) -> Vec2 {
    let a_side = support_feature(a, normal, side_share);
    let b_side = support_feature(b, -normal, side_share);
    // `b_side` was measured along -normal (and across its perpendicular, the opposite way).
    let along = 0.5 * (a_side.reach - b_side.reach);
    let across_min = a_side.across_min.max(-b_side.across_max);
    let across_max = a_side.across_max.min(-b_side.across_min);
    normal * along + normal.perp() * (0.5 * (across_min + across_max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::testing::assert_near;
    use crate::geometry::{OverlapMode, WorldCircle, WorldRect, WorldRotatedRect};
    use bevy::math::Rot2;

    fn point(a: WorldShape, b: WorldShape) -> Vec2 {
        let contact = a
            .contact(&b, OverlapMode::Closed)
            .expect("the shapes must touch");
        contact_point(&a, &b, &contact)
    }

    #[test]
    fn overlapping_boxes_meet_in_the_middle_of_their_overlap() {
        let a = WorldRect::from_min_max(Vec2::ZERO, Vec2::splat(2.0)).into();
        let b = WorldRect::from_min_max(Vec2::new(1.5, 1.0), Vec2::new(3.5, 3.0)).into();
        assert_near(point(a, b), Vec2::new(1.75, 1.5), "box overlap centre");
        assert_near(
            point(b, a),
            Vec2::new(1.75, 1.5),
            "the same from the other side",
        );
    }

    #[test]
    fn circles_meet_in_the_middle_of_their_lens() {
        let a = WorldCircle::new(Vec2::ZERO, 1.0).into();
        let b = WorldCircle::new(Vec2::new(0.0, 1.5), 1.0).into();
        assert_near(point(a, b), Vec2::new(0.0, 0.75), "lens middle");
    }

    #[test]
    fn a_corner_on_a_side_meets_at_the_corner() {
        // A diamond's right corner touching a square's left side at (√2, 0).
        let diamond = WorldRotatedRect::new(Vec2::ZERO, Vec2::splat(1.0), Rot2::FRAC_PI_4);
        let reach = diamond.bounding_half_size().x;
        let square = WorldRect::new(Vec2::new(reach + 1.0, 0.0), Vec2::splat(1.0));
        assert_near(
            point(diamond.into(), square.into()),
            Vec2::new(reach, 0.0),
            "the corner",
        );
    }

    #[test]
    fn a_circle_on_a_wall_meets_under_its_centre() {
        let wall = WorldRect::new(Vec2::ZERO, Vec2::new(10.0, 1.0)).into();
        let ball = WorldCircle::new(Vec2::new(3.0, 1.4), 0.5).into();
        assert_near(
            point(wall, ball),
            Vec2::new(3.0, 0.95),
            "between the wall's top and the ball's bottom",
        );
    }
}
