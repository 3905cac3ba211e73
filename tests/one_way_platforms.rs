//! `OneWayPlatform` with `move_and_slide` and the casts, `move_and_slide` on the frame a collider
//! spawns, and the walls and ceilings it reports.

use bevy::ecs::system::RunSystemOnce;
use bevy::prelude::*;
use bevy_rect_collision::geometry::Pose2d;
use bevy_rect_collision::prelude::*;

const SKIN: f32 = 0.01;

/// What the mover does this frame.
#[derive(Resource, Default)]
struct Motion {
    step: Vec2,
    drop_through: bool,
}

/// The last `move_and_slide` output of the mover.
#[derive(Resource, Default)]
struct LastMove(Option<MoveAndSlideOutput>);

#[derive(Component)]
struct Mover;

fn move_mover(
    query: SpatialQuery,
    motion: Res<Motion>,
    mut last: ResMut<LastMove>,
    mover: Single<(Entity, &mut Transform), With<Mover>>,
) {
    let (entity, mut transform) = mover.into_inner();
    let config = MoveAndSlideConfig {
        drop_through: motion.drop_through,
        ..default()
    };
    last.0 = query.move_and_slide(entity, motion.step, &config);
    if let Some(moved) = &last.0 {
        transform.translation += moved.motion.extend(0.0);
    }
}

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        TransformPlugin,
        RectCollisionPlugin::default(),
    ))
    .init_resource::<Motion>()
    .init_resource::<LastMove>()
    .add_systems(Update, move_mover);
    app
}

/// A 0.8 square mover at `at`.
fn spawn_mover(app: &mut App, at: Vec2) -> Entity {
    let transform = Transform::from_translation(at.extend(0.0));
    (app.world_mut())
        .spawn((transform, Collider::rect(0.8, 0.8), Mover))
        .id()
}

/// A one-way platform 6 long and 0.2 thick at `center`, turned by `angle`.
fn spawn_platform(app: &mut App, center: Vec2, angle: f32) -> Entity {
    let transform =
        Transform::from_translation(center.extend(0.0)).with_rotation(Quat::from_rotation_z(angle));
    (app.world_mut())
        .spawn((transform, Collider::rotated_rect(6.0, 0.2), OneWayPlatform))
        .id()
}

/// Moves the mover by `step` a frame for `frames` frames; returns where it ends.
fn run(app: &mut App, mover: Entity, step: Vec2, drop_through: bool, frames: usize) -> Vec2 {
    *app.world_mut().resource_mut::<Motion>() = Motion { step, drop_through };
    for _ in 0..frames {
        app.update();
    }
    app.world()
        .get::<Transform>(mover)
        .unwrap()
        .translation
        .truncate()
}

fn last_move(app: &App) -> MoveAndSlideOutput {
    (app.world().resource::<LastMove>().0.clone()).expect("the mover has a collider")
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-4
}

#[test]
fn a_mover_passes_up_through_lands_on_top_and_drops_through_on_demand() {
    let mut app = app();
    let floor = (app.world_mut())
        .spawn((Transform::default(), Collider::rect(20.0, 1.0)))
        .id();
    let platform = spawn_platform(&mut app, Vec2::new(0.0, 3.0), 0.0);
    let mover = spawn_mover(&mut app, Vec2::new(0.0, 0.5 + 0.4 + SKIN));
    app.update();
    let up = run(&mut app, mover, Vec2::new(0.0, 0.2), false, 20);
    assert!(up.y > 4.5, "up through the platform from below: {up}");
    let landed = run(&mut app, mover, Vec2::new(0.0, -0.2), false, 20);
    assert!(
        close(landed.y, 3.1 + 0.4 + SKIN),
        "on the platform: {landed}"
    );
    let ground = last_move(&app).ground.map(|(entity, _)| entity);
    assert_eq!(ground, Some(platform), "standing on the platform");
    let dropped = run(&mut app, mover, Vec2::new(0.0, -0.2), true, 3);
    assert!(
        dropped.y < 3.0,
        "dropped through with drop_through: {dropped}"
    );
    let fell = run(&mut app, mover, Vec2::new(0.0, -0.2), false, 20);
    assert!(close(fell.y, 0.5 + 0.4 + SKIN), "then on the floor: {fell}");
    let ground = last_move(&app).ground.map(|(entity, _)| entity);
    assert_eq!(ground, Some(floor), "standing on the floor");
}

#[test]
fn a_platform_turned_over_holds_from_below() {
    let mut app = app();
    spawn_platform(&mut app, Vec2::new(0.0, 3.0), core::f32::consts::PI);
    let from_below = spawn_mover(&mut app, Vec2::ZERO);
    app.update();
    let stopped = run(&mut app, from_below, Vec2::new(0.0, 0.2), false, 20);
    assert!(
        close(stopped.y, 2.9 - 0.4 - SKIN),
        "held from below: {stopped}"
    );
    assert!(
        last_move(&app).ceiling().is_some(),
        "its underside is a ceiling"
    );
    app.world_mut().despawn(from_below);
    let from_above = spawn_mover(&mut app, Vec2::new(0.0, 6.0));
    run(&mut app, from_above, Vec2::ZERO, false, 1);
    let passed = run(&mut app, from_above, Vec2::new(0.0, -0.2), false, 25);
    assert!(close(passed.y, 1.0), "through from above: {passed}");
}

#[test]
fn a_turned_platforms_open_side_follows_its_rotation() {
    // Turned a quarter left, the platform stands upright and its open side faces -x.
    let mut app = app();
    let platform = spawn_platform(&mut app, Vec2::ZERO, core::f32::consts::FRAC_PI_2);
    let from_left = spawn_mover(&mut app, Vec2::new(-3.0, 0.0));
    app.update();
    let stopped = run(&mut app, from_left, Vec2::new(0.2, 0.0), false, 20);
    assert!(
        close(stopped.x, -0.1 - 0.4 - SKIN),
        "held from its open side: {stopped}"
    );
    let wall = last_move(&app).wall().map(|(entity, _)| entity);
    assert_eq!(wall, Some(platform), "an upright platform is a wall");
    app.world_mut().despawn(from_left);
    let from_right = spawn_mover(&mut app, Vec2::new(3.0, 0.0));
    run(&mut app, from_right, Vec2::ZERO, false, 1);
    let passed = run(&mut app, from_right, Vec2::new(-0.2, 0.0), false, 30);
    assert!(
        close(passed.x, -3.0),
        "through from the other side: {passed}"
    );

    // The shape casts and cast_collider follow the same rule.
    #[derive(Resource, Default)]
    struct Casts(Vec<Option<Entity>>);
    app.init_resource::<Casts>();
    app.world_mut()
        .run_system_once(move |query: SpatialQuery, mut casts: ResMut<Casts>| {
            let body = Collider::rect(0.8, 0.8);
            let others = SpatialQueryFilter::from_excluded_entities([from_right]);
            let cast = |x: f32, direction: Dir2| {
                let pose = Pose2d::from_translation(Vec2::new(x, 0.0));
                let hit = query.cast_shape(&body, &pose, direction, 10.0, &others);
                let all = query.cast_shape_all(&body, &pose, direction, 10.0, &others);
                assert_eq!(hit.map(|(e, _)| e), all.first().map(|&(e, _)| e));
                hit.map(|(entity, _)| entity)
            };
            casts.0 = vec![
                cast(-3.0, Dir2::X),
                cast(3.0, Dir2::NEG_X),
                query
                    .cast_collider(from_right, Dir2::X, 10.0)
                    .map(|(e, _)| e),
            ];
        })
        .expect("the casts run");
    assert_eq!(
        app.world().resource::<Casts>().0,
        [Some(platform), None, Some(platform)],
        "a cast from the open side hits it, from the other side passes; the mover, now left of it, hits it"
    );
}

#[test]
fn a_collider_inside_a_one_way_platform_touches_it() {
    let mut app = app();
    let platform = spawn_platform(&mut app, Vec2::ZERO, 0.0);
    let mover = spawn_mover(&mut app, Vec2::new(1.0, 0.2));
    app.update();
    let touching = app.world().get::<CollidingEntities>(mover).unwrap();
    assert!(touching.contains(&platform), "overlaps are unchanged");
    // And a move from inside passes it either way.
    let out = run(&mut app, mover, Vec2::new(0.0, -0.2), false, 5);
    assert!(out.y < -0.5, "out through the bottom from inside: {out}");
}

#[test]
fn move_and_slide_moves_a_collider_on_the_frame_it_spawns() {
    let mut app = app();
    let wall = (app.world_mut())
        .spawn((Transform::from_xyz(3.0, 0.0, 0.0), Collider::rect(1.0, 4.0)))
        .id();
    app.update();
    // As a collider spawned in `Startup` is by `Update`: its `GlobalTransform` propagated, not yet in
    // a collision update.
    let transform = Transform::from_xyz(0.0, 0.0, 0.0);
    let mover = (app.world_mut())
        .spawn((
            transform,
            GlobalTransform::from(transform),
            Collider::rect(0.8, 0.8),
            Mover,
        ))
        .id();
    *app.world_mut().resource_mut::<Motion>() = Motion {
        step: Vec2::new(5.0, 0.0),
        drop_through: false,
    };
    app.update();
    let moved = last_move(&app);
    assert!(
        close(moved.motion.x, 2.5 - 0.4 - SKIN),
        "stopped at the wall: {moved:?}"
    );
    assert_eq!(
        moved.wall().map(|(entity, _)| entity),
        Some(wall),
        "against the wall"
    );
    assert!(
        moved.ceiling().is_none() && !moved.grounded(),
        "neither ceiling nor ground"
    );
    let at = app.world().get::<Transform>(mover).unwrap().translation.x;
    assert!(close(at, 2.5 - 0.4 - SKIN), "and there: {at}");
}
