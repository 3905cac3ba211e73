//! The result of a contact query.

use bevy::math::{Vec2, Vec4, Vec4Swizzles};

/// How two touching or overlapping shapes meet.
///
/// Every `contact_shape1_shape2` function returns one, or `None` when the shapes do not collide.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Unit vector in world space, pointing from the first shape towards the second.
    ///
    /// Moving the second shape by `normal * depth` (or the first by `-normal * depth`) separates them
    /// until they only touch.
    pub normal: Vec2,
    /// The length of the smallest translation that separates the shapes, in world units.
    ///
    /// Zero when they only touch, never negative.
    pub depth: f32,
}

impl Contact {
    /// The same contact seen from the other shape: the normal is negated, the depth kept.
    ///
    /// ```
    /// use bevy::math::Vec2;
    /// use bevy_rect_collision::geometry::Contact;
    ///
    /// let contact = Contact { normal: Vec2::X, depth: 0.5 };
    /// assert_eq!(contact.flipped(), Contact { normal: -Vec2::X, depth: 0.5 });
    /// ```
    #[inline]
    #[must_use]
    pub fn flipped(self) -> Self {
        Self {
            normal: -self.normal,
            depth: self.depth,
        }
    }
}

/// One candidate separating axis of a box pair: the unit axis, the centres' offset projected on it
/// (second minus first), and how far the two projections overlap along it.
#[derive(Clone, Copy)]
pub(crate) struct AxisOverlap {
    pub axis: Vec2,
    pub offset: f32,
    pub overlap: f32,
}

/// The contact of two overlapping convex polygons from their edge-normal axes.
///
/// The smallest translation that separates two convex polygons lies along one of their edge normals,
/// so the axis of least overlap gives both the depth and the normal. The normal points along the
/// centres' offset, from the first shape to the second (+axis when the offset is zero). Ties go to
/// the earlier axis.
///
/// Without branches: which axis is least, and the offset's sign, follow the shapes, which come in no
/// order a branch predictor could learn. Each axis is one vector, and the least is kept by a blend. The
/// comparisons are made in the vector lanes as well: each axis waits for the one before, and a
/// comparison of two scalars spread into a mask afterwards makes each such step longer. The
/// `collision_bench` workload W1 justifies both.
#[inline]
pub(crate) fn least_overlap<const N: usize>(axes: [AxisOverlap; N]) -> Contact {
    let lanes = |axis: &AxisOverlap| Vec4::new(axis.axis.x, axis.axis.y, axis.offset, axis.overlap);
    let mut best = lanes(&axes[0]);
    for candidate in &axes[1..] {
        let candidate = lanes(candidate);
        best = Vec4::select(candidate.wwww().cmplt(best.wwww()), candidate, best);
    }
    // -1 when the offset is negative, 1 otherwise (also for -0 and NaN), chosen without a branch.
    let negative = best.zzzz().cmplt(Vec4::ZERO);
    let sign = Vec4::select(negative, Vec4::NEG_ONE, Vec4::ONE);
    Contact {
        normal: (best * sign).xy(),
        depth: best.w.max(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`least_overlap`] as it was written with branches: the first axis of least overlap, and the
    /// normal's sign from a comparison of the offset.
    fn least_overlap_with_branches<const N: usize>(axes: [AxisOverlap; N]) -> Contact {
        let mut best = &axes[0];
        for candidate in &axes[1..] {
            if candidate.overlap < best.overlap {
                best = candidate;
            }
        }
        let sign = if best.offset < 0.0 { -1.0 } else { 1.0 };
        Contact {
            normal: best.axis * sign,
            depth: best.overlap.max(0.0),
        }
    }

    #[test]
    fn least_overlap_has_the_bits_of_the_version_with_branches() {
        let mut next = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        // Few distinct values, so that ties are common, with zeros of both signs, NaN and infinities.
        let values = [
            -2.0,
            -0.5,
            -0.0,
            0.0,
            0.5,
            1.0,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let mut pick = || values[(next() % values.len() as u64) as usize];
        let bits = |contact: Contact| {
            [contact.normal.x, contact.normal.y, contact.depth].map(f32::to_bits)
        };
        let mut signs_seen = [false; 2];
        for _ in 0..100_000 {
            let mut axis = || AxisOverlap {
                axis: Vec2::new(pick(), pick()),
                offset: pick(),
                overlap: pick(),
            };
            let four = [axis(), axis(), axis(), axis()];
            let expected = least_overlap_with_branches(four);
            assert_eq!(bits(least_overlap(four)), bits(expected));
            let two = [four[0], four[1]];
            assert_eq!(
                bits(least_overlap(two)),
                bits(least_overlap_with_branches(two))
            );
            signs_seen[usize::from(expected.normal.x.is_sign_negative())] = true;
        }
        assert_eq!(signs_seen, [true, true]);
    }
}
