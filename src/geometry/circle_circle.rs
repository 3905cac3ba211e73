//! Circle against circle.

use bevy::math::Vec2;

use super::direction::direction_and_length;
use super::{Contact, OverlapMode, WorldCircle};

/// Whether two circles collide: the squared distance between the centres against the squared sum of the
/// radii, no square root.
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::*;
///
/// let a = WorldCircle::new(Vec2::ZERO, 1.0);
/// let tangent = WorldCircle::new(Vec2::new(3.0, 4.0), 4.0);
/// assert!(intersection_test_circle_circle(&a, &tangent, OverlapMode::Closed));
/// assert!(!intersection_test_circle_circle(&a, &tangent, OverlapMode::InteriorOnly));
/// ```
#[inline]
pub fn intersection_test_circle_circle(
    a: &WorldCircle,
    b: &WorldCircle,
    mode: OverlapMode,
) -> bool {
    let reach = a.radius + b.radius;
    mode.admits(reach * reach - a.center.distance_squared(b.center))
}

/// The contact between two circles, `None` when they do not collide. The normal points from `a`'s centre
/// to `b`'s (`+X` when the centres coincide).
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::*;
///
/// let a = WorldCircle::new(Vec2::ZERO, 1.0);
/// let b = WorldCircle::new(Vec2::new(0.0, 1.5), 1.0);
/// let contact = contact_circle_circle(&a, &b, OverlapMode::Closed).unwrap();
/// assert_eq!(contact.normal, Vec2::Y);
/// assert!((contact.depth - 0.5).abs() < 1e-6);
/// ```
#[inline]
pub fn contact_circle_circle(
    a: &WorldCircle,
    b: &WorldCircle,
    mode: OverlapMode,
) -> Option<Contact> {
    let offset = b.center - a.center;
    let reach = a.radius + b.radius;
    let distance_squared = offset.length_squared();
    if !mode.admits(reach * reach - distance_squared) {
        return None;
    }
    let (normal, distance) = direction_and_length(offset).unwrap_or((Vec2::X, 0.0));
    Some(Contact {
        normal,
        depth: (reach - distance).max(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::testing::{NEAR, assert_collides, assert_near};

    fn unit() -> WorldCircle {
        WorldCircle::new(Vec2::ZERO, 1.0)
    }

    #[test]
    fn separated_do_not_collide() {
        for direction in [Vec2::X, Vec2::Y, Vec2::new(0.6, 0.8)] {
            let b = WorldCircle::new(direction * (2.0 + 10.0 * NEAR), 1.0);
            assert_collides(unit(), b, OverlapMode::Closed, false, "apart");
        }
    }

    #[test]
    fn tangent_circles_collide() {
        // 0°, 90° and the 3-4-5 direction are exact in f32.
        for direction in [Vec2::X, Vec2::Y, Vec2::new(0.6, 0.8)] {
            let b = WorldCircle::new(direction * 5.0, 4.0);
            let contact = assert_collides(unit(), b, OverlapMode::Closed, true, "tangent").unwrap();
            assert_near(contact.normal, direction, "normal from a to b");
            assert!(contact.depth.abs() < 1e-6, "depth {}", contact.depth);
            assert_collides(
                unit(),
                b,
                OverlapMode::InteriorOnly,
                false,
                "tangent, interior only",
            );
        }
    }

    #[test]
    fn overlapping_and_contained_collide() {
        let b = WorldCircle::new(Vec2::new(1.5, 0.0), 1.0);
        let contact = assert_collides(unit(), b, OverlapMode::Closed, true, "overlap").unwrap();
        assert!(
            (contact.depth - 0.5).abs() < 1e-6,
            "depth {}",
            contact.depth
        );
        let inner = WorldCircle::new(Vec2::new(0.0, 0.2), 0.3);
        let contact =
            assert_collides(unit(), inner, OverlapMode::Closed, true, "contained").unwrap();
        assert!(
            (contact.depth - 1.1).abs() < 1e-6,
            "depth {}",
            contact.depth
        );
        let same =
            assert_collides(unit(), unit(), OverlapMode::Closed, true, "same circle").unwrap();
        assert_eq!(same.normal, Vec2::X, "coincident centres fall back to +X");
    }

    #[test]
    fn swapped_arguments_negate_normal() {
        let b = WorldCircle::new(Vec2::new(1.0, 1.0), 1.0);
        let ab = contact_circle_circle(&unit(), &b, OverlapMode::Closed).unwrap();
        let ba = contact_circle_circle(&b, &unit(), OverlapMode::Closed).unwrap();
        assert_eq!(ab, ba.flipped(), "swapping the arguments flips the normal");
    }

    #[test]
    fn centres_a_subnormal_distance_apart_give_a_unit_normal() {
        for offset in [
            Vec2::new(0.0, 5e-23),
            Vec2::new(3e-42, -4e-42),
            Vec2::new(1e-45, 0.0),
        ] {
            let a = WorldCircle::new(Vec2::ZERO, 1e-6);
            let b = WorldCircle::new(offset, 1e-6);
            let contact = contact_circle_circle(&a, &b, OverlapMode::Closed).unwrap();
            // Oracle in f64, where the squares do not underflow.
            let (x, y) = (f64::from(offset.x), f64::from(offset.y));
            let length = x.hypot(y);
            let expected = Vec2::new((x / length) as f32, (y / length) as f32);
            assert_near(contact.normal, expected, "along the offset");
            assert_eq!(contact.depth, 2e-6);
        }
    }
}
