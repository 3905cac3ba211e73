//! Axis-aligned rectangle against axis-aligned rectangle.

use bevy::math::Vec2;

use super::contact::{AxisOverlap, least_overlap};
use super::{Contact, OverlapMode, WorldRect};

/// Whether two axis-aligned rectangles collide.
///
/// "Intersección de rectángulos": the rectangles meet exactly when the centre of `b` lies in `a` grown by `b`'s half size
/// (their Minkowski sum), a point-in-rectangle test of two comparisons per axis.
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::{OverlapMode, WorldRect, intersection_test_rect_rect};
///
/// let a = WorldRect::new(Vec2::ZERO, Vec2::splat(1.0));
/// let corner_to_corner = WorldRect::new(Vec2::splat(2.0), Vec2::splat(1.0));
/// let apart = WorldRect::new(Vec2::new(2.5, 0.0), Vec2::splat(1.0));
/// assert!(intersection_test_rect_rect(&a, &corner_to_corner, OverlapMode::Closed));
/// assert!(!intersection_test_rect_rect(&a, &apart, OverlapMode::Closed));
/// ```
#[inline]
pub fn intersection_test_rect_rect(a: &WorldRect, b: &WorldRect, mode: OverlapMode) -> bool {
    let overlap = a.half_size + b.half_size - (b.center - a.center).abs();
    mode.admits(overlap.x) && mode.admits(overlap.y)
}

/// The contact between two axis-aligned rectangles, `None` when they do not collide.
///
/// The normal is `±X` or `±Y`, pointing from `a` to `b`; the depth is the smaller of the two axis overlaps.
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::{OverlapMode, WorldRect, contact_rect_rect};
///
/// let a = WorldRect::new(Vec2::ZERO, Vec2::splat(1.0));
/// let b = WorldRect::new(Vec2::new(1.5, 0.2), Vec2::splat(1.0));
/// let contact = contact_rect_rect(&a, &b, OverlapMode::Closed).unwrap();
/// assert_eq!(contact.normal, Vec2::X);
/// assert!((contact.depth - 0.5).abs() < 1e-6);
/// ```
#[inline]
pub fn contact_rect_rect(a: &WorldRect, b: &WorldRect, mode: OverlapMode) -> Option<Contact> {
    let offset = b.center - a.center;
    let overlap = a.half_size + b.half_size - offset.abs();
    if !(mode.admits(overlap.x) && mode.admits(overlap.y)) {
        return None;
    }
    Some(least_overlap([
        AxisOverlap {
            axis: Vec2::X,
            offset: offset.x,
            overlap: overlap.x,
        },
        AxisOverlap {
            axis: Vec2::Y,
            offset: offset.y,
            overlap: overlap.y,
        },
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::testing::{NEAR, assert_collides, assert_near};

    fn square(x: f32, y: f32, half: f32) -> WorldRect {
        WorldRect::new(Vec2::new(x, y), Vec2::splat(half))
    }

    /// A 4 × 2 rectangle lying down (0°) or standing up (90°, the same rectangle turned a right angle).
    fn long_rect(turned: bool) -> WorldRect {
        let half = if turned {
            Vec2::new(1.0, 2.0)
        } else {
            Vec2::new(2.0, 1.0)
        };
        WorldRect::new(Vec2::ZERO, half)
    }

    #[test]
    fn separated_do_not_collide() {
        for turned in [false, true] {
            let a = long_rect(turned);
            let reach = a.half_size.x + 0.5;
            let b = square(reach + NEAR, 0.0, 0.5);
            assert_collides(a, b, OverlapMode::Closed, false, "gap to the right");
            let b = square(0.0, -(a.half_size.y + 0.5 + NEAR), 0.5);
            assert_collides(a, b, OverlapMode::Closed, false, "gap below");
        }
    }

    #[test]
    fn touching_edge_collides() {
        for turned in [false, true] {
            let a = long_rect(turned);
            let b = square(a.half_size.x + 0.5, 0.3, 0.5);
            let contact = assert_collides(a, b, OverlapMode::Closed, true, "shared edge").unwrap();
            assert_eq!(contact.depth, 0.0, "touching has zero depth");
            assert_eq!(contact.normal, Vec2::X, "the normal points from a to b");
        }
    }

    #[test]
    fn touching_corner_collides() {
        let a = long_rect(false);
        let b = square(2.5, 1.5, 0.5);
        let contact = assert_collides(a, b, OverlapMode::Closed, true, "corner to corner").unwrap();
        assert_eq!(contact.depth, 0.0, "corner contact has zero depth");
    }

    #[test]
    fn overlapping_collides_with_least_overlap_depth() {
        let a = long_rect(false);
        let b = square(2.25, 1.4, 0.5);
        let contact = assert_collides(a, b, OverlapMode::Closed, true, "overlap").unwrap();
        // Overlaps: x = 2 + 0.5 - 2.25 = 0.25, y = 1 + 0.5 - 1.4 = 0.1.
        assert_near(contact.normal, Vec2::Y, "normal along the smaller overlap");
        assert!(
            (contact.depth - 0.1).abs() < 1e-5,
            "depth {}",
            contact.depth
        );
    }

    #[test]
    fn contained_collides_with_depth_to_leave() {
        let a = long_rect(false);
        let b = square(1.0, 0.0, 0.25);
        let contact = assert_collides(a, b, OverlapMode::Closed, true, "contained").unwrap();
        // Leaving through the right side takes 2 - 1 + 0.25; through the top, 1 + 0.25.
        assert_near(contact.normal, Vec2::X, "out through the right side");
        assert!(
            (contact.depth - 1.25).abs() < 1e-5,
            "depth {}",
            contact.depth
        );
    }

    #[test]
    fn swapped_arguments_negate_normal() {
        let a = square(0.0, 0.0, 1.0);
        let b = square(1.5, 0.2, 1.0);
        let ab = contact_rect_rect(&a, &b, OverlapMode::Closed).unwrap();
        let ba = contact_rect_rect(&b, &a, OverlapMode::Closed).unwrap();
        assert_eq!(ab, ba.flipped(), "swapping the arguments flips the normal");
    }

    #[test]
    fn interior_only_ignores_zero_area_contact() {
        let a = square(0.0, 0.0, 1.0);
        assert_collides(
            a,
            square(2.0, 0.0, 1.0),
            OverlapMode::InteriorOnly,
            false,
            "edge",
        );
        assert_collides(
            a,
            square(2.0, 2.0, 1.0),
            OverlapMode::InteriorOnly,
            false,
            "corner",
        );
        assert_collides(
            a,
            square(2.0 - NEAR, 0.0, 1.0),
            OverlapMode::InteriorOnly,
            true,
            "overlap",
        );
    }

    #[test]
    fn matches_the_corner_and_size_form_of_interseccion_de_rectangulos() {
        // The article's macro: x1 - w2 <= x2 <= x1 + w1 and y1 - h2 <= y2 <= y1 + h1, corners and sizes.
        let seed = |x1: f32, y1: f32, w1: f32, h1: f32, x2: f32, y2: f32, w2: f32, h2: f32| {
            x1 - w2 <= x2 && x1 + w1 >= x2 && y1 - h2 <= y2 && y1 + h1 >= y2
        };
        let cases = [
            (0.0, 0.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0),
            (0.0, 0.0, 2.0, 2.0, 2.5, 1.0, 1.0, 1.0),
            (0.0, 0.0, 2.0, 2.0, -1.0, -1.0, 1.0, 1.0),
            (0.0, 0.0, 4.0, 2.0, 1.0, 0.5, 0.5, 0.5),
            (3.0, 3.0, 1.0, 1.0, 0.0, 0.0, 2.0, 2.0),
        ];
        for (x1, y1, w1, h1, x2, y2, w2, h2) in cases {
            let a = WorldRect::from_min_max(Vec2::new(x1, y1), Vec2::new(x1 + w1, y1 + h1));
            let b = WorldRect::from_min_max(Vec2::new(x2, y2), Vec2::new(x2 + w2, y2 + h2));
            assert_eq!(
                intersection_test_rect_rect(&a, &b, OverlapMode::Closed),
                seed(x1, y1, w1, h1, x2, y2, w2, h2),
                "the corner and size form disagrees on {a:?} and {b:?}"
            );
        }
    }
}
