//! A small game built on the collision events. Arrow keys move the player; coins are collected by an
//! observer on each coin (`On<CollisionStarted>`); standing in the red zone drains health until a
//! `MessageReader<CollisionEnded>` says you left; walls block the player, and coins ignore walls
//! through their layers.
//!
//! Run: `cargo run --example gameplay_events`

#[path = "support/mod.rs"]
mod support;

use bevy::prelude::*;
use bevy_rect_collision::prelude::*;
use support::help_text;

const PLAYER: u32 = 1 << 0;
const WALL: u32 = 1 << 1;
const COIN: u32 = 1 << 2;
const HAZARD: u32 = 1 << 3;

#[derive(Component)]
struct Player;

#[derive(Component)]
struct Hazard;

#[derive(Component)]
struct Wall;

#[derive(Component)]
struct Hud;

#[derive(Resource)]
struct Game {
    score: u32,
    health: f32,
    in_hazard: bool,
}

fn main() {
    App::new()
        .add_plugins((DefaultPlugins, RectCollisionPlugin::default()))
        .insert_resource(Game {
            score: 0,
            health: 100.0,
            in_hazard: false,
        })
        .add_systems(Startup, setup)
        .add_systems(Update, (move_player, drain_health, update_hud))
        .add_systems(
            PostUpdate,
            (track_hazard, block_at_walls).after(CollisionSystems::Events),
        )
        .run();
}

fn setup(mut commands: Commands, assets: Res<AssetServer>) {
    commands.spawn(Camera2d);
    commands.spawn((
        Player,
        Transform::from_xyz(-400.0, -200.0, 2.0),
        Collider::rect(36.0, 36.0),
        CollisionLayers::new(PLAYER, WALL | COIN | HAZARD),
        Sprite::from_color(Color::srgb(0.3, 0.6, 1.0), Vec2::splat(36.0)),
    ));
    let walls = [
        (Vec2::new(0.0, 300.0), Vec2::new(1100.0, 24.0)),
        (Vec2::new(0.0, -300.0), Vec2::new(1100.0, 24.0)),
        (Vec2::new(-550.0, 0.0), Vec2::new(24.0, 624.0)),
        (Vec2::new(550.0, 0.0), Vec2::new(24.0, 624.0)),
        (Vec2::new(-150.0, -60.0), Vec2::new(24.0, 360.0)),
        (Vec2::new(200.0, 120.0), Vec2::new(300.0, 24.0)),
    ];
    for (center, size) in walls {
        commands.spawn((
            Wall,
            Transform::from_translation(center.extend(0.0)),
            Collider::rect(size.x, size.y),
            CollisionLayers::new(WALL, PLAYER),
            Sprite::from_color(Color::srgb(0.45, 0.45, 0.5), size),
        ));
    }
    commands.spawn((
        Hazard,
        Transform::from_xyz(300.0, -150.0, 0.0).with_rotation(Quat::from_rotation_z(0.3)),
        Collider::rotated_rect(260.0, 160.0),
        CollisionLayers::new(HAZARD, PLAYER),
        Sprite::from_color(Color::srgba(0.9, 0.2, 0.2, 0.35), Vec2::new(260.0, 160.0)),
    ));
    // Some coins sit on a wall: they ignore walls, so nothing happens until the player reaches them.
    let coins = [
        (-450.0, 200.0),
        (-300.0, 50.0),
        (-150.0, 150.0),
        (0.0, -200.0),
        (120.0, 120.0),
        (300.0, 220.0),
        (420.0, -20.0),
        (300.0, -150.0),
    ];
    for (x, y) in coins {
        commands
            .spawn((
                Transform::from_xyz(x, y, 1.0),
                Collider::circle(14.0),
                CollisionLayers::new(COIN, PLAYER),
                Sprite {
                    image: assets.load("coin.png"),
                    custom_size: Some(Vec2::splat(28.0)),
                    ..default()
                },
            ))
            .observe(collect_coin);
    }
    commands.spawn((Hud, help_text("")));
}

/// An observer on each coin: the player touched it.
fn collect_coin(hit: On<CollisionStarted>, mut game: ResMut<Game>, mut commands: Commands) {
    game.score += 1;
    commands.entity(hit.collider1).despawn();
}

fn move_player(
    keys: Res<ButtonInput<KeyCode>>,
    time: Res<Time>,
    game: Res<Game>,
    mut player: Single<&mut Transform, With<Player>>,
) {
    if game.health <= 0.0 {
        return;
    }
    let axis = |negative, positive| {
        keys.pressed(positive) as i32 as f32 - keys.pressed(negative) as i32 as f32
    };
    let direction = Vec2::new(
        axis(KeyCode::ArrowLeft, KeyCode::ArrowRight),
        axis(KeyCode::ArrowDown, KeyCode::ArrowUp),
    );
    player.translation += (direction.normalize_or_zero() * 260.0 * time.delta_secs()).extend(0.0);
}

/// Enters and leaves the hazard by reading the messages.
fn track_hazard(
    mut started: MessageReader<CollisionStarted>,
    mut ended: MessageReader<CollisionEnded>,
    hazard: Single<Entity, With<Hazard>>,
    mut game: ResMut<Game>,
) {
    let involves_hazard = |a: Entity, b: Entity| a == *hazard || b == *hazard;
    if started
        .read()
        .any(|e| involves_hazard(e.collider1, e.collider2))
    {
        game.in_hazard = true;
    }
    if ended
        .read()
        .any(|e| involves_hazard(e.collider1, e.collider2))
    {
        game.in_hazard = false;
    }
}

/// Pushes the player out of walls along each contact's normal, using the polled contacts.
fn block_at_walls(
    contacts: Res<Contacts>,
    walls: Query<(), With<Wall>>,
    mut player: Single<(Entity, &mut Transform), With<Player>>,
) {
    let (entity, ref mut transform) = *player;
    for (other, contact) in contacts.of(entity) {
        if walls.contains(other) {
            transform.translation -= (contact.normal * contact.depth).extend(0.0);
        }
    }
}

fn drain_health(time: Res<Time>, mut game: ResMut<Game>) {
    if game.in_hazard {
        game.health = (game.health - 25.0 * time.delta_secs()).max(0.0);
    }
}

fn update_hud(game: Res<Game>, mut hud: Single<&mut Text, With<Hud>>) {
    let status = if game.health <= 0.0 {
        "Out of health!"
    } else if game.in_hazard {
        "In the red zone: losing health"
    } else {
        "Collect the coins"
    };
    hud.0 = format!(
        "Arrow keys move. Coins: {}  Health: {:.0}\n{status}",
        game.score, game.health
    );
}
