//! A level of 200 × 40 tiles in one `TilemapCollider`: its solid cells merge into few rectangle
//! colliders (drawn, with the debug overlay's outlines), walls and floors apart from the green
//! one-way platforms, which are a kind of their own. A character runs over it with `move_and_slide`,
//! across region and chunk borders without a bump. Dig or place tiles under the cursor: only the
//! chunk edited is merged again. Until a key is pressed, the character runs and jumps by itself.
//!
//! Keys: `A`/`D` or arrows run, `Space` jumps, `S` or down drops through a one-way platform; `X` or
//! the left mouse button digs the tile under the cursor, `C` or the right button places a wall.
//!
//! Run: `cargo run --example tilemap`

#[path = "support/mod.rs"]
mod support;

use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_rect_collision::debug::RectCollisionDebugPlugin;
use bevy_rect_collision::prelude::*;
use support::{Controls, DemoRun, cursor_world_position, help_text, read_controls};

const MAP: UVec2 = UVec2::new(200, 40);
const TILE: f32 = 16.0;
const GROUND: u8 = 1;
const WALL: u8 = 2;
const ONE_WAY: u8 = 3;

const GRAVITY: f32 = 1500.0;
const RUN_SPEED: f32 = 220.0;
const JUMP_SPEED: f32 = 560.0;
/// How long a drop through a one-way platform lasts, in seconds.
const DROP_TIME: f32 = 0.25;

/// The level touches only the player: its regions make no pairs with each other.
const PLAYER: u32 = 1 << 0;
const LEVEL: u32 = 1 << 1;

#[derive(Component, Default)]
struct Player {
    velocity: Vec2,
    grounded: bool,
    /// Seconds left of a drop through one-way platforms.
    dropping: f32,
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
            period: 900,
            forward: 600,
            jump_every: 45,
        })
        .add_systems(Startup, setup)
        .add_systems(
            Update,
            (read_controls, move_player, follow_player, edit_tiles).chain(),
        )
        .add_systems(PostUpdate, draw_new_regions)
        .run();
}

/// The level: rolling ground, a few walls, and floating one-way platforms.
fn level() -> TilemapCollider {
    let layers = CollisionLayers::new(LEVEL, PLAYER);
    let mut map = TilemapCollider::new(MAP, Vec2::splat(TILE))
        .with_layers(GROUND, layers)
        .with_layers(WALL, layers)
        .with_layers(ONE_WAY, layers)
        .with_one_way(ONE_WAY);
    for x in 0..MAP.x {
        let hill = 5.0 + 3.0 * (x as f32 * 0.11).sin() + 2.0 * (x as f32 * 0.037).cos();
        map.fill(UVec2::new(x, 0), UVec2::new(x + 1, hill as u32), GROUND);
    }
    // Walls at both ends, and a few pillars to climb over.
    map.fill(UVec2::ZERO, UVec2::new(1, MAP.y), WALL);
    map.fill(UVec2::new(MAP.x - 1, 0), MAP, WALL);
    for x in [37, 81, 122, 166] {
        map.fill(UVec2::new(x, 0), UVec2::new(x + 2, 11), WALL);
    }
    for (x, y, width) in [
        (20, 12, 9),
        (30, 17, 7),
        (55, 13, 12),
        (95, 14, 10),
        (140, 12, 14),
    ] {
        map.fill(UVec2::new(x, y), UVec2::new(x + width, y + 1), ONE_WAY);
    }
    map
}

fn setup(mut commands: Commands) {
    commands.spawn(Camera2d);
    commands.spawn(help_text(
        "A/D or arrows: run   Space: jump   S or down: drop through green   X / left click: dig   \
         C / right click: place a wall\n\
         200 x 40 tiles, merged into the rectangles outlined; an edit merges its 32 x 32 chunk again.",
    ));
    // The map's lower left corner at the left of the view, a little below its middle.
    commands.spawn((level(), Transform::from_xyz(-620.0, -340.0, 0.0)));
    commands.spawn((
        Player::default(),
        Transform::from_xyz(-560.0, -100.0, 1.0),
        Collider::rect(12.0, 26.0),
        CollisionLayers::new(PLAYER, LEVEL),
        Sprite::from_color(Color::srgb(0.3, 0.7, 1.0), Vec2::new(12.0, 26.0)),
    ));
}

/// Gives each new region a sprite of its kind's colour, the size of its collider.
fn draw_new_regions(
    mut commands: Commands,
    maps: Query<&TilemapCollider>,
    regions: Query<(Entity, &TileRegion, &TileRegionOf), Added<TileRegion>>,
) {
    for (entity, region, of) in &regions {
        let Ok(map) = maps.get(of.0) else {
            continue;
        };
        let color = match region.kind {
            GROUND => Color::srgb(0.42, 0.33, 0.25),
            WALL => Color::srgb(0.45, 0.47, 0.55),
            _ => Color::srgb(0.35, 0.75, 0.45),
        };
        let size = (region.max - region.min).as_vec2() * map.tile_size();
        commands
            .entity(entity)
            .insert(Sprite::from_color(color, size));
    }
}

fn move_player(
    controls: Res<Controls>,
    time: Res<Time>,
    query: SpatialQuery,
    player: Single<(Entity, &mut Player, &mut Transform)>,
) {
    let (entity, mut player, mut transform) = player.into_inner();
    let dt = time.delta_secs();
    player.dropping = if controls.drop {
        DROP_TIME
    } else {
        (player.dropping - dt).max(0.0)
    };
    player.velocity.x = controls.run * RUN_SPEED;
    player.velocity.y -= GRAVITY * dt;
    if controls.jump && player.grounded {
        player.velocity.y = JUMP_SPEED;
    }
    let config = MoveAndSlideConfig {
        drop_through: player.dropping > 0.0,
        ..default()
    };
    let Some(moved) = query.move_and_slide(entity, player.velocity * dt, &config) else {
        return;
    };
    transform.translation += moved.motion.extend(0.0);
    let bumped_head = moved.ceiling().is_some();
    if (moved.grounded() && player.velocity.y < 0.0) || (bumped_head && player.velocity.y > 0.0) {
        player.velocity.y = 0.0;
    }
    player.grounded = moved.grounded();
}

/// Keeps the player in view, within the map's width.
fn follow_player(
    player: Single<&Transform, (With<Player>, Without<Camera2d>)>,
    mut camera: Single<&mut Transform, With<Camera2d>>,
) {
    let left = -620.0 + 640.0;
    let right = -620.0 + MAP.x as f32 * TILE - 640.0;
    camera.translation.x = player.translation.x.clamp(left, right);
}

/// Digs or places the tile under the cursor.
fn edit_tiles(
    keys: Res<ButtonInput<KeyCode>>,
    buttons: Res<ButtonInput<MouseButton>>,
    window: Query<&Window, With<PrimaryWindow>>,
    camera: Query<(&Camera, &GlobalTransform)>,
    map: Single<(&mut TilemapCollider, &GlobalTransform)>,
) {
    let dig = keys.pressed(KeyCode::KeyX) || buttons.pressed(MouseButton::Left);
    let place = keys.pressed(KeyCode::KeyC) || buttons.pressed(MouseButton::Right);
    if !(dig || place) {
        return;
    }
    let Some(cursor) = cursor_world_position(&window, &camera) else {
        return;
    };
    let (mut map, transform) = map.into_inner();
    let local = transform
        .affine()
        .inverse()
        .transform_point3(cursor.extend(0.0));
    if let Some(cell) = map.cell_at(local.truncate()) {
        map.set(cell, if dig { 0 } else { WALL });
    }
}
