//! Whether touching counts as colliding.

use bevy::math::Vec2;

/// Whether shapes that only touch collide.
///
/// Every test in [`crate::geometry`] takes this as a parameter, so one copy of each algorithm serves both
/// readings.
///
/// ```
/// use bevy::math::Vec2;
/// use bevy_rect_collision::geometry::{OverlapMode, WorldRect, intersection_test_rect_rect};
///
/// // Two unit squares sharing the edge x = 1.
/// let a = WorldRect::new(Vec2::new(0.5, 0.5), Vec2::splat(0.5));
/// let b = WorldRect::new(Vec2::new(1.5, 0.5), Vec2::splat(0.5));
/// assert!(intersection_test_rect_rect(&a, &b, OverlapMode::Closed));
/// assert!(!intersection_test_rect_rect(&a, &b, OverlapMode::InteriorOnly));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OverlapMode {
    /// Shapes are closed sets: a single shared point is a collision (the reading of "Rotated rectangle
    /// intersection", a Google Answers thread).
    #[default]
    Closed,
    /// Only an overlap of positive area collides: shapes that share only an edge or a corner do not
    /// (the same thread's remark on pixel games).
    InteriorOnly,
}

impl OverlapMode {
    /// Whether a signed overlap along one axis counts as overlapping.
    ///
    /// `overlap` is positive when the shapes' projections overlap, zero when they touch and negative when
    /// there is a gap. NaN never overlaps, so a shape poisoned by bad input collides with nothing.
    #[inline]
    pub(crate) fn admits(self, overlap: f32) -> bool {
        overlap >= self.threshold()
    }

    /// Whether both overlaps of a pair of axes count, without a branch per axis.
    #[inline]
    pub(crate) fn admits_both(self, overlaps: Vec2) -> bool {
        overlaps.cmpge(Vec2::splat(self.threshold())).all()
    }

    /// The least overlap that counts: zero, or the smallest positive f32 for an interior overlap, so that
    /// one `>=` decides both modes (and is false for NaN) with no branch on the mode.
    #[inline]
    pub(crate) fn threshold(self) -> f32 {
        match self {
            OverlapMode::Closed => 0.0,
            // `x > 0.0` holds exactly when `x >= f32::from_bits(1)`, the smallest subnormal.
            OverlapMode::InteriorOnly => f32::from_bits(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_at_least_zero_when_closed_and_above_zero_for_the_interior_only() {
        let overlaps = [
            f32::NEG_INFINITY,
            -1.0,
            -f32::from_bits(1),
            -0.0,
            0.0,
            f32::from_bits(1),
            f32::MIN_POSITIVE,
            1.0,
            f32::INFINITY,
            f32::NAN,
        ];
        for overlap in overlaps {
            assert_eq!(
                OverlapMode::Closed.admits(overlap),
                overlap >= 0.0,
                "{overlap:e}"
            );
            assert_eq!(
                OverlapMode::InteriorOnly.admits(overlap),
                overlap > 0.0,
                "{overlap:e}"
            );
            for mode in [OverlapMode::Closed, OverlapMode::InteriorOnly] {
                let both = mode.admits(overlap);
                assert_eq!(mode.admits_both(Vec2::new(overlap, 1.0)), both, "{mode:?}");
                assert_eq!(mode.admits_both(Vec2::new(1.0, overlap)), both, "{mode:?}");
                assert!(!mode.admits_both(Vec2::new(overlap, f32::NAN)), "{mode:?}");
            }
        }
    }
}
