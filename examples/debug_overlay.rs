//! Moving colliders of every kind with the full debug overlay: outlines coloured by state,
//! bounding boxes, contact normals and depths, and the egui panel with counts, stage timings, the
//! touching pairs and the selected collider. Click a collider to inspect it; `F9` toggles the gizmos.
//!
//! Run: `cargo run --example debug_overlay --features egui`

use bevy::prelude::*;
use bevy_rect_collision::prelude::*;

/// Half the size of the box the colliders bounce in.
const ARENA: Vec2 = Vec2::new(560.0, 300.0);

fn main() {
    App::new()
        .add_plugins((
            DefaultPlugins,
            RectCollisionPlugin::default(),
            RectCollisionEguiPlugin,
        ))
        .add_systems(Startup, setup)
        .add_systems(Update, bounce)
        .run();
}

#[derive(Component)]
struct Velocity {
    linear: Vec2,
    angular: f32,
}

fn setup(
    mut commands: Commands,
    mut store: ResMut<GizmoConfigStore>,
    mut selected: ResMut<SelectedCollider>,
) {
    commands.spawn(Camera2d);
    store.config_mut::<CollisionGizmos>().1.aabbs = true;
    // A fixed pattern rather than randomness, so every run (and every CI screenshot) looks the same.
    for i in 0..42 {
        let t = i as f32;
        let position = Vec2::new((t * 2.399).cos(), (t * 1.713).sin()) * ARENA * 0.85;
        let size = Vec2::new(30.0 + (t * 7.0) % 50.0, 20.0 + (t * 11.0) % 40.0);
        let collider = match i % 5 {
            0 => Collider::rect(size.x, size.y),
            1 => Collider::rotated_rect(size.x, size.y),
            2 => Collider::circle(size.y * 0.6),
            3 => Collider::capsule(size.y * 0.4, size.x * 0.6),
            _ => Collider::convex_polygon(&[
                Vec2::new(-size.x, -size.y) * 0.5,
                Vec2::new(size.x, -size.y) * 0.5,
                Vec2::new(size.x * 0.3, size.y * 0.5),
                Vec2::new(-size.x * 0.4, size.y * 0.4),
            ]),
        };
        let velocity = Velocity {
            linear: Vec2::new((t * 3.1).sin(), (t * 5.3).cos()) * 60.0,
            angular: (t * 0.7).sin(),
        };
        let entity = commands
            .spawn((
                Transform::from_translation(position.extend(0.0))
                    .with_rotation(Quat::from_rotation_z(t * 0.4)),
                collider,
                velocity,
            ))
            .id();
        if i == 8 {
            selected.0 = Some(entity);
        }
    }
    // The arena's walls: static rects on a layer of their own, still colliding with everything.
    for (center, size) in [
        (
            Vec2::new(0.0, ARENA.y + 10.0),
            Vec2::new(ARENA.x * 2.0 + 40.0, 20.0),
        ),
        (
            Vec2::new(0.0, -ARENA.y - 10.0),
            Vec2::new(ARENA.x * 2.0 + 40.0, 20.0),
        ),
        (
            Vec2::new(ARENA.x + 10.0, 0.0),
            Vec2::new(20.0, ARENA.y * 2.0),
        ),
        (
            Vec2::new(-ARENA.x - 10.0, 0.0),
            Vec2::new(20.0, ARENA.y * 2.0),
        ),
    ] {
        commands.spawn((
            Transform::from_translation(center.extend(0.0)),
            Collider::rect(size.x, size.y),
            CollisionLayers::new(0b10, u32::MAX),
        ));
    }
}

fn bounce(time: Res<Time>, mut movers: Query<(&mut Transform, &mut Velocity)>) {
    let dt = time.delta_secs();
    for (mut transform, mut velocity) in &mut movers {
        let mut position = transform.translation.truncate() + velocity.linear * dt;
        for axis in 0..2 {
            if position[axis].abs() > ARENA[axis] {
                velocity.linear[axis] = -velocity.linear[axis];
                position[axis] = position[axis].clamp(-ARENA[axis], ARENA[axis]);
            }
        }
        transform.translation = position.extend(0.0);
        transform.rotate_z(velocity.angular * dt);
    }
}
