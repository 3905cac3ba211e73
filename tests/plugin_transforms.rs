//! World-space shapes from `GlobalTransform`: hierarchy, rotation, scale, offsets, bad transforms.

mod common;

use bevy::prelude::*;
use bevy_rect_collision::geometry::WorldShape;
use bevy_rect_collision::prelude::*;
use common::*;

fn world_shape(app: &App, entity: Entity) -> WorldShape {
    app.world()
        .get::<ColliderWorldShape>(entity)
        .and_then(|s| s.0)
        .expect("a valid world shape")
}

#[test]
fn child_of_a_rotated_scaled_parent_collides_where_drawn() {
    let mut app = app();
    // The parent turns a quarter and doubles: the child, 3 units along local x, lands at (0, 6),
    // a 1 × 1 rotated rect grown to 2 × 2.
    let parent = app
        .world_mut()
        .spawn(
            Transform::from_rotation(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2))
                .with_scale(Vec3::splat(2.0)),
        )
        .id();
    let child = spawn_at(
        &mut app,
        at(3.0, 0.0),
        (Collider::rotated_rect(1.0, 1.0), ChildOf(parent)),
    );
    let probe_hit = spawn_at(&mut app, at(0.0, 7.4), Collider::circle(0.5));
    let probe_miss = spawn_at(&mut app, at(3.0, 0.0), Collider::circle(0.5));
    app.update();
    let WorldShape::RotatedRect(rect) = world_shape(&app, child) else {
        panic!("a rotated rect");
    };
    assert!(
        (rect.center - Vec2::new(0.0, 6.0)).length() < 1e-5,
        "centre {:?}",
        rect.center
    );
    assert!(
        (rect.half_size - Vec2::ONE).length() < 1e-6,
        "half size {:?}",
        rect.half_size
    );
    assert!(
        touching(&mut app, child).contains(&probe_hit),
        "touches a circle by its drawn top edge"
    );
    assert!(
        !touching(&mut app, child).contains(&probe_miss),
        "not where its local transform says"
    );
}

#[test]
fn rect_ignores_rotation_and_rotated_rect_follows_it() {
    let mut app = app();
    let turned = Transform::from_rotation(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2));
    let rect = app
        .world_mut()
        .spawn((turned, Collider::rect(4.0, 1.0)))
        .id();
    let rotated = app
        .world_mut()
        .spawn((
            turned.with_translation(Vec3::new(10.0, 0.0, 0.0)),
            Collider::rotated_rect(4.0, 1.0),
        ))
        .id();
    app.update();
    let rect_box = world_shape(&app, rect).aabb();
    let rotated_box = world_shape(&app, rotated).aabb();
    assert!(
        (rect_box.max - Vec2::new(2.0, 0.5)).length() < 1e-5,
        "the rect stays wide: {rect_box:?}"
    );
    assert!(
        (rotated_box.max - Vec2::new(10.5, 2.0)).length() < 1e-5,
        "the rotated rect stands up: {rotated_box:?}"
    );
}

#[test]
fn shapes_on_entities_turned_every_frame_keep_their_size_and_their_touching_neighbours() {
    let mut app = app();
    // A rect and a circle on entities that turn a little every frame, each touching a still rect
    // exactly edge to edge. The quaternions' rounding drifts their axes' lengths from 1 (up to about
    // 1,000 units in the last place of the squared length over these frames): that must not scale the
    // shapes, or the contacts would flicker.
    let [turning_rect, turning_circle, right_of_rect, right_of_circle] = [
        (at(0.0, 0.0), Collider::rect(2.0, 2.0)),
        (at(0.0, 10.0), Collider::circle(1.0)),
        (at(2.0, 0.0), Collider::rect(2.0, 2.0)),
        (at(2.0, 10.0), Collider::rect(2.0, 2.0)),
    ]
    .map(|bundle| app.world_mut().spawn(bundle).id());
    for frame in 0..300 {
        for entity in [turning_rect, turning_circle] {
            let mut transform = app.world_mut().get_mut::<Transform>(entity).unwrap();
            transform.rotate_z(0.01);
        }
        app.update();
        let WorldShape::Rect(rect) = world_shape(&app, turning_rect) else {
            panic!("a rect");
        };
        assert_eq!(rect.half_size, Vec2::ONE, "frame {frame}");
        let WorldShape::Circle(circle) = world_shape(&app, turning_circle) else {
            panic!("a circle");
        };
        assert_eq!(circle.radius, 1.0, "frame {frame}");
        assert!(
            touching(&mut app, turning_rect).contains(&right_of_rect),
            "frame {frame}: the rect touches its neighbour"
        );
        assert!(
            touching(&mut app, turning_circle).contains(&right_of_circle),
            "frame {frame}: the circle touches its neighbour"
        );
    }
}

#[test]
fn offset_turns_about_the_entity_origin() {
    // The worked example of "Rotated rectangle intersection": a 6 × 4.5 rectangle rotated about the midpoint of its left side.
    let mut app = app();
    let pivot = Transform::from_xyz(-1.0, 3.25, 0.0).with_rotation(Quat::from_rotation_z(-1.3));
    let p = app
        .world_mut()
        .spawn((
            pivot,
            Collider::rotated_rect(6.0, 4.5).with_offset(Vec2::new(3.0, 0.0)),
        ))
        .id();
    let q = spawn_at(&mut app, at(2.5, 0.25), Collider::rect(1.0, 0.5));
    app.update();
    assert!(
        touching(&mut app, p).contains(&q),
        "past the switch angle they meet"
    );
    app.world_mut().get_mut::<Transform>(p).unwrap().rotation = Quat::from_rotation_z(-1.4);
    app.update();
    assert!(
        !touching(&mut app, p).contains(&q),
        "at -1.4 rad they are apart, as the worked example says"
    );
}

#[test]
fn negative_scale_mirrors_the_offset() {
    let mut app = app();
    let mirrored = spawn_at(
        &mut app,
        at(0.0, 0.0).with_scale(Vec3::new(-1.0, 1.0, 1.0)),
        Collider::circle(1.0).with_offset(Vec2::new(5.0, 0.0)),
    );
    app.update();
    assert!(
        (world_shape(&app, mirrored).center() - Vec2::new(-5.0, 0.0)).length() < 1e-6,
        "mirrored to the left"
    );
}

#[test]
fn circle_under_non_uniform_scale_takes_the_larger_axis() {
    let mut app = app();
    let circle = spawn_at(
        &mut app,
        at(0.0, 0.0).with_scale(Vec3::new(1.0, 3.0, 1.0)),
        Collider::circle(1.0),
    );
    app.update();
    let WorldShape::Circle(c) = world_shape(&app, circle) else {
        panic!("a circle")
    };
    assert_eq!(c.radius, 3.0, "radius follows the larger scale");
}

#[test]
fn invalid_transforms_are_skipped_and_the_rest_keeps_colliding() {
    let mut app = app();
    let a = spawn_at(&mut app, at(0.0, 0.0), Collider::circle(1.0));
    let b = spawn_at(&mut app, at(1.0, 0.0), Collider::circle(1.0));
    let nan = spawn_at(&mut app, at(f32::NAN, 0.0), Collider::circle(1.0));
    let flat = spawn_at(
        &mut app,
        at(0.5, 0.0).with_scale(Vec3::new(0.0, 1.0, 1.0)),
        Collider::rect(1.0, 1.0),
    );
    let bad_size = spawn_at(&mut app, at(0.5, 0.0), Collider::rect(f32::INFINITY, 1.0));
    // A negative size is bad input too, for every kind: skipped, not taken as its absolute value.
    let negative: Vec<Entity> = [
        Collider::rect(-1.0, 1.0),
        Collider::rotated_rect(1.0, -1.0),
        Collider::circle(-1.0),
        Collider::capsule(-1.0, 1.0),
        Collider::capsule(1.0, f32::NAN),
        Collider::convex_polygon(&[Vec2::ZERO, Vec2::X, Vec2::splat(f32::NAN)]),
        Collider::convex_polygon(&[Vec2::ZERO, Vec2::X, Vec2::new(2.0, 0.0)]),
    ]
    .into_iter()
    .map(|collider| spawn_at(&mut app, at(0.5, 0.0), collider))
    .collect();
    app.update();
    assert!(
        touching(&mut app, a).contains(&b),
        "valid colliders still collide"
    );
    for bad in [nan, flat, bad_size].into_iter().chain(negative) {
        assert!(
            touching(&mut app, bad).is_empty(),
            "an invalid collider touches nothing"
        );
        assert!(
            app.world().get::<InvalidCollider>(bad).is_some(),
            "and is marked invalid"
        );
    }
    let diagnostics = *app.world().resource::<CollisionDiagnostics>();
    assert_eq!(
        diagnostics.invalid_colliders, 10,
        "counted in the diagnostics"
    );
    // Becoming valid again brings it back.
    app.world_mut()
        .get_mut::<Transform>(nan)
        .unwrap()
        .translation
        .x = 0.5;
    app.update();
    assert!(
        touching(&mut app, nan).contains(&a),
        "the repaired collider collides again"
    );
    assert!(
        app.world().get::<InvalidCollider>(nan).is_none(),
        "and is no longer marked"
    );
}

/// Whether the collider checked by [`record_invalid_marker`] was marked invalid when it looked.
#[derive(Resource, Default)]
struct MarkedInvalid(Option<bool>);

fn record_invalid_marker(
    colliders: Query<Has<InvalidCollider>, With<Collider>>,
    mut marked: ResMut<MarkedInvalid>,
) {
    marked.0 = colliders.iter().next();
}

#[test]
fn a_system_after_a_stage_sees_the_invalid_marker_of_the_same_update() {
    // The stages run without sync points between them; Bevy still applies the prepare stage's
    // commands before a system ordered after any of them.
    let mut app = app();
    app.init_resource::<MarkedInvalid>().add_systems(
        PostUpdate,
        record_invalid_marker.after(CollisionSystems::BroadPhase),
    );
    let collider = spawn_at(&mut app, at(f32::NAN, 0.0), Collider::circle(1.0));
    app.update();
    assert_eq!(app.world().resource::<MarkedInvalid>().0, Some(true));
    app.world_mut()
        .get_mut::<Transform>(collider)
        .unwrap()
        .translation
        .x = 0.0;
    app.update();
    assert_eq!(
        app.world().resource::<MarkedInvalid>().0,
        Some(false),
        "the marker is gone in the update the collider turned valid"
    );
}

#[test]
fn going_invalid_during_contact_ends_it() {
    let mut app = app();
    let a = spawn_at(&mut app, at(0.0, 0.0), Collider::circle(1.0));
    let b = spawn_at(&mut app, at(1.0, 0.0), Collider::circle(1.0));
    app.update();
    app.world_mut().get_mut::<Transform>(b).unwrap().scale = Vec3::ZERO;
    app.update();
    assert_eq!(
        log(&app).counts_for(b),
        (1, 1),
        "the contact ends rather than vanishing"
    );
    assert!(touching(&mut app, a).is_empty(), "a lets go");
}

#[test]
fn huge_coordinates_and_tiny_shapes_neither_panic_nor_poison_others() {
    let mut app = app();
    let a = spawn_at(&mut app, at(0.0, 0.0), Collider::circle(1.0));
    let b = spawn_at(&mut app, at(1.5, 0.0), Collider::rotated_rect(1.0, 1.0));
    let far = [
        spawn_at(&mut app, at(1e30, -1e30), Collider::rotated_rect(1.0, 1.0)),
        spawn_at(&mut app, at(1e30, -1e30), Collider::circle(1.0)),
        spawn_at(&mut app, at(-3e38, 3e38), Collider::rect(1e30, 1e30)),
    ];
    let tiny = [
        spawn_at(&mut app, at(0.5, 0.0), Collider::circle(1e-30)),
        spawn_at(
            &mut app,
            at(0.5, 0.0).with_scale(Vec3::splat(1e-30)),
            Collider::rotated_rect(1.0, 1.0),
        ),
    ];
    for _ in 0..3 {
        app.update();
    }
    assert!(
        touching(&mut app, a).contains(&b),
        "the ordinary pair still collides"
    );
    assert!(
        touching(&mut app, far[0]).contains(&far[1]),
        "two shapes at the same huge coordinates meet"
    );
    for entity in tiny {
        assert!(
            touching(&mut app, entity).contains(&a),
            "a tiny shape inside the circle touches it"
        );
    }
    assert_eq!(
        colliding_pairs(&mut app),
        brute_force_pairs(&mut app),
        "agrees with the geometry"
    );
}

#[test]
fn pairs_touching_by_the_exact_test_survive_box_rounding() {
    // Found by fuzzing: the long rectangle's rotation (ignored by a rect) leaves its scale a unit in the
    // last place below 1, so its box ends just short of the square's; the exact test, with its own
    // rounding, finds the edges touching. The pair must touch: the box test may not veto it.
    let mut app = app();
    let long = spawn_at(
        &mut app,
        Transform::from_xyz(-1.125, -0.0625, 0.0).with_rotation(Quat::from_rotation_z(0.3)),
        Collider::rect(0.25 + 255.0 / 32.0, 0.25),
    );
    let square = spawn_at(&mut app, at(-0.0625, 0.1875), Collider::rect(0.25, 0.25));
    app.update();
    let (a, b) = (world_shape(&app, long), world_shape(&app, square));
    assert!(
        a.intersects(&b, OverlapMode::Closed),
        "the exact test finds them touching"
    );
    assert!(
        touching(&mut app, long).contains(&square),
        "so the plugin reports them touching"
    );
    assert_eq!(
        colliding_pairs(&mut app),
        brute_force_pairs(&mut app),
        "and agrees with brute force"
    );
}

/// How many colliders' world shapes were marked changed in the last update.
#[derive(Resource, Default)]
struct ShapesChanged(usize);

fn count_changed_shapes(
    shapes: Query<(), Changed<ColliderWorldShape>>,
    mut changed: ResMut<ShapesChanged>,
) {
    changed.0 = shapes.iter().count();
}

#[test]
fn world_shapes_are_marked_changed_only_when_they_change() {
    let mut app = app();
    app.init_resource::<ShapesChanged>()
        .add_systems(Last, count_changed_shapes);
    let rect = spawn_at(&mut app, at(0.0, 0.0), Collider::rotated_rect(2.0, 1.0));
    let circle = spawn_at(&mut app, at(1.0, 0.0), Collider::circle(1.0));
    app.update();
    assert_eq!(app.world().resource::<ShapesChanged>().0, 2, "both new");
    let step = |app: &mut App, edit: &dyn Fn(&mut Transform)| {
        let mut transform = app.world_mut().get_mut::<Transform>(rect).unwrap();
        edit(&mut transform);
        app.update();
        app.world().resource::<ShapesChanged>().0
    };
    assert_eq!(
        step(&mut app, &|_| {}),
        0,
        "a transform written but the same"
    );
    // The global transform changes, the 2D shape does not.
    assert_eq!(
        step(&mut app, &|t| t.translation.z = 5.0),
        0,
        "moved along z only"
    );
    // The same centre, so the whole shapes are compared.
    assert_eq!(
        step(&mut app, &|t| t.rotate_z(0.3)),
        1,
        "turned about its centre"
    );
    assert_eq!(
        step(&mut app, &|t| t.translation.x = 0.5),
        1,
        "moved in the plane"
    );
    // Under Bevy's `track_location` feature (`cargo test --test plugin_transforms --features
    // bevy/track_location`, which `.ci/run` runs), the change is recorded as made by the prepare stage,
    // as a `Mut` records it. Without the feature nothing is recorded and there is nothing to check.
    let changed_by = app
        .world_mut()
        .query::<Ref<ColliderWorldShape>>()
        .get(app.world(), rect)
        .unwrap()
        .changed_by();
    if let Some(location) = changed_by.into_option() {
        assert!(
            location.file().ends_with("prepare.rs"),
            "changed by {location}"
        );
    }
    assert_eq!(step(&mut app, &|_| {}), 0, "written again, the same");
    assert!(touching(&mut app, rect).contains(&circle), "they overlap");
}
