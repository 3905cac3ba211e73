//! The narrow phase on arbitrary shapes, NaN, infinities and unnormalized rotations included: no
//! panic, symmetric in its arguments, and the boolean test agreeing with the contact query, in both
//! overlap modes; a contact's normal is unit length and its depth finite whenever the inputs are
//! moderate.
#![no_main]

use arbitrary::Arbitrary;
use bevy::math::{Rot2, Vec2};
use bevy_rect_collision::geometry::ConvexPolygon;
use bevy_rect_collision::geometry::*;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct RawShape {
    kind: u8,
    center: (f32, f32),
    size: (f32, f32),
    rotation: (f32, f32),
}

impl RawShape {
    fn shape(&self) -> WorldShape {
        let center = Vec2::new(self.center.0, self.center.1);
        let half_size = Vec2::new(self.size.0, self.size.1).abs();
        match self.kind % 5 {
            0 => WorldShape::Rect(WorldRect { center, half_size }),
            1 => WorldShape::RotatedRect(WorldRotatedRect {
                center,
                half_size,
                rotation: Rot2 {
                    cos: self.rotation.0,
                    sin: self.rotation.1,
                },
            }),
            2 => WorldShape::Circle(WorldCircle {
                center,
                radius: half_size.x,
            }),
            3 => WorldShape::Capsule(WorldCapsule {
                center,
                half_length: half_size.y,
                radius: half_size.x,
                rotation: Rot2 {
                    cos: self.rotation.0,
                    sin: self.rotation.1,
                },
            }),
            // A pentagon: a box's corners and a point above it, turned; a circle where they
            // give no hull.
            _ => {
                let rotation = Rot2 {
                    cos: self.rotation.0,
                    sin: self.rotation.1,
                };
                let corners = [
                    (-1.0, -1.0),
                    (1.0, -1.0),
                    (1.0, 1.0),
                    (0.0, 1.5),
                    (-1.0, 1.0),
                ];
                let points =
                    corners.map(|(x, y)| center + rotation * (half_size * Vec2::new(x, y)));
                match ConvexPolygon::hull(&points) {
                    Ok(polygon) => WorldShape::Polygon(polygon),
                    Err(_) => WorldShape::Circle(WorldCircle {
                        center,
                        radius: half_size.x,
                    }),
                }
            }
        }
    }

    /// Finite, not huge, with a unit rotation: where the contact must be well formed.
    fn is_moderate(&self) -> bool {
        [self.center.0, self.center.1, self.size.0, self.size.1]
            .iter()
            .all(|v| v.is_finite() && v.abs() < 1e6)
            && self.rotation.0.is_finite()
            && self.rotation.1.is_finite()
            && ((self.rotation.0 * self.rotation.0 + self.rotation.1 * self.rotation.1) - 1.0).abs()
                < 1e-4
    }
}

fuzz_target!(|input: (RawShape, RawShape)| {
    let (a, b) = (input.0.shape(), input.1.shape());
    for mode in [OverlapMode::Closed, OverlapMode::InteriorOnly] {
        let hit = a.intersects(&b, mode);
        assert_eq!(hit, b.intersects(&a, mode), "not symmetric: {a:?} {b:?}");
        let ab = a.contact(&b, mode);
        let ba = b.contact(&a, mode);
        assert_eq!(
            hit,
            ab.is_some(),
            "boolean and contact disagree: {a:?} {b:?}"
        );
        assert_eq!(
            hit,
            ba.is_some(),
            "boolean and mirrored contact disagree: {a:?} {b:?}"
        );
        if let Some(contact) = ab
            && input.0.is_moderate()
            && input.1.is_moderate()
        {
            assert!(
                contact.depth.is_finite() && contact.depth >= 0.0,
                "bad depth {contact:?}"
            );
            assert!(
                (contact.normal.length() - 1.0).abs() < 1e-3,
                "normal not unit: {contact:?}"
            );
        }
    }
});
