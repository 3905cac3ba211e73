//! The pipeline over a compute task pool of four threads, so that the prepare stage, the grid's pair
//! search and the exact tests all take their parallel paths: every frame must still match brute force,
//! and a collider turning invalid and back must be marked from inside the parallel loop.

mod common;

use bevy::prelude::*;
use bevy::tasks::ComputeTaskPool;
use bevy_rect_collision::prelude::*;
use common::*;

#[derive(Component)]
struct Velocity(Vec2);

fn move_all(mut movers: Query<(&mut Transform, &Velocity)>) {
    for (mut transform, velocity) in &mut movers {
        transform.translation += velocity.0.extend(0.0);
        transform.rotate_z(0.05);
    }
}

#[test]
fn parallel_pipeline_matches_brute_force_every_frame() {
    let mut app = app_with_compute_threads(4);
    app.add_systems(Update, move_all);
    let mut rng = Rng(0x9a7a_11e1);
    // Dense enough for more candidates than the narrow phase's parallel threshold (4,096).
    let side = 80.0;
    let colliders: Vec<Entity> = (0..3000)
        .map(|i| {
            let position = Vec2::new(rng.range(-side, side), rng.range(-side, side)) * 0.5;
            let (w, h) = (rng.range(0.6, 2.6), rng.range(0.6, 2.6));
            let collider = match i % 3 {
                0 => Collider::rect(w, h),
                1 => Collider::rotated_rect(w, h),
                _ => Collider::circle(w * 0.5),
            };
            let velocity = Velocity(Vec2::new(rng.range(-0.3, 0.3), rng.range(-0.3, 0.3)));
            let transform = Transform::from_translation(position.extend(0.0))
                .with_rotation(Quat::from_rotation_z(rng.range(-3.1, 3.1)));
            app.world_mut().spawn((transform, collider, velocity)).id()
        })
        .collect();
    app.update();
    assert_eq!(
        ComputeTaskPool::get().thread_num(),
        4,
        "the parallel paths need a pool of several threads"
    );
    let broken = colliders[17];
    for frame in 0..8 {
        if frame == 2 {
            let mut transform = app.world_mut().get_mut::<Transform>(broken).unwrap();
            transform.translation.x = f32::NAN;
        }
        if frame == 5 {
            app.world_mut()
                .get_mut::<Transform>(broken)
                .unwrap()
                .translation = Vec3::ZERO;
        }
        app.update();
        let candidates = app
            .world()
            .resource::<CollisionDiagnostics>()
            .candidate_pairs;
        assert!(
            candidates > 4096,
            "frame {frame}: {candidates} candidates, below the parallel threshold"
        );
        let expected = brute_force_pairs(&mut app);
        assert!(expected.len() > 1000, "frame {frame}: the world must touch");
        assert_eq!(
            colliding_pairs(&mut app),
            expected,
            "frame {frame}: CollidingEntities against brute force"
        );
        assert_eq!(
            replayed_pairs(&app),
            expected,
            "frame {frame}: the event stream against brute force"
        );
        let invalid = app.world().get::<InvalidCollider>(broken).is_some();
        assert_eq!(
            invalid,
            (2..5).contains(&frame),
            "frame {frame}: the NaN collider is marked invalid exactly while it is NaN"
        );
    }
}
