//! The result of a contact query.

use bevy::math::Vec2;

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
pub(crate) struct AxisOverlap {
    pub axis: Vec2,
    pub offset: f32,
    pub overlap: f32,
}

/// The contact of two overlapping convex polygons from their edge-normal axes.
///
/// The smallest translation that separates two convex polygons lies along one of their edge normals,
/// so the axis of least overlap gives both the depth and the normal. The normal points along the
/// centres' offset, from the first shape to the second (+axis when the offset is zero).
#[inline]
pub(crate) fn least_overlap<const N: usize>(axes: [AxisOverlap; N]) -> Contact {
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
