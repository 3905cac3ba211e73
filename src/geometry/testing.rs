//! Helpers shared by the geometry unit tests.

use bevy::math::{Rot2, Vec2};

use super::{Contact, OverlapMode, WorldShape};

/// How far past a boundary the near-touching cases move a shape. Larger than f32 rounding at these
/// sizes, far smaller than the shapes.
pub(crate) const NEAR: f32 = 1e-4;

/// The angles every pair is tested at: 0°, 90° and 45° (both with exact sines where f32 allows), and one
/// with no symmetry.
pub(crate) fn angles() -> [(&'static str, Rot2); 4] {
    [
        ("0°", Rot2::IDENTITY),
        ("90°", Rot2::FRAC_PI_2),
        ("45°", Rot2::FRAC_PI_4),
        ("0.7 rad", Rot2::radians(0.7)),
    ]
}

/// Asserts that `a` and `b` collide exactly when `expected`, in both argument orders, by the boolean test
/// and by the contact query, and that both orders report the same depth. Returns the contact of `a`
/// with `b`.
#[track_caller]
pub(crate) fn assert_collides(
    a: impl Into<WorldShape>,
    b: impl Into<WorldShape>,
    mode: OverlapMode,
    expected: bool,
    case: &str,
) -> Option<Contact> {
    let (a, b) = (a.into(), b.into());
    assert_eq!(
        a.intersects(&b, mode),
        expected,
        "{case}: intersects(a, b) should be {expected} in {mode:?}"
    );
    assert_eq!(
        b.intersects(&a, mode),
        expected,
        "{case}: intersects(b, a) should be {expected} in {mode:?}"
    );
    let ab = a.contact(&b, mode);
    let ba = b.contact(&a, mode);
    assert_eq!(
        ab.is_some(),
        expected,
        "{case}: contact(a, b) should be {expected}"
    );
    assert_eq!(
        ba.is_some(),
        expected,
        "{case}: contact(b, a) should be {expected}"
    );
    if let (Some(ab), Some(ba)) = (ab, ba) {
        assert!(
            (ab.depth - ba.depth).abs() <= 1e-5,
            "{case}: depth differs with the order: {} against {}",
            ab.depth,
            ba.depth
        );
        assert!(
            (ab.normal.length() - 1.0).abs() <= 1e-5,
            "{case}: the normal {:?} is not unit length",
            ab.normal
        );
    }
    ab
}

/// Asserts two vectors agree within `1e-5`.
#[track_caller]
pub(crate) fn assert_near(actual: Vec2, expected: Vec2, what: &str) {
    assert!(
        (actual - expected).length() <= 1e-5,
        "{what}: expected {expected:?}, got {actual:?}"
    );
}
