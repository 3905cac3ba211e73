//! The demo of "Circle and Rotated Rectangle Collision Detection": a circle against a rotated rectangle. Drag the circle; `A`/`D` turn the rectangle.
//! The line joins the circle's centre to the rectangle's closest point, found by moving the centre into
//! the rectangle's frame and clamping; both turn red on contact.
//!
//! Run: `cargo run --example circle_vs_rotated_rect`

#[path = "support/mod.rs"]
mod support;

use bevy::prelude::*;
use bevy_rect_collision::geometry::WorldShape;
use bevy_rect_collision::prelude::*;
use support::{BaseColor, DragPlugin, TOUCHING, help_text, sprite_for};

#[derive(Component)]
struct Target;

#[derive(Component)]
struct Ball;

fn main() {
    App::new()
        .add_plugins((DefaultPlugins, RectCollisionPlugin::default(), DragPlugin))
        .add_systems(Startup, setup)
        .add_systems(Update, turn_target)
        .add_systems(
            PostUpdate,
            draw_closest_point.after(CollisionSystems::Events),
        )
        .run();
}

fn setup(mut commands: Commands, assets: Res<AssetServer>) {
    commands.spawn(Camera2d);
    let rect = Collider::rotated_rect(320.0, 160.0);
    let blue = Color::srgb(0.25, 0.5, 0.9);
    commands.spawn((
        Target,
        Transform::from_rotation(Quat::from_rotation_z(0.5)),
        sprite_for(&rect, blue, &assets),
        BaseColor(blue),
        rect,
    ));
    let circle = Collider::circle(50.0);
    let sand = Color::srgb(0.85, 0.7, 0.35);
    commands.spawn((
        Ball,
        Transform::from_xyz(260.0, 180.0, 1.0),
        sprite_for(&circle, sand, &assets),
        BaseColor(sand),
        circle,
    ));
    commands.spawn(help_text(
        "Drag the circle. A / D turn the rectangle.\n\
         The line joins the circle's centre to the rectangle's closest point.",
    ));
}

fn turn_target(
    keys: Res<ButtonInput<KeyCode>>,
    time: Res<Time>,
    mut target: Single<&mut Transform, With<Target>>,
) {
    let turn = keys.pressed(KeyCode::KeyA) as i32 - keys.pressed(KeyCode::KeyD) as i32;
    target.rotate_z(turn as f32 * 1.2 * time.delta_secs());
}

fn draw_closest_point(
    mut gizmos: Gizmos,
    target: Single<(&ColliderWorldShape, &CollidingEntities), With<Target>>,
    ball: Single<&ColliderWorldShape, With<Ball>>,
) {
    let (ColliderWorldShape(Some(WorldShape::RotatedRect(rect))), touching) = *target else {
        return;
    };
    let ColliderWorldShape(Some(WorldShape::Circle(circle))) = **ball else {
        return;
    };
    let closest = rect.closest_point(circle.center);
    let color = if touching.is_empty() {
        Color::WHITE
    } else {
        TOUCHING
    };
    gizmos.line_2d(circle.center, closest, color);
    gizmos.circle_2d(Isometry2d::from_translation(closest), 5.0, color);
}
