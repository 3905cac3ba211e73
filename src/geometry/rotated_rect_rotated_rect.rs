//! Rotated rectangle against rotated rectangle.

use bevy::math::{Vec2, Vec4};

use super::contact::{AxisOverlap, least_overlap};
use super::{Contact, OverlapMode, WorldRotatedRect};

/// The four separating axes of a rectangle pair at once, one per lane: `a`'s x and y axes, then `b`'s.
struct AxesOverlap {
    /// The centres' offset (from `a` to `b`) projected on each axis.
    offset: Vec4,
    /// How far the two projections overlap on each axis: positive overlapping, negative apart.
    overlap: Vec4,
}

/// The separating axis test on all four edge normals, in one `Vec4` per quantity.
///
/// On each axis the overlap is the axis owner's half size, plus the other rectangle's extent along it
/// (its half sizes weighted by the absolute cosine and sine of the angle between the rectangles), minus
/// the centres' offset along it. Rectangles are symmetric about their centres, so no corner is computed.
#[inline]
fn axes_overlap(a: &WorldRotatedRect, b: &WorldRotatedRect) -> AxesOverlap {
    let d = b.center - a.center;
    let (ra, rb) = (a.rotation, b.rotation);
    let offset = Vec4::new(ra.cos, -ra.sin, rb.cos, -rb.sin) * d.x
        + Vec4::new(ra.sin, ra.cos, rb.sin, rb.cos) * d.y;
    let (abs_cos, abs_sin) = relative_abs_cos_sin(a, b);
    let (ha, hb) = (a.half_size, b.half_size);
    let own = Vec4::new(ha.x, ha.y, hb.x, hb.y);
    let other = Vec4::new(hb.x, hb.y, ha.x, ha.y);
    let other_swapped = Vec4::new(hb.y, hb.x, ha.y, ha.x);
    let extent = other * abs_cos + other_swapped * abs_sin;
    AxesOverlap {
        offset,
        overlap: own + extent - offset.abs(),
    }
}

/// The absolute cosine and sine of the angle between the two rectangles.
#[inline]
fn relative_abs_cos_sin(a: &WorldRotatedRect, b: &WorldRotatedRect) -> (f32, f32) {
    let (a, b) = (a.rotation, b.rotation);
    let cos = a.cos * b.cos + a.sin * b.sin;
    let sin = a.cos * b.sin - a.sin * b.cos;
    (cos.abs(), sin.abs())
}

/// Whether two rotated rectangles collide, by the separating axis test on their four edge normals.
///
/// The separating axis theorem, as "Rectangle Intersection Test (with C#)" on manski's blog and the
/// Unity tutorial "Are two rectangles with orientation in 2D space intersecting?" apply it: two convex
/// polygons are disjoint exactly when an axis perpendicular to one of their edges separates their
/// projections. A rectangle has two distinct edge normals, so four axes suffice.
/// Rectangles are symmetric about their centres, so each projection is the centre's projection plus a
/// radius, and no corner is computed.
///
/// ```
/// use bevy::math::{Rot2, Vec2};
/// use bevy_rect_collision::geometry::*;
///
/// let a = WorldRotatedRect::new(Vec2::ZERO, Vec2::new(2.0, 0.5), Rot2::degrees(30.0));
/// let b = WorldRotatedRect::new(Vec2::new(1.5, 1.5), Vec2::new(2.0, 0.5), Rot2::degrees(-30.0));
/// let c = WorldRotatedRect::new(Vec2::new(0.0, 3.0), Vec2::new(2.0, 0.5), Rot2::degrees(30.0));
/// assert!(intersection_test_rotated_rect_rotated_rect(&a, &b, OverlapMode::Closed));
/// assert!(!intersection_test_rotated_rect_rotated_rect(&a, &c, OverlapMode::Closed));
/// ```
#[inline]
pub fn intersection_test_rotated_rect_rotated_rect(
    a: &WorldRotatedRect,
    b: &WorldRotatedRect,
    mode: OverlapMode,
) -> bool {
    // All four axes, combined without branches: most candidate pairs from a broad phase overlap.
    axes_overlap(a, b)
        .overlap
        .cmpge(Vec4::splat(mode.threshold()))
        .all()
}

/// The contact between two rotated rectangles, `None` when they do not collide. The normal points from
/// `a` to `b` along the edge normal of least overlap.
///
/// ```
/// use bevy::math::{Rot2, Vec2};
/// use bevy_rect_collision::geometry::*;
///
/// let a = WorldRotatedRect::new(Vec2::ZERO, Vec2::splat(1.0), Rot2::FRAC_PI_4);
/// let b = WorldRotatedRect::new(Vec2::new(1.0, 1.0), Vec2::splat(1.0), Rot2::FRAC_PI_4);
/// let contact = contact_rotated_rect_rotated_rect(&a, &b, OverlapMode::Closed).unwrap();
/// // Along the diagonal the centres are √2 apart and the squares 2 wide.
/// assert!((contact.depth - (2.0 - 2f32.sqrt())).abs() < 1e-5);
/// ```
#[inline]
pub fn contact_rotated_rect_rotated_rect(
    a: &WorldRotatedRect,
    b: &WorldRotatedRect,
    mode: OverlapMode,
) -> Option<Contact> {
    let axes = axes_overlap(a, b);
    if !axes.overlap.cmpge(Vec4::splat(mode.threshold())).all() {
        return None;
    }
    let axis = |index: usize, direction: Vec2| AxisOverlap {
        axis: direction,
        offset: axes.offset[index],
        overlap: axes.overlap[index],
    };
    Some(least_overlap([
        axis(0, a.axis_x()),
        axis(1, a.axis_y()),
        axis(2, b.axis_x()),
        axis(3, b.axis_y()),
    ]))
}

#[cfg(test)]
mod tests {
    use bevy::math::Rot2;

    use super::*;
    use crate::geometry::testing::{NEAR, angles, assert_collides, assert_near};

    fn rect(center: Vec2, half: Vec2, rotation: Rot2) -> WorldRotatedRect {
        WorldRotatedRect::new(center, half, rotation)
    }

    /// A 3 × 1 bar at the origin turned by `rotation`, and where a second bar turned the same way first
    /// touches it along the first bar's own y axis.
    fn bar_and_touch(rotation: Rot2) -> (WorldRotatedRect, Vec2) {
        let a = rect(Vec2::ZERO, Vec2::new(1.5, 0.5), rotation);
        (a, a.axis_y() * 1.0)
    }

    #[test]
    fn separated_at_every_angle() {
        for (angle, rotation) in angles() {
            let (a, touch) = bar_and_touch(rotation);
            let b = rect(touch + a.axis_y() * NEAR, a.half_size, rotation);
            assert_collides(a, b, OverlapMode::Closed, false, angle);
        }
    }

    #[test]
    fn separated_with_overlapping_bounding_boxes() {
        // Two thin bars crossing the same bounding region, parallel, a small gap apart on the diagonal.
        let a = rect(Vec2::ZERO, Vec2::new(3.0, 0.1), Rot2::FRAC_PI_4);
        let b = rect(
            Vec2::new(-0.2, 0.2) * 1.5,
            Vec2::new(3.0, 0.1),
            Rot2::FRAC_PI_4,
        );
        assert!(
            (a.bounding_half_size() + b.bounding_half_size() - (b.center - a.center).abs())
                .cmpgt(Vec2::ZERO)
                .all(),
            "the bounding boxes overlap"
        );
        assert_collides(a, b, OverlapMode::Closed, false, "parallel diagonal bars");
    }

    #[test]
    fn touching_edge_collides_at_right_angles() {
        for rotation in [Rot2::IDENTITY, Rot2::FRAC_PI_2] {
            let (a, touch) = bar_and_touch(rotation);
            let b = rect(touch + a.axis_x() * 0.7, a.half_size, rotation);
            let contact = assert_collides(a, b, OverlapMode::Closed, true, "shared edge").unwrap();
            assert_eq!(contact.depth, 0.0, "touching has zero depth");
            assert_near(contact.normal, a.axis_y(), "normal from a to b");
            assert_collides(
                a,
                b,
                OverlapMode::InteriorOnly,
                false,
                "shared edge, interior only",
            );
        }
    }

    #[test]
    fn touching_corner_collides_at_45_degrees() {
        // A diamond's right corner on an upright square's left edge: exact in the square's frame.
        let diamond = rect(Vec2::ZERO, Vec2::splat(1.0), Rot2::FRAC_PI_4);
        let reach = diamond.bounding_half_size().x + 0.5;
        let square = rect(Vec2::new(reach, 0.3), Vec2::splat(0.5), Rot2::IDENTITY);
        let contact =
            assert_collides(diamond, square, OverlapMode::Closed, true, "corner on edge").unwrap();
        assert_eq!(contact.depth, 0.0, "touching has zero depth");
        let apart = rect(
            Vec2::new(reach + NEAR, 0.3),
            Vec2::splat(0.5),
            Rot2::IDENTITY,
        );
        assert_collides(
            diamond,
            apart,
            OverlapMode::Closed,
            false,
            "corner just off the edge",
        );
    }

    #[test]
    fn touching_corner_to_corner_at_right_angles() {
        let a = rect(Vec2::ZERO, Vec2::new(1.5, 0.5), Rot2::FRAC_PI_2);
        let b = rect(Vec2::new(1.0, 3.0), Vec2::new(1.5, 0.5), Rot2::FRAC_PI_2);
        assert_collides(a, b, OverlapMode::Closed, true, "corner to corner");
        assert_collides(
            a,
            b,
            OverlapMode::InteriorOnly,
            false,
            "corner to corner, interior only",
        );
    }

    #[test]
    fn near_touching_is_decided_at_the_boundary() {
        for (angle, rotation) in angles() {
            let (a, touch) = bar_and_touch(rotation);
            let inside = rect(touch - a.axis_y() * NEAR, a.half_size, rotation);
            let outside = rect(touch + a.axis_y() * NEAR, a.half_size, rotation);
            assert_collides(a, inside, OverlapMode::Closed, true, angle);
            assert_collides(a, outside, OverlapMode::Closed, false, angle);
        }
    }

    #[test]
    fn overlapping_crossed_bars_collide() {
        for (angle, rotation) in angles() {
            let a = rect(Vec2::ZERO, Vec2::new(2.0, 0.2), rotation);
            let b = rect(
                Vec2::new(0.1, 0.1),
                Vec2::new(2.0, 0.2),
                rotation * Rot2::FRAC_PI_2,
            );
            let contact = assert_collides(a, b, OverlapMode::Closed, true, angle).unwrap();
            assert!(
                contact.depth > 0.2,
                "{angle}: a crossing is deep, got {}",
                contact.depth
            );
        }
    }

    #[test]
    fn contained_collides_at_every_angle() {
        for (angle, rotation) in angles() {
            let a = rect(Vec2::ZERO, Vec2::new(2.0, 1.0), rotation);
            let b = rect(a.axis_x() * 0.5, Vec2::splat(0.2), Rot2::radians(0.4));
            let contact = assert_collides(a, b, OverlapMode::Closed, true, angle).unwrap();
            // Leaving through a's nearer long side: 1 plus b's extent along a's y axis.
            assert!(contact.depth > 1.0, "{angle}: depth {}", contact.depth);
        }
    }

    #[test]
    fn swapped_arguments_negate_normal() {
        let a = rect(Vec2::ZERO, Vec2::new(1.5, 0.5), Rot2::radians(0.3));
        let b = rect(
            Vec2::new(1.0, 0.9),
            Vec2::new(1.0, 0.5),
            Rot2::radians(-0.5),
        );
        let ab = contact_rotated_rect_rotated_rect(&a, &b, OverlapMode::Closed).unwrap();
        let ba = contact_rotated_rect_rotated_rect(&b, &a, OverlapMode::Closed).unwrap();
        assert_near(
            ab.normal,
            -ba.normal,
            "swapping the arguments flips the normal",
        );
        assert!((ab.depth - ba.depth).abs() < 1e-6, "same depth both ways");
    }

    #[test]
    fn agrees_with_the_axis_aligned_test_when_unrotated() {
        let a = rect(Vec2::ZERO, Vec2::new(1.5, 0.5), Rot2::IDENTITY);
        for x in [-3.1, -3.0, -2.0, 0.0, 2.9, 3.0, 3.05] {
            let b = rect(Vec2::new(x, 0.9), Vec2::new(1.5, 0.4), Rot2::IDENTITY);
            let expected = crate::geometry::intersection_test_rect_rect(
                &crate::geometry::WorldRect::new(a.center, a.half_size),
                &crate::geometry::WorldRect::new(b.center, b.half_size),
                OverlapMode::Closed,
            );
            assert_collides(a, b, OverlapMode::Closed, expected, "unrotated");
        }
    }
}
