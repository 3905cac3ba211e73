//! Fast bullets through thin walls, side by side: the upper gun's bullets are `SweptCollider`s and stop
//! at the first wall they reach, with a spark where they hit it; the lower gun's bullets are tested
//! only where each frame leaves them, and most pass through walls thinner than a frame's move. The
//! debug overlay draws each swept bullet's way since the last frame in gold.
//!
//! Run: `cargo run --example bullets`

#[path = "support/mod.rs"]
mod support;

use bevy::prelude::*;
use bevy_rect_collision::debug::RectCollisionDebugPlugin;
use bevy_rect_collision::prelude::*;
use support::help_text;

const BULLET: u32 = 1 << 0;
const WALL: u32 = 1 << 1;

/// How far a bullet moves a frame: many times a wall's thickness.
const STEP: f32 = 45.0;
/// How often each gun fires, in frames.
const FIRE_EVERY: u32 = 4;
/// Where the guns fire from, and how far right a bullet flies before it is dropped.
const MUZZLE_X: f32 = -600.0;
const RANGE_X: f32 = 640.0;

#[derive(Component)]
struct Bullet;

#[derive(Component)]
struct Wall;

/// A mark where a bullet hit a wall, fading out over its frames.
#[derive(Component)]
struct Spark(u32);

/// The two lanes: where each gun stands, whether its bullets are swept, and its colour.
const LANES: [(f32, bool, Color); 2] = [
    (150.0, true, Color::srgb(0.3, 0.8, 1.0)),
    (-150.0, false, Color::srgb(1.0, 0.75, 0.3)),
];

fn main() {
    App::new()
        .add_plugins((
            DefaultPlugins,
            RectCollisionPlugin::default(),
            RectCollisionDebugPlugin,
        ))
        .add_systems(Startup, setup)
        .add_systems(Update, (fire, fly, fade_sparks))
        .add_systems(PostUpdate, mark_hits.after(CollisionSystems::Events))
        .run();
}

fn setup(mut commands: Commands) {
    commands.spawn(Camera2d);
    commands.spawn(help_text(
        "Bullets move 45 px a frame through walls 4 px thick.\n\
         Upper lane: SweptCollider, every bullet stops at the first wall.\n\
         Lower lane: tested where each frame leaves them, most pass through.",
    ));
    for (lane_y, _, _) in LANES {
        for (k, x) in [-300.0, -120.0, 60.0, 240.0, 420.0].into_iter().enumerate() {
            // Every other wall turned a little, as thin walls in a level are.
            let angle = if k % 2 == 1 { 0.35 } else { 0.0 };
            commands.spawn((
                Wall,
                Transform::from_xyz(x, lane_y, 0.0).with_rotation(Quat::from_rotation_z(angle)),
                Collider::rotated_rect(4.0, 200.0),
                CollisionLayers::new(WALL, BULLET),
                Sprite::from_color(Color::srgb(0.6, 0.6, 0.65), Vec2::new(4.0, 200.0)),
            ));
        }
    }
}

/// Each gun fires a bullet every few frames, at heights that walk up and down its lane.
fn fire(mut commands: Commands, mut frame: Local<u32>) {
    *frame += 1;
    if !frame.is_multiple_of(FIRE_EVERY) {
        return;
    }
    let shot = *frame / FIRE_EVERY;
    let height = ((shot * 37) % 160) as f32 - 80.0;
    // Each shot starts a little further along, so that the unswept bullets' frames fall at different
    // places against the walls.
    let start = MUZZLE_X + (shot * 11 % 45) as f32;
    for (lane_y, swept, color) in LANES {
        let mut bullet = commands.spawn((
            Bullet,
            Transform::from_xyz(start, lane_y + height, 1.0),
            Collider::circle(4.0),
            CollisionLayers::new(BULLET, WALL),
            Sprite::from_color(color, Vec2::splat(8.0)),
        ));
        if swept {
            bullet.insert(SweptCollider);
        }
    }
}

/// Moves every bullet a fixed step a frame, so that the picture does not depend on the frame rate;
/// drops those out of range.
fn fly(mut commands: Commands, mut bullets: Query<(Entity, &mut Transform), With<Bullet>>) {
    for (entity, mut transform) in &mut bullets {
        transform.translation.x += STEP;
        if transform.translation.x > RANGE_X {
            commands.entity(entity).despawn();
        }
    }
}

/// A bullet that hit a wall leaves a spark where it first touched the nearest it reached, and goes.
fn mark_hits(
    mut commands: Commands,
    mut hits: MessageReader<CollisionStarted>,
    bullets: Query<(), With<Bullet>>,
) {
    // A swept bullet may pass two walls in a frame: the first it reached is the one it stops at.
    let mut first: Vec<(Entity, f32, Vec2)> = Vec::new();
    for hit in hits.read() {
        let Some(bullet) = [hit.collider1, hit.collider2]
            .into_iter()
            .find(|&entity| bullets.contains(entity))
        else {
            continue;
        };
        let time = hit.time_of_impact.unwrap_or(1.0);
        match first.iter_mut().find(|(entity, _, _)| *entity == bullet) {
            Some(earlier) if time < earlier.1 => *earlier = (bullet, time, hit.point),
            Some(_) => {}
            None => first.push((bullet, time, hit.point)),
        }
    }
    for (bullet, _, point) in first {
        commands.spawn((
            Spark(30),
            Transform::from_translation(point.extend(2.0)),
            Sprite::from_color(Color::srgb(1.0, 0.3, 0.25), Vec2::splat(10.0)),
        ));
        commands.entity(bullet).despawn();
    }
}

fn fade_sparks(mut commands: Commands, mut sparks: Query<(Entity, &mut Spark, &mut Sprite)>) {
    for (entity, mut spark, mut sprite) in &mut sparks {
        spark.0 = spark.0.saturating_sub(1);
        sprite.color.set_alpha(spark.0 as f32 / 30.0);
        if spark.0 == 0 {
            commands.entity(entity).despawn();
        }
    }
}
