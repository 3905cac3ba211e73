//! Capsules and convex polygons through the public API: hulls, the capsule's rounded ends, bad
//! polygons, and both shapes colliding in an app beside the other kinds.

mod common;

use bevy::math::Rot2;
use bevy::prelude::*;
use bevy_rect_collision::geometry::ConvexPolygon;
use bevy_rect_collision::geometry::*;
use bevy_rect_collision::prelude::*;
use common::*;

/// A regular hexagon's corners, counter-clockwise from angle zero.
fn hexagon(radius: f32) -> Vec<Vec2> {
    (0..6)
        .map(|k| Vec2::from_angle(k as f32 * core::f32::consts::FRAC_PI_3) * radius)
        .collect()
}

#[test]
fn a_hull_keeps_the_corners_whatever_the_order_duplicates_and_points_inside() {
    let corners = hexagon(2.0);
    let mut rng = 0x9e37_79b9_u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for _ in 0..200 {
        let mut points = corners.clone();
        points.extend(corners.iter().take((next() % 6) as usize));
        for _ in 0..(next() % 10) {
            let inside = Vec2::new(
                (next() % 100) as f32 / 100.0 - 0.5,
                (next() % 100) as f32 / 100.0 - 0.5,
            );
            points.push(inside);
        }
        for i in (1..points.len()).rev() {
            points.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        let hull = ConvexPolygon::hull(&points).expect("a hexagon");
        assert_eq!(hull.vertices().len(), 6, "{points:?}");
        for corner in &corners {
            assert!(
                hull.vertices().contains(corner),
                "{corner} kept from {points:?}"
            );
        }
        // Counter-clockwise: every turn is to the left.
        let v = hull.vertices();
        for i in 0..v.len() {
            let (a, b, c) = (v[i], v[(i + 1) % v.len()], v[(i + 2) % v.len()]);
            assert!((b - a).perp_dot(c - b) > 0.0, "a left turn at {b}");
        }
    }
}

#[test]
fn bad_polygons_are_errors_and_never_panic() {
    let cases: [(&[Vec2], HullError); 5] = [
        (&[], HullError::TooFewPoints),
        (&[Vec2::ZERO, Vec2::X], HullError::TooFewPoints),
        (
            &[Vec2::ZERO, Vec2::ONE, Vec2::splat(2.0), Vec2::ONE],
            HullError::TooFewPoints,
        ),
        (
            &[Vec2::ZERO, Vec2::X, Vec2::new(0.0, f32::INFINITY)],
            HullError::NonFinitePoint,
        ),
        (
            &[Vec2::ZERO, Vec2::X, Vec2::new(f32::NAN, 1.0)],
            HullError::NonFinitePoint,
        ),
    ];
    for (points, error) in cases {
        assert_eq!(ConvexPolygon::hull(points), Err(error), "{points:?}");
        assert_eq!(
            Collider::try_convex_polygon(points),
            Err(ColliderError::Polygon(error))
        );
        assert!(!Collider::convex_polygon(points).has_valid_size());
    }
    let nine: Vec<Vec2> = (0..9)
        .map(|k| Vec2::from_angle(k as f32 * core::f32::consts::TAU / 9.0))
        .collect();
    assert_eq!(
        ConvexPolygon::hull(&nine),
        Err(HullError::TooManyVertices(9))
    );
    assert!(Collider::try_capsule(f32::NAN, 1.0).is_err());
    assert!(Collider::try_capsule(1.0, f32::INFINITY).is_err());
    assert_eq!(
        Collider::try_capsule(1.0, -0.5),
        Err(ColliderError::NegativeLength { value: -0.5 })
    );
}

/// A circle tangent to a capsule's rounded end at 45° touches it; moved out along the normal by a
/// ten-thousandth, it does not, and moved in, it overlaps by that much. At 0, 90 and 45 degrees of
/// the capsule's own turn. A point at 45° is not exact in f32, so tangent means within a millionth
/// here; straight above the end of an upright capsule it is exact.
#[test]
fn a_capsules_ends_are_rounded_exactly() {
    for turn in [Rot2::IDENTITY, Rot2::FRAC_PI_2, Rot2::FRAC_PI_4] {
        let capsule = WorldCapsule::new(Vec2::new(3.0, -1.0), 2.0, 1.0, turn);
        let top = capsule.ends()[1];
        // 45° from the capsule's axis, out of its upper end.
        let out = turn * Vec2::from_angle(core::f32::consts::FRAC_PI_4);
        for (gap, touches) in [(-1e-6, true), (1e-4, false), (-1e-4, true)] {
            let circle = WorldCircle::new(top + out * (1.0 + 0.5 + gap), 0.5);
            for (a, b) in [
                (WorldShape::from(capsule), WorldShape::from(circle)),
                (WorldShape::from(circle), WorldShape::from(capsule)),
            ] {
                assert_eq!(
                    a.intersects(&b, OverlapMode::Closed),
                    touches,
                    "gap {gap} at {turn:?}"
                );
                if let Some(contact) = a.contact(&b, OverlapMode::Closed) {
                    assert!((contact.depth + gap).abs() < 1e-5, "{contact:?}");
                }
            }
            // The corner of a square at the same place as the circle's nearest point.
            let corner = top + out * (1.0 + gap);
            let diamond = WorldRotatedRect::new(
                corner + out * core::f32::consts::SQRT_2,
                Vec2::ONE,
                turn * Rot2::FRAC_PI_4 * Rot2::FRAC_PI_4,
            );
            assert_eq!(
                WorldShape::from(capsule).intersects(&diamond.into(), OverlapMode::Closed),
                touches,
                "a corner at gap {gap}, {turn:?}"
            );
        }
    }
}

#[test]
fn a_circle_on_an_upright_capsules_end_touches_exactly() {
    let capsule: WorldShape = WorldCapsule::new(Vec2::ZERO, 2.0, 1.0, Rot2::IDENTITY).into();
    let on_top: WorldShape = WorldCircle::new(Vec2::new(0.0, 3.5), 0.5).into();
    let above: WorldShape = WorldCircle::new(Vec2::new(0.0, 3.5001), 0.5).into();
    assert!(capsule.intersects(&on_top, OverlapMode::Closed));
    assert!(!capsule.intersects(&on_top, OverlapMode::InteriorOnly));
    assert!(!capsule.intersects(&above, OverlapMode::Closed));
    let contact = capsule.contact(&on_top, OverlapMode::Closed).unwrap();
    assert_eq!((contact.normal, contact.depth), (Vec2::Y, 0.0));
}

/// A capsule and a triangle among the other kinds: each pair the brute force finds starts, and
/// ends when the shapes part.
#[test]
fn capsules_and_polygons_collide_in_an_app() {
    let mut app = app();
    let triangle = Collider::convex_polygon(&[
        Vec2::new(-2.0, 0.0),
        Vec2::new(2.0, 0.0),
        Vec2::new(0.0, 2.0),
    ]);
    let capsule = app
        .world_mut()
        .spawn((Collider::capsule(0.5, 2.0), at(0.0, 3.0)))
        .id();
    let ramp = app.world_mut().spawn((triangle, at(0.0, 0.0))).id();
    let wall = app
        .world_mut()
        .spawn((Collider::rect(1.0, 10.0), at(2.9, 0.0)))
        .id();
    let ball = app
        .world_mut()
        .spawn((Collider::circle(0.5), at(-3.0, 3.0)))
        .id();
    app.update();
    assert!(
        touching(&mut app, capsule).contains(&ramp),
        "the capsule's lower end rests on the apex"
    );
    assert!(
        !touching(&mut app, ramp).contains(&wall),
        "the ramp's corner is short of the wall"
    );
    assert_matches_brute_force(&mut app, "at rest");
    for step in 0..40 {
        for (entity, dx) in [(capsule, 0.1), (ball, 0.15), (ramp, 0.02)] {
            app.world_mut()
                .get_mut::<Transform>(entity)
                .unwrap()
                .translation
                .x += dx;
        }
        app.world_mut()
            .get_mut::<Transform>(capsule)
            .unwrap()
            .rotate_z(0.1);
        app.update();
        assert_matches_brute_force(&mut app, &format!("step {step}"));
    }
    assert_events_alternate(&app, "capsules and polygons moving");
}
