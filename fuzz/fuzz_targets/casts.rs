//! Shape casts on arbitrary shapes, directions and distances, NaN, infinities and unnormalized
//! rotations included: no panic; and on moderate inputs a hit lies within the reach, with a unit
//! normal and a finite point, at the distance the reverse cast finds.
#![no_main]

use arbitrary::Arbitrary;
use bevy::math::{Dir2, Rot2, Vec2};
use bevy_rect_collision::geometry::ConvexPolygon;
use bevy_rect_collision::geometry::*;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct RawShape {
    kind: u8,
    center: (f32, f32),
    size: (f32, f32),
    angle: f32,
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
                // Built from its parts: `Rot2::radians` asserts on a NaN angle.
                rotation: Rot2 {
                    cos: self.angle.cos(),
                    sin: self.angle.sin(),
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
                    cos: self.angle.cos(),
                    sin: self.angle.sin(),
                },
            }),
            // A pentagon: a box's corners and a point above it, turned; a circle where they
            // give no hull.
            _ => {
                let rotation = Rot2 {
                    cos: self.angle.cos(),
                    sin: self.angle.sin(),
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

    /// Finite, neither huge nor tiny: where a hit must be well formed.
    fn is_moderate(&self) -> bool {
        [self.center.0, self.center.1]
            .iter()
            .all(|v| v.is_finite() && v.abs() < 1e3)
            && [self.size.0, self.size.1]
                .iter()
                .all(|v| v.is_finite() && (1e-2..1e3).contains(&v.abs()))
            && self.angle.is_finite()
            && self.angle.abs() < 10.0
    }

    /// How big the shape is, for the tolerance.
    fn extent(&self) -> f32 {
        self.size.0.abs() + self.size.1.abs()
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    moving: RawShape,
    target: RawShape,
    direction: (f32, f32),
    max_distance: f32,
}

fuzz_target!(|input: Input| {
    let (moving, target) = (input.moving.shape(), input.target.shape());
    let Ok(direction) = Dir2::new(Vec2::new(input.direction.0, input.direction.1)) else {
        return;
    };
    let hit = shape_cast(&moving, direction, input.max_distance, &target);
    let moderate = input.moving.is_moderate()
        && input.target.is_moderate()
        && input.max_distance.is_finite()
        && input.max_distance.abs() < 1e4;
    let Some(hit) = hit.filter(|_| moderate) else {
        return;
    };
    assert!(
        (0.0..=input.max_distance).contains(&hit.distance),
        "a hit past the reach: {hit:?}"
    );
    assert!(
        (hit.normal.length() - 1.0).abs() < 1e-3,
        "normal not unit: {hit:?}"
    );
    assert!(hit.point.is_finite(), "point not finite: {hit:?}");
    // The target cast the other way meets the moving shape at the same distance.
    let reverse = shape_cast(&target, -direction, input.max_distance, &moving);
    let tolerance = 1e-3 * (1.0 + input.moving.extent() + input.target.extent() + hit.distance);
    if let Some(reverse) = reverse {
        assert!(
            (reverse.distance - hit.distance).abs() <= tolerance,
            "the reverse cast disagrees: {hit:?} {reverse:?}"
        );
    } else {
        // Only a hit at the very end of the reach may be missed the other way, by rounding.
        assert!(
            input.max_distance - hit.distance <= tolerance,
            "the reverse cast misses: {hit:?}"
        );
    }
});
