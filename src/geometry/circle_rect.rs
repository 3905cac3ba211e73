//! Circle against axis-aligned rectangle, and the clamp both circle-rectangle pairs share.

use bevy::math::{BVec4A, Vec2, Vec4, Vec4Swizzles};

use super::direction::direction_and_length;
use super::{Contact, OverlapMode, WorldCircle, WorldRect};

/// Whether a circle centred at `center`, in a box's frame, meets the box of `half_size` centred at the
/// origin: clamp the centre into the box and compare squared distances, as
/// "Circle and Rotated Rectangle Collision Detection" does, with no square root.
#[inline]
pub(crate) fn intersection_test_box_circle_local(
    half_size: Vec2,
    center: Vec2,
    radius: f32,
    mode: OverlapMode,
) -> bool {
    let closest = center.clamp(-half_size, half_size);
    mode.admits(radius * radius - center.distance_squared(closest))
}

/// The contact of a box of `half_size` centred at the origin and a circle centred at `center`, both in the
/// box's frame; the normal points from the box to the circle.
#[inline]
pub(crate) fn contact_box_circle_local(
    half_size: Vec2,
    center: Vec2,
    radius: f32,
    mode: OverlapMode,
) -> Option<Contact> {
    let closest = center.clamp(-half_size, half_size);
    let outside = center - closest;
    let distance_squared = outside.length_squared();
    if !mode.admits(radius * radius - distance_squared) {
        return None;
    }
    if let Some((normal, distance)) = direction_and_length(outside) {
        // The centre is outside the box: the closest point is on the boundary.
        return Some(Contact {
            normal,
            depth: (radius - distance).max(0.0),
        });
    }
    // The centre is inside the box or on its boundary: push out through the nearest side.
    // Which side, and the sign, chosen without a branch (`collision_bench` W1). Choosing between this
    // contact and the one from outside stays a branch: without it, every touching pair would pay for
    // the square root and the division.
    let to_side = half_size - center.abs();
    // -1 where the centre's coordinate is negative, 1 otherwise (also for -0 and NaN).
    let signs = Vec2::select(center.cmplt(Vec2::ZERO), Vec2::NEG_ONE, Vec2::ONE);
    let (along_x, along_y) = (
        Vec4::new(signs.x, 0.0, radius + to_side.x, 0.0),
        Vec4::new(0.0, signs.y, radius + to_side.y, 0.0),
    );
    let side = Vec4::select(BVec4A::splat(to_side.x < to_side.y), along_x, along_y);
    Some(Contact {
        normal: side.xy(),
        depth: side.z.max(0.0),
    })
}

/// Whether an axis-aligned rectangle and a circle collide: the rectangle's point closest to the centre is
/// within the radius ("Circle and Rotated Rectangle Collision Detection" with no rotation).
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::*;
///
/// let rect = WorldRect::new(Vec2::ZERO, Vec2::splat(1.0));
/// // Tangent to the right side.
/// assert!(intersection_test_rect_circle(&rect, &WorldCircle::new(Vec2::new(1.5, 0.0), 0.5), OverlapMode::Closed));
/// // Near the corner but outside: the corner is √2·0.5 ≈ 0.707 away.
/// assert!(!intersection_test_rect_circle(&rect, &WorldCircle::new(Vec2::new(1.5, 1.5), 0.7), OverlapMode::Closed));
/// ```
#[inline]
pub fn intersection_test_rect_circle(a: &WorldRect, b: &WorldCircle, mode: OverlapMode) -> bool {
    intersection_test_box_circle_local(a.half_size, b.center - a.center, b.radius, mode)
}

/// Whether a circle and an axis-aligned rectangle collide: the mirror of [`intersection_test_rect_circle`].
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::*;
///
/// let circle = WorldCircle::new(Vec2::ZERO, 1.0);
/// let rect = WorldRect::new(Vec2::new(0.0, 2.0), Vec2::splat(1.0));
/// assert!(intersection_test_circle_rect(&circle, &rect, OverlapMode::Closed));
/// assert!(!intersection_test_circle_rect(&circle, &rect, OverlapMode::InteriorOnly));
/// ```
#[inline]
pub fn intersection_test_circle_rect(a: &WorldCircle, b: &WorldRect, mode: OverlapMode) -> bool {
    intersection_test_rect_circle(b, a, mode)
}

/// The contact between an axis-aligned rectangle `a` and a circle `b`, `None` when they do not collide.
/// The normal points from the rectangle to the circle.
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::*;
///
/// let rect = WorldRect::new(Vec2::ZERO, Vec2::splat(1.0));
/// let circle = WorldCircle::new(Vec2::new(0.0, -1.25), 0.5);
/// let contact = contact_rect_circle(&rect, &circle, OverlapMode::Closed).unwrap();
/// assert_eq!(contact.normal, -Vec2::Y);
/// assert!((contact.depth - 0.25).abs() < 1e-6);
/// ```
#[inline]
pub fn contact_rect_circle(a: &WorldRect, b: &WorldCircle, mode: OverlapMode) -> Option<Contact> {
    contact_box_circle_local(a.half_size, b.center - a.center, b.radius, mode)
}

/// The contact between a circle `a` and an axis-aligned rectangle `b`: the mirror of
/// [`contact_rect_circle`], with the normal pointing from the circle to the rectangle.
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::*;
///
/// let circle = WorldCircle::new(Vec2::new(-1.25, 0.0), 0.5);
/// let rect = WorldRect::new(Vec2::ZERO, Vec2::splat(1.0));
/// let contact = contact_circle_rect(&circle, &rect, OverlapMode::Closed).unwrap();
/// assert_eq!(contact.normal, Vec2::X);
/// ```
#[inline]
pub fn contact_circle_rect(a: &WorldCircle, b: &WorldRect, mode: OverlapMode) -> Option<Contact> {
    contact_rect_circle(b, a, mode).map(Contact::flipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::testing::{NEAR, assert_collides, assert_near};

    fn rect() -> WorldRect {
        WorldRect::new(Vec2::ZERO, Vec2::new(2.0, 1.0))
    }

    #[test]
    fn separated_beside_a_side_and_a_corner() {
        let r = rect();
        let right = WorldCircle::new(Vec2::new(2.5 + NEAR, 0.0), 0.5);
        assert_collides(r, right, OverlapMode::Closed, false, "right of the side");
        let above = WorldCircle::new(Vec2::new(0.0, 1.5 + NEAR), 0.5);
        assert_collides(r, above, OverlapMode::Closed, false, "above the top (90°)");
        // At 45° off the corner (2, 1): 0.5 from the corner along the diagonal, radius a little less.
        let diagonal = Vec2::new(2.0, 1.0) + Vec2::splat(0.5_f32.sqrt() * 0.5);
        let corner = WorldCircle::new(diagonal, 0.5 - NEAR);
        assert_collides(
            r,
            corner,
            OverlapMode::Closed,
            false,
            "off the corner (45°)",
        );
    }

    #[test]
    fn squared_distance_underflow_never_gives_a_negative_depth() {
        // Found by the fuzzer: the centre lies 1.2e-38 beyond the side, its square underflows to zero,
        // and the inside branch must still give a depth of zero or more.
        let circle = WorldCircle::new(Vec2::new(1.2212327e-38, 0.0), 3e-45);
        let rect = WorldRect::new(Vec2::new(0.0, 3e-45), Vec2::new(3.229e-42, 1.8402e-40));
        for contact in [
            contact_circle_rect(&circle, &rect, OverlapMode::Closed),
            contact_rect_circle(&rect, &circle, OverlapMode::Closed),
        ]
        .into_iter()
        .flatten()
        {
            assert!(
                contact.depth >= 0.0 && contact.depth.is_finite(),
                "depth {contact:?}"
            );
            assert!(
                (contact.normal.length() - 1.0).abs() < 1e-6,
                "unit normal {contact:?}"
            );
        }
    }

    #[test]
    fn subnormal_offset_still_gives_a_unit_normal() {
        // Found by the CI fuzz run: the centre lies 5.5e-23 below a flat box, the squared distance
        // is subnormal with a few bits left, and dividing by its root gave the normal (0, 1.03).
        let circle = WorldCircle::new(Vec2::new(1.4e-43, 0.0), 7.689198e-6);
        let rect = WorldRect::new(Vec2::new(0.0, 5.459392e-23), Vec2::new(1.0286074e-38, 0.0));
        let contact = contact_circle_rect(&circle, &rect, OverlapMode::Closed).unwrap();
        assert_eq!(contact.normal, Vec2::Y, "from the circle up to the box");
        assert_eq!(contact.depth, 7.689198e-6);
        let mirrored = contact_rect_circle(&rect, &circle, OverlapMode::Closed).unwrap();
        assert_eq!(mirrored.normal, -Vec2::Y);
    }

    /// The inside case written with branches: the reference the branch-free choices must match.
    fn pushed_out_by_branches(half_size: Vec2, center: Vec2, radius: f32) -> Contact {
        let to_side = half_size - center.abs();
        let sign = |value: f32| if value < 0.0 { -1.0 } else { 1.0 };
        if to_side.x < to_side.y {
            Contact {
                normal: Vec2::new(sign(center.x), 0.0),
                depth: (radius + to_side.x).max(0.0),
            }
        } else {
            Contact {
                normal: Vec2::new(0.0, sign(center.y)),
                depth: (radius + to_side.y).max(0.0),
            }
        }
    }

    #[test]
    fn centre_inside_the_box_has_the_bits_of_the_version_with_branches() {
        let mut next = crate::test_rng::xorshift(0x1d5e_b0c5);
        // Few values, so that ties between the sides and zeros of both signs are common.
        let values: [f32; 8] = [-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0];
        let mut pick = || values[(next() % values.len() as u64) as usize];
        let bits = |contact: Contact| {
            [contact.normal.x, contact.normal.y, contact.depth].map(f32::to_bits)
        };
        let mut inside = 0;
        for _ in 0..50_000 {
            let half_size = Vec2::new(pick().abs(), pick().abs());
            let center = Vec2::new(pick(), pick());
            let radius = pick().abs();
            if center.abs().cmpgt(half_size).any() {
                continue;
            }
            inside += 1;
            let contact = contact_box_circle_local(half_size, center, radius, OverlapMode::Closed);
            assert_eq!(
                contact.map(bits),
                Some(bits(pushed_out_by_branches(half_size, center, radius))),
                "{half_size:?} {center:?} {radius}"
            );
        }
        assert!(inside > 10_000, "enough centres inside: {inside}");
    }

    #[test]
    fn tangent_to_a_side_collides() {
        let r = rect();
        let right = WorldCircle::new(Vec2::new(2.5, 0.3), 0.5);
        let contact =
            assert_collides(r, right, OverlapMode::Closed, true, "tangent right").unwrap();
        assert_eq!(
            contact.normal,
            Vec2::X,
            "the normal points from the rectangle to the circle"
        );
        assert_eq!(contact.depth, 0.0, "tangent has zero depth");
        let top = WorldCircle::new(Vec2::new(-1.0, 1.5), 0.5);
        assert_collides(r, top, OverlapMode::Closed, true, "tangent top");
        assert_collides(
            r,
            top,
            OverlapMode::InteriorOnly,
            false,
            "tangent top, interior only",
        );
    }

    #[test]
    fn touching_a_corner_collides() {
        // Centre 3-4-5 away from the corner (2, 1): exact in f32.
        let circle = WorldCircle::new(Vec2::new(2.0 + 0.3, 1.0 + 0.4), 0.5);
        let contact = assert_collides(rect(), circle, OverlapMode::Closed, true, "corner").unwrap();
        assert_near(
            contact.normal,
            Vec2::new(0.6, 0.8),
            "normal from the corner to the centre",
        );
        assert!(contact.depth.abs() < 1e-6, "depth {}", contact.depth);
    }

    #[test]
    fn box_corner_on_the_centre_collides() {
        let circle = WorldCircle::new(Vec2::new(2.0, 1.0), 0.5);
        let contact = assert_collides(
            rect(),
            circle,
            OverlapMode::Closed,
            true,
            "centre on corner",
        )
        .unwrap();
        assert!(
            (contact.depth - 0.5).abs() < 1e-6,
            "depth {}",
            contact.depth
        );
        assert_collides(
            rect(),
            circle,
            OverlapMode::InteriorOnly,
            true,
            "centre on corner, interior",
        );
    }

    #[test]
    fn overlapping_collides() {
        let circle = WorldCircle::new(Vec2::new(2.25, 0.0), 0.5);
        let contact =
            assert_collides(rect(), circle, OverlapMode::Closed, true, "overlap").unwrap();
        assert_eq!(contact.normal, Vec2::X, "out through the right side");
        assert!(
            (contact.depth - 0.25).abs() < 1e-6,
            "depth {}",
            contact.depth
        );
    }

    #[test]
    fn contained_both_ways_collides() {
        let inside = WorldCircle::new(Vec2::new(1.0, 0.2), 0.25);
        let contact =
            assert_collides(rect(), inside, OverlapMode::Closed, true, "circle in rect").unwrap();
        // Nearest side is the top: 1 - 0.2 = 0.8 away, plus the radius.
        assert_eq!(contact.normal, Vec2::Y, "out through the top");
        assert!(
            (contact.depth - 1.05).abs() < 1e-6,
            "depth {}",
            contact.depth
        );
        let around = WorldCircle::new(Vec2::ZERO, 10.0);
        assert_collides(rect(), around, OverlapMode::Closed, true, "rect in circle");
    }

    #[test]
    fn swapped_arguments_negate_normal() {
        let circle = WorldCircle::new(Vec2::new(2.2, 1.3), 0.5);
        let ab = contact_rect_circle(&rect(), &circle, OverlapMode::Closed).unwrap();
        let ba = contact_circle_rect(&circle, &rect(), OverlapMode::Closed).unwrap();
        assert_eq!(ab, ba.flipped(), "swapping the arguments flips the normal");
    }
}
