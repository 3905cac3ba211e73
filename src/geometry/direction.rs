//! The direction and length of a vector, exact at every finite scale.

use bevy::math::Vec2;

/// The unit vector along `offset` and the length of `offset`, `None` when `offset` is zero or not finite.
///
/// Dividing by the square root of the squared length loses the direction at the extremes: below about
/// 1e-19 the squares are subnormal and keep only a few bits, so the quotient is not unit length, and
/// above about 1e19 they overflow. Offsets there are first scaled by 2^100 or 2^-100, which is exact,
/// in a function out of line. The others take the square root of the squared length as it is, with
/// the bits that scaling by 1 and measuring again would give, so that the square root need not wait
/// for a scale to be chosen. A zero offset (a circle's centre inside a box, as common as not) returns
/// at once rather than going out of line (`collision_bench` W1).
#[inline]
pub(crate) fn direction_and_length(offset: Vec2) -> Option<(Vec2, f32)> {
    let length_squared = offset.length_squared();
    // Neither subnormal nor overflowing (NaN fails both comparisons): the square root of the squared
    // length as it is.
    if (f32::MIN_POSITIVE..f32::INFINITY).contains(&length_squared) {
        let length = length_squared.sqrt();
        return Some((offset / length, length));
    }
    if offset == Vec2::ZERO {
        return None;
    }
    rescaled_direction_and_length(offset, length_squared)
}

/// [`direction_and_length`] where the squared length is subnormal, zero (for an offset that is not),
/// infinite or NaN.
#[inline(never)]
fn rescaled_direction_and_length(offset: Vec2, length_squared: f32) -> Option<(Vec2, f32)> {
    let (scale, unscale) = if length_squared < f32::MIN_POSITIVE {
        (2f32.powi(100), 2f32.powi(-100))
    } else {
        (2f32.powi(-100), 2f32.powi(100))
    };
    let scaled = offset * scale;
    let scaled_length = scaled.length();
    (scaled_length > 0.0 && scaled_length.is_finite())
        .then(|| (scaled / scaled_length, scaled_length * unscale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_and_length_stay_exact_at_subnormal_and_huge_scales() {
        for scale in [1.0, 1e-20, 1e-30, 1e-38, 1e-42, 1e-45, 1e20, 1e30, 3e38] {
            for direction in [
                Vec2::X,
                -Vec2::Y,
                Vec2::new(0.6, -0.8),
                Vec2::new(1.0, 1e-3),
            ] {
                let offset = direction * scale;
                let (unit, length) = direction_and_length(offset).unwrap();
                // Oracle: the same offset (as rounded to f32) in f64, where nothing underflows.
                let (x, y) = (f64::from(offset.x), f64::from(offset.y));
                let exact_length = x.hypot(y);
                let exact_unit = Vec2::new((x / exact_length) as f32, (y / exact_length) as f32);
                assert!(
                    (unit - exact_unit).length() < 1e-6,
                    "{offset:?} gave {unit:?}"
                );
                // A subnormal length itself keeps few bits: allow its last place, 1.4e-45.
                let last_place = f64::from(f32::from_bits(1));
                assert!(
                    (f64::from(length) - exact_length).abs() <= 1e-6 * exact_length + last_place,
                    "{offset:?} gave length {length}"
                );
            }
        }
        // The fuzzer's case: an offset whose squared length is subnormal.
        let (unit, _) = direction_and_length(Vec2::new(0.0, -5.459392e-23)).unwrap();
        assert_eq!(unit, -Vec2::Y);
    }

    /// The plain form of the helper, the reference it must match: every offset rescaled (by 1 where
    /// nothing under- or overflows), then measured again.
    fn rescaling_every_offset(offset: Vec2) -> Option<(Vec2, f32)> {
        let length_squared = offset.length_squared();
        let (scale, unscale) = if length_squared < f32::MIN_POSITIVE {
            (2f32.powi(100), 2f32.powi(-100))
        } else if length_squared == f32::INFINITY {
            (2f32.powi(-100), 2f32.powi(100))
        } else {
            (1.0, 1.0)
        };
        let scaled = offset * scale;
        let scaled_length = scaled.length();
        (scaled_length > 0.0 && scaled_length.is_finite())
            .then(|| (scaled / scaled_length, scaled_length * unscale))
    }

    #[test]
    fn direction_and_length_have_the_bits_of_rescaling_every_offset() {
        let bits = |result: Option<(Vec2, f32)>| {
            result.map(|(unit, length)| [unit.x, unit.y, length].map(f32::to_bits))
        };
        let mut next = crate::test_rng::xorshift(0xd1ec_7104);
        let edges = [
            0.0,
            -0.0,
            1.0,
            -3.5,
            1e-20,
            -1e-30,
            1e-45,
            f32::MIN_POSITIVE,
            1e19,
            -1e30,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
        ];
        let mut value = || {
            let pick = next();
            if pick.is_multiple_of(4) {
                edges[(pick / 4 % edges.len() as u64) as usize]
            } else {
                // Any finite f32 but NaN, from its bits: every exponent, subnormals included.
                let random = f32::from_bits((pick >> 16) as u32);
                if random.is_finite() { random } else { 1.0 }
            }
        };
        for _ in 0..200_000 {
            let offset = Vec2::new(value(), value());
            assert_eq!(
                bits(direction_and_length(offset)),
                bits(rescaling_every_offset(offset)),
                "{offset:?}"
            );
        }
    }

    #[test]
    fn direction_and_length_reject_zero_and_non_finite_offsets() {
        for offset in [
            Vec2::ZERO,
            Vec2::new(f32::NAN, 1.0),
            Vec2::new(f32::INFINITY, 0.0),
        ] {
            assert_eq!(direction_and_length(offset), None, "{offset:?}");
        }
    }
}
