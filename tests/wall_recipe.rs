//! The README's recipe "Stop a player at walls", run as a game would: a player that walks over a floor
//! of flush tiles keeps its height and its pace across their seams, and stops still in a corner.

use core::time::Duration;

use bevy::time::TimeUpdateStrategy;
use bevy::{prelude::*, time::TimePlugin};
use bevy_rect_collision::prelude::*;

const PLAYER: u32 = 1 << 0;
const WALLS: u32 = 1 << 1;
const STEP: f32 = 1.0 / 60.0;
/// The skin width of the default `MoveAndSlideConfig`: the gap the player keeps.
const SKIN: f32 = 0.01;

#[derive(Component)]
struct Velocity(Vec2);

/// The README's recipe, as it stands there.
fn move_player(
    time: Res<Time>,
    query: SpatialQuery,
    player: Single<(Entity, &mut Transform, &mut Velocity)>,
) {
    let (entity, mut transform, mut velocity) = player.into_inner();
    velocity.0.y -= 900.0 * time.delta_secs(); // gravity
    let config = MoveAndSlideConfig::default();
    if let Some(moved) = query.move_and_slide(entity, velocity.0 * time.delta_secs(), &config) {
        transform.translation += moved.motion.extend(0.0);
        if moved.grounded() {
            velocity.0.y = 0.0;
        }
    }
}

/// A level of unit tiles: a floor of `floor` tiles from x = 0 with its top at y = 0, and a column of two
/// tiles at `column` if given; a 0.8 × 0.8 player standing on the first tile, walking right at 3 units
/// a second and falling under gravity.
fn level(floor: usize, column: Option<f32>) -> (App, Entity) {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins.build().disable::<TimePlugin>(),
        TimePlugin,
        TransformPlugin,
        RectCollisionPlugin::default(),
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        STEP,
    )))
    .add_systems(Update, move_player);
    let wall = |x: f32, y: f32| {
        (
            Transform::from_xyz(x, y, 0.0),
            Collider::rect(1.0, 1.0),
            CollisionLayers::new(WALLS, PLAYER),
        )
    };
    for i in 0..floor {
        app.world_mut().spawn(wall(i as f32 + 0.5, -0.5));
    }
    if let Some(x) = column {
        app.world_mut().spawn(wall(x, 0.5));
        app.world_mut().spawn(wall(x, 1.5));
    }
    let player = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.5, 0.4, 0.0),
            Collider::rect(0.8, 0.8),
            CollisionLayers::new(PLAYER, WALLS),
            Velocity(Vec2::new(3.0, 0.0)),
        ))
        .id();
    // The walls' shapes are there from the first collision update on.
    for _ in 0..3 {
        app.update();
    }
    (app, player)
}

fn position(app: &App, player: Entity) -> Vec2 {
    app.world()
        .get::<Transform>(player)
        .unwrap()
        .translation
        .truncate()
}

#[test]
fn a_player_walks_over_the_seams_of_flush_floor_tiles_at_a_constant_height_and_pace() {
    let (mut app, player) = level(12, None);
    let mut last = position(&app, player);
    // 150 frames at 3 units a second cross seven seams.
    for frame in 0..150 {
        app.update();
        let now = position(&app, player);
        assert!(
            (now.y - 0.4 - SKIN).abs() < 1e-4,
            "frame {frame}: the player stands a skin width over the floor, at 0.41, not {}",
            now.y
        );
        assert!(
            (now.x - last.x - 3.0 * STEP).abs() < 1e-4,
            "frame {frame}: the player keeps its pace, {} a frame, not {} (at x = {})",
            3.0 * STEP,
            now.x - last.x,
            now.x
        );
        last = now;
    }
    assert!(last.x > 7.5, "the walk crossed seven seams: at {}", last.x);
}

#[test]
fn a_player_walking_into_a_corner_stops_still() {
    // The column's left side at x = 5: the player's right side stops a skin width short of it.
    let (mut app, player) = level(8, Some(5.5));
    for _ in 0..100 {
        app.update();
    }
    for frame in 0..30 {
        app.update();
        let now = position(&app, player);
        assert!(
            (now - Vec2::new(4.6 - SKIN, 0.4 + SKIN)).length() < 1e-4,
            "frame {frame}: the player rests in the corner at (4.59, 0.41), not {now}"
        );
    }
}
