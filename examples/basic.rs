//! Rectangles, rotated rectangles, circles, a capsule and a polygon you can drag with the mouse; shapes
//! turn red while they touch. `Q`/`E` turn the picked shape (an axis-aligned rectangle ignores
//! rotation), `F9` toggles the collision overlay.
//!
//! Run: `cargo run --example basic`

#[path = "support/mod.rs"]
mod support;

use bevy::prelude::*;
use bevy_rect_collision::prelude::*;
use support::{BaseColor, DragPlugin, help_text, mesh_for, sprite_for};

fn main() {
    App::new()
        .add_plugins((
            DefaultPlugins,
            RectCollisionPlugin::default(),
            RectCollisionDebugPlugin,
            DragPlugin,
        ))
        .add_systems(Startup, setup)
        .run();
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    commands.spawn(Camera2d);
    let blue = Color::srgb(0.25, 0.5, 0.9);
    let green = Color::srgb(0.3, 0.75, 0.45);
    let sand = Color::srgb(0.85, 0.7, 0.35);
    let shapes = [
        (
            Vec2::new(-320.0, 120.0),
            0.0,
            Collider::rect(160.0, 90.0),
            blue,
        ),
        (
            Vec2::new(-120.0, 150.0),
            0.0,
            Collider::rect(60.0, 180.0),
            blue,
        ),
        (
            Vec2::new(120.0, 120.0),
            0.5,
            Collider::rotated_rect(180.0, 60.0),
            green,
        ),
        (
            Vec2::new(330.0, 90.0),
            -0.3,
            Collider::rotated_rect(90.0, 90.0),
            green,
        ),
        (Vec2::new(-250.0, -150.0), 0.0, Collider::circle(60.0), sand),
        (Vec2::new(0.0, -120.0), 0.0, Collider::circle(35.0), sand),
        (
            Vec2::new(240.0, -160.0),
            0.9,
            Collider::rotated_rect(220.0, 40.0),
            green,
        ),
        (Vec2::new(40.0, 40.0), 0.0, Collider::circle(45.0), sand),
    ];
    for (position, angle, collider, color) in shapes {
        commands.spawn((
            Transform::from_translation(position.extend(0.0))
                .with_rotation(Quat::from_rotation_z(angle)),
            sprite_for(&collider, color, &assets),
            BaseColor(color),
            collider,
        ));
    }
    let violet = Color::srgb(0.6, 0.45, 0.85);
    let rounded = [
        (
            Vec2::new(-420.0, -60.0),
            0.4,
            Collider::capsule(30.0, 110.0),
        ),
        (
            Vec2::new(385.0, -55.0),
            0.0,
            Collider::convex_polygon(&[
                Vec2::new(-70.0, -50.0),
                Vec2::new(70.0, -50.0),
                Vec2::new(90.0, 20.0),
                Vec2::new(0.0, 75.0),
                Vec2::new(-90.0, 20.0),
            ]),
        ),
    ];
    for (position, angle, collider) in rounded {
        commands.spawn((
            Transform::from_translation(position.extend(0.0))
                .with_rotation(Quat::from_rotation_z(angle)),
            mesh_for(&collider, violet, &mut meshes, &mut materials),
            BaseColor(violet),
            collider,
        ));
    }
    commands.spawn(help_text(
        "Drag shapes with the mouse: they turn red while they touch.\n\
         Q / E turn the picked shape (blue rectangles stay axis-aligned).\n\
         F9 toggles the collision overlay.",
    ));
}
