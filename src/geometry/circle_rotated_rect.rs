//! Circle against rotated rectangle.

use super::circle_rect::{contact_box_circle_local, intersection_test_box_circle_local};
use super::{Contact, OverlapMode, WorldCircle, WorldRotatedRect};

/// Whether a rotated rectangle and a circle collide.
///
/// "Circle and Rotated Rectangle Collision Detection": instead of rotating the rectangle, move the
/// circle's centre into the rectangle's frame (the inverse rotation about the rectangle's centre),
/// clamp it into the now axis-aligned rectangle, and
/// compare the squared distance to the clamped point with the squared radius. Touching counts in
/// [`OverlapMode::Closed`], where the article's `distance < radius` would miss it.
///
/// ```
/// use bevy::math::{Rot2, Vec2};
/// use bevy_rect_collision::geometry::*;
///
/// // A 2 × 1 half-size rectangle turned upright reaches 2 upwards.
/// let rect = WorldRotatedRect::new(Vec2::ZERO, Vec2::new(2.0, 1.0), Rot2::FRAC_PI_2);
/// assert!(intersection_test_rotated_rect_circle(&rect, &WorldCircle::new(Vec2::new(0.0, 2.4), 0.5), OverlapMode::Closed));
/// assert!(!intersection_test_rotated_rect_circle(&rect, &WorldCircle::new(Vec2::new(1.6, 0.0), 0.5), OverlapMode::Closed));
/// ```
#[inline]
pub fn intersection_test_rotated_rect_circle(
    a: &WorldRotatedRect,
    b: &WorldCircle,
    mode: OverlapMode,
) -> bool {
    let local = a.rotation.inverse() * (b.center - a.center);
    intersection_test_box_circle_local(a.half_size, local, b.radius, mode)
}

/// Whether a circle and a rotated rectangle collide: the mirror of
/// [`intersection_test_rotated_rect_circle`].
///
/// ```
/// use bevy::math::{Rot2, Vec2};
/// use bevy_rect_collision::geometry::*;
///
/// let circle = WorldCircle::new(Vec2::new(2.0, 0.0), 0.6);
/// let diamond = WorldRotatedRect::new(Vec2::ZERO, Vec2::splat(1.0), Rot2::FRAC_PI_4);
/// assert!(intersection_test_circle_rotated_rect(&circle, &diamond, OverlapMode::Closed));
/// ```
#[inline]
pub fn intersection_test_circle_rotated_rect(
    a: &WorldCircle,
    b: &WorldRotatedRect,
    mode: OverlapMode,
) -> bool {
    intersection_test_rotated_rect_circle(b, a, mode)
}

/// The contact between a rotated rectangle `a` and a circle `b`, `None` when they do not collide.
/// The normal, computed in the rectangle's frame and rotated back into the world, points from the
/// rectangle to the circle.
///
/// ```
/// use bevy::math::{Rot2, Vec2};
/// use bevy_rect_collision::geometry::*;
///
/// let rect = WorldRotatedRect::new(Vec2::ZERO, Vec2::new(2.0, 1.0), Rot2::FRAC_PI_2);
/// let circle = WorldCircle::new(Vec2::new(0.0, 2.25), 0.5);
/// let contact = contact_rotated_rect_circle(&rect, &circle, OverlapMode::Closed).unwrap();
/// assert!((contact.normal - Vec2::Y).length() < 1e-6);
/// assert!((contact.depth - 0.25).abs() < 1e-5);
/// ```
#[inline]
pub fn contact_rotated_rect_circle(
    a: &WorldRotatedRect,
    b: &WorldCircle,
    mode: OverlapMode,
) -> Option<Contact> {
    let local = a.rotation.inverse() * (b.center - a.center);
    let contact = contact_box_circle_local(a.half_size, local, b.radius, mode)?;
    Some(Contact {
        normal: a.rotation * contact.normal,
        depth: contact.depth,
    })
}

/// The contact between a circle `a` and a rotated rectangle `b`: the mirror of
/// [`contact_rotated_rect_circle`], with the normal pointing from the circle to the rectangle.
///
/// ```
/// use bevy::math::{Rot2, Vec2};
/// use bevy_rect_collision::geometry::*;
///
/// let circle = WorldCircle::new(Vec2::new(0.0, 2.25), 0.5);
/// let rect = WorldRotatedRect::new(Vec2::ZERO, Vec2::new(2.0, 1.0), Rot2::FRAC_PI_2);
/// let contact = contact_circle_rotated_rect(&circle, &rect, OverlapMode::Closed).unwrap();
/// assert!((contact.normal + Vec2::Y).length() < 1e-6);
/// ```
#[inline]
pub fn contact_circle_rotated_rect(
    a: &WorldCircle,
    b: &WorldRotatedRect,
    mode: OverlapMode,
) -> Option<Contact> {
    contact_rotated_rect_circle(b, a, mode).map(Contact::flipped)
}

#[cfg(test)]
mod tests {
    use bevy::math::{Rot2, Vec2};

    use super::*;
    use crate::geometry::testing::{NEAR, angles, assert_collides, assert_near};

    fn bar(rotation: Rot2) -> WorldRotatedRect {
        WorldRotatedRect::new(Vec2::new(1.0, -1.0), Vec2::new(2.0, 1.0), rotation)
    }

    /// A point at `local` in the bar's frame, in world space.
    fn at(rect: &WorldRotatedRect, local: Vec2) -> Vec2 {
        rect.center + rect.rotation * local
    }

    #[test]
    fn separated_at_every_angle() {
        for (angle, rotation) in angles() {
            let r = bar(rotation);
            let side = WorldCircle::new(at(&r, Vec2::new(0.5, 1.5 + 10.0 * NEAR)), 0.5);
            assert_collides(r, side, OverlapMode::Closed, false, angle);
            let corner = WorldCircle::new(at(&r, Vec2::new(2.4, 1.4)), 0.5);
            assert_collides(r, corner, OverlapMode::Closed, false, angle);
        }
    }

    #[test]
    fn tangent_at_right_angles_collides() {
        // With cos and sin exactly 0 and ±1 the frame change is exact.
        for rotation in [Rot2::IDENTITY, Rot2::FRAC_PI_2] {
            let r = bar(rotation);
            let circle = WorldCircle::new(at(&r, Vec2::new(0.5, 1.5)), 0.5);
            let contact = assert_collides(r, circle, OverlapMode::Closed, true, "tangent").unwrap();
            assert_eq!(contact.depth, 0.0, "tangent has zero depth");
            assert_near(
                contact.normal,
                r.axis_y(),
                "normal from the rectangle to the circle",
            );
            assert_collides(
                r,
                circle,
                OverlapMode::InteriorOnly,
                false,
                "tangent, interior only",
            );
        }
    }

    #[test]
    fn near_tangent_is_decided_at_the_boundary() {
        for (angle, rotation) in angles() {
            let r = bar(rotation);
            let inside = WorldCircle::new(at(&r, Vec2::new(0.5, 1.5 - 10.0 * NEAR)), 0.5);
            let outside = WorldCircle::new(at(&r, Vec2::new(0.5, 1.5 + 10.0 * NEAR)), 0.5);
            assert_collides(r, inside, OverlapMode::Closed, true, angle);
            assert_collides(r, outside, OverlapMode::Closed, false, angle);
        }
    }

    #[test]
    fn corner_near_the_rim_at_every_angle() {
        for (angle, rotation) in angles() {
            let r = bar(rotation);
            // 3-4-5 from the corner (2, 1) in the bar's frame.
            let centre = at(&r, Vec2::new(2.3, 1.4));
            assert_collides(
                r,
                WorldCircle::new(centre, 0.5 + 10.0 * NEAR),
                OverlapMode::Closed,
                true,
                angle,
            );
            assert_collides(
                r,
                WorldCircle::new(centre, 0.5 - 10.0 * NEAR),
                OverlapMode::Closed,
                false,
                angle,
            );
        }
    }

    #[test]
    fn overlapping_and_contained_at_every_angle() {
        for (angle, rotation) in angles() {
            let r = bar(rotation);
            let overlapping = WorldCircle::new(at(&r, Vec2::new(2.25, 0.0)), 0.5);
            let contact =
                assert_collides(r, overlapping, OverlapMode::Closed, true, angle).unwrap();
            assert_near(contact.normal, r.axis_x(), "out through the short side");
            assert!(
                (contact.depth - 0.25).abs() < 1e-5,
                "{angle}: depth {}",
                contact.depth
            );
            let inside = WorldCircle::new(at(&r, Vec2::new(-1.0, 0.0)), 0.3);
            assert_collides(r, inside, OverlapMode::Closed, true, angle);
            let around = WorldCircle::new(r.center, 5.0);
            assert_collides(r, around, OverlapMode::Closed, true, angle);
        }
    }

    #[test]
    fn swapped_arguments_negate_normal() {
        let r = bar(Rot2::radians(0.7));
        let circle = WorldCircle::new(at(&r, Vec2::new(2.2, 1.1)), 0.5);
        let ab = contact_rotated_rect_circle(&r, &circle, OverlapMode::Closed).unwrap();
        let ba = contact_circle_rotated_rect(&circle, &r, OverlapMode::Closed).unwrap();
        assert_eq!(ab, ba.flipped(), "swapping the arguments flips the normal");
    }
}
