//! A capsule character moved with `SpatialQuery::move_and_slide`: it runs over a floor of flush tiles
//! without a bump, walks up a 30° slope and over a triangular bump but not up a 60° slope, rides a
//! moving platform, and jumps up through a `OneWayPlatform`, which holds it from above until it drops
//! through. Until a key is pressed, it runs and jumps by itself.
//!
//! Keys: `A`/`D` or arrows run, `Space` jumps, `S` or down drops through the one-way platform.
//!
//! Run: `cargo run --example platformer`

#[path = "support/mod.rs"]
mod support;

use bevy::prelude::*;
use bevy_rect_collision::debug::RectCollisionDebugPlugin;
use bevy_rect_collision::prelude::*;
use support::{Controls, DemoRun, help_text, mesh_for, read_controls};

const GRAVITY: f32 = 1800.0;
const RUN_SPEED: f32 = 260.0;
const JUMP_SPEED: f32 = 760.0;
const TILE: f32 = 40.0;
/// How long a drop through a one-way platform lasts, in seconds.
const DROP_TIME: f32 = 0.25;

/// The level's pieces touch only the player, not each other: flush tiles make no pairs.
const PLAYER: u32 = 1 << 0;
const LEVEL: u32 = 1 << 1;

const WALL_COLOR: Color = Color::srgb(0.45, 0.47, 0.55);
const ONE_WAY_COLOR: Color = Color::srgb(0.35, 0.75, 0.45);

#[derive(Component, Default)]
struct Player {
    velocity: Vec2,
    /// What it stood on after its last move.
    ground: Option<Entity>,
}

/// Seconds left of a drop through one-way platforms.
#[derive(Component, Default)]
struct Dropping(f32);

/// A platform that goes back and forth along x, about `origin`.
#[derive(Component)]
struct Mover {
    origin: Vec2,
    /// Its velocity this frame, to carry what stands on it.
    velocity: Vec2,
}

fn main() {
    App::new()
        .add_plugins((
            DefaultPlugins,
            RectCollisionPlugin::default(),
            RectCollisionDebugPlugin,
        ))
        .init_resource::<Controls>()
        .insert_resource(DemoRun {
            period: 360,
            forward: 180,
            jump_every: 70,
        })
        .add_systems(Startup, setup)
        .add_systems(
            Update,
            (read_controls, drop_through, move_platforms, move_player).chain(),
        )
        .run();
}

fn solid(commands: &mut Commands, center: Vec2, size: Vec2, angle: f32) -> Entity {
    let transform =
        Transform::from_translation(center.extend(0.0)).with_rotation(Quat::from_rotation_z(angle));
    let collider = if angle == 0.0 {
        Collider::rect(size.x, size.y)
    } else {
        Collider::rotated_rect(size.x, size.y)
    };
    let layers = CollisionLayers::new(LEVEL, PLAYER);
    let sprite = Sprite::from_color(WALL_COLOR, size);
    commands.spawn((transform, collider, layers, sprite)).id()
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    commands.spawn(Camera2d);
    commands.spawn(help_text(
        "A/D or arrows: run   Space: jump   S or down: drop through the green platform\n\
         move_and_slide stops the player a skin width from walls and slides it along them.",
    ));
    // A floor of flush tiles, and walls at both ends.
    let floor_y = -300.0;
    for i in -15..15 {
        let x = (i as f32 + 0.5) * TILE;
        solid(&mut commands, Vec2::new(x, floor_y), Vec2::splat(TILE), 0.0);
    }
    for j in 0..14 {
        let y = floor_y + (j as f32 + 1.0) * TILE;
        solid(
            &mut commands,
            Vec2::new(-15.5 * TILE, y),
            Vec2::splat(TILE),
            0.0,
        );
        solid(
            &mut commands,
            Vec2::new(15.5 * TILE, y),
            Vec2::splat(TILE),
            0.0,
        );
    }
    let top = floor_y + TILE / 2.0;
    // A 30° ramp up to a ledge, and a 60° slope too steep to walk up.
    let ramp = 30f32.to_radians();
    let ramp_foot = Vec2::new(-520.0, top);
    let (along, up) = (Vec2::from_angle(ramp), Vec2::from_angle(ramp).perp());
    // Its top face from the foot up, 240 long: 120 high at its end.
    solid(
        &mut commands,
        ramp_foot + along * 120.0 - up * 10.0,
        Vec2::new(240.0, 20.0),
        ramp,
    );
    let ramp_end = ramp_foot + along * 240.0;
    let ledge = Vec2::new(ramp_end.x + 80.0, ramp_end.y - 10.0);
    solid(&mut commands, ledge, Vec2::new(160.0, 20.0), 0.0);
    // A triangular bump, a convex polygon with slopes of about 24° each side.
    let bump = Collider::convex_polygon(&[
        Vec2::new(-80.0, 0.0),
        Vec2::new(80.0, 0.0),
        Vec2::new(0.0, 35.0),
    ]);
    commands.spawn((
        Transform::from_xyz(-180.0, top, 0.0),
        mesh_for(&bump, WALL_COLOR, &mut meshes, &mut materials),
        bump,
        CollisionLayers::new(LEVEL, PLAYER),
    ));
    let steep = 60f32.to_radians();
    solid(
        &mut commands,
        Vec2::new(470.0, top + 80.0),
        Vec2::new(200.0, 24.0),
        steep,
    );
    // A one-way platform and a platform going back and forth.
    commands.spawn((
        OneWayPlatform,
        Transform::from_xyz(80.0, top + 130.0, 0.0),
        Collider::rect(200.0, 12.0),
        CollisionLayers::new(LEVEL, PLAYER),
        Sprite::from_color(ONE_WAY_COLOR, Vec2::new(200.0, 12.0)),
    ));
    let mover_at = Vec2::new(200.0, top + 260.0);
    commands.spawn((
        Mover {
            origin: mover_at,
            velocity: Vec2::ZERO,
        },
        Transform::from_translation(mover_at.extend(0.0)),
        Collider::rect(120.0, 16.0),
        CollisionLayers::new(LEVEL, PLAYER),
        Sprite::from_color(Color::srgb(0.8, 0.6, 0.3), Vec2::new(120.0, 16.0)),
    ));
    // A capsule 44 high and 28 wide: its rounded feet slide over steps and seams.
    let player = Collider::capsule(14.0, 16.0);
    commands.spawn((
        Player::default(),
        Dropping::default(),
        Transform::from_xyz(-400.0, top + 100.0, 1.0),
        mesh_for(
            &player,
            Color::srgb(0.3, 0.7, 1.0),
            &mut meshes,
            &mut materials,
        ),
        player,
        CollisionLayers::new(PLAYER, LEVEL),
    ));
}

fn move_platforms(time: Res<Time>, mut movers: Query<(&mut Mover, &mut Transform)>) {
    for (mut mover, mut transform) in &mut movers {
        let x = mover.origin.x + 160.0 * (time.elapsed_secs() * 0.8).sin();
        let before = transform.translation.x;
        transform.translation.x = x;
        mover.velocity = Vec2::new((x - before) / time.delta_secs().max(1e-6), 0.0);
    }
}

fn drop_through(controls: Res<Controls>, time: Res<Time>, mut dropping: Query<&mut Dropping>) {
    for mut dropping in &mut dropping {
        dropping.0 = if controls.drop {
            DROP_TIME
        } else {
            (dropping.0 - time.delta_secs()).max(0.0)
        };
    }
}

fn move_player(
    controls: Res<Controls>,
    time: Res<Time>,
    query: SpatialQuery,
    movers: Query<&Mover>,
    player: Single<(Entity, &mut Player, &mut Transform, &Dropping)>,
) {
    let (entity, mut player, mut transform, dropping) = player.into_inner();
    let dt = time.delta_secs();
    player.velocity.x = controls.run * RUN_SPEED;
    player.velocity.y -= GRAVITY * dt;
    if controls.jump && player.ground.is_some() {
        player.velocity.y = JUMP_SPEED;
    }
    // What it stands on carries it.
    let carried = (player.ground)
        .and_then(|ground| movers.get(ground).ok())
        .map_or(Vec2::ZERO, |mover| mover.velocity * dt);
    let motion = player.velocity * dt + carried;
    let config = MoveAndSlideConfig {
        drop_through: dropping.0 > 0.0,
        ..default()
    };
    let Some(moved) = query.move_and_slide(entity, motion, &config) else {
        return;
    };
    transform.translation += moved.motion.extend(0.0);
    let bumped_head = moved.ceiling().is_some();
    if (moved.grounded() && player.velocity.y < 0.0) || (bumped_head && player.velocity.y > 0.0) {
        player.velocity.y = 0.0;
    }
    player.ground = moved.ground.map(|(ground, _)| ground);
}
