//! The pipeline over a compute task pool of four threads, so that the prepare stage and the exact
//! tests take their parallel paths: every frame must still match brute force (or, at 40,000
//! colliders, an independent sweep), and a collider turning invalid and back must be marked from
//! inside the parallel loop. A table whose transforms are scaled and unscaled in a mix gets the
//! shapes of its transforms.

mod common;

use bevy::prelude::*;
use bevy::tasks::ComputeTaskPool;
use bevy_rect_collision::collider::pose_from_global_transform;
use bevy_rect_collision::prelude::*;
use common::*;

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
    // Dense enough for more pairs than the narrow phase's parallel threshold (4,096).
    let colliders = spawn_movers(&mut app, Rng::new(0x9a7a_11e1), 3000, 80.0, 0.6..2.6);
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
        let expected = assert_matches_brute_force(&mut app, &format!("frame {frame}"));
        assert!(expected.len() > 1000, "frame {frame}: the world must touch");
        let invalid = app.world().get::<InvalidCollider>(broken).is_some();
        assert_eq!(
            invalid,
            (2..5).contains(&frame),
            "frame {frame}: the NaN collider is marked invalid exactly while it is NaN"
        );
    }
}

#[test]
fn parallel_build_of_a_large_world_matches_a_sweep_every_frame() {
    let mut app = app_with_compute_threads(4);
    app.add_systems(Update, move_all);
    let count = 40_000;
    let side = 2.5 * (count as f32).sqrt();
    spawn_movers(&mut app, Rng::new(0x51de_5eed), count, side, 1.0..3.0);
    for frame in 0..3 {
        app.update();
        let colliders = app.world().resource::<CollisionDiagnostics>().colliders;
        assert_eq!(colliders, count, "frame {frame}: every collider takes part");
        let expected = swept_pairs(&mut app);
        assert!(
            expected.len() > 32_768,
            "frame {frame}: the world must touch: {} pairs",
            expected.len()
        );
        assert_matches(&mut app, &expected, frame);
    }
    assert_eq!(ComputeTaskPool::get().thread_num(), 4);
}

/// Moves every collider by a thirtieth of its velocity, without turning: a drift within the fat AABBs
/// of most proxies.
fn drift_all(mut movers: Query<(&mut Transform, &Velocity)>) {
    for (mut transform, velocity) in &mut movers {
        transform.translation += (velocity.0 / 30.0).extend(0.0);
    }
}

#[test]
fn parallel_drift_of_a_large_world_matches_a_sweep_every_frame() {
    let mut app = app_with_compute_threads(4);
    app.add_systems(Update, drift_all);
    let count = 40_000;
    let side = 2.5 * (count as f32).sqrt();
    let colliders = spawn_movers(&mut app, Rng::new(0xd21f_7ed5), count, side, 1.0..3.0);
    app.update();
    for frame in 1..8 {
        if frame == 3 {
            // Out of its fat AABB, onto another collider.
            let onto = app
                .world()
                .get::<Transform>(colliders[2])
                .unwrap()
                .translation;
            app.world_mut()
                .get_mut::<Transform>(colliders[0])
                .unwrap()
                .translation = onto;
        }
        if frame == 5 {
            app.world_mut().entity_mut(colliders[1]).insert(Tagged);
        }
        app.update();
        let expected = swept_pairs(&mut app);
        assert_matches(&mut app, &expected, frame);
    }
    assert_eq!(ComputeTaskPool::get().thread_num(), 4);
}

/// The colliders [`move_listed`] moves.
#[derive(Resource, Default)]
struct Movers(Vec<Entity>);

/// Moves and turns the colliders listed in [`Movers`], leaving the rest untouched: all of them stay in
/// one table of Bevy's, so that the prepare stage splits the few movers' table over the pool.
fn move_listed(movers: Res<Movers>, mut colliders: Query<(&mut Transform, &Velocity)>) {
    for &entity in &movers.0 {
        let (mut transform, velocity) = colliders.get_mut(entity).unwrap();
        transform.translation += velocity.0.extend(0.0);
        transform.rotate_z(0.05);
    }
}

#[test]
fn few_movers_over_a_parallel_prepare_stage_match_brute_force() {
    let mut app = app_with_compute_threads(4);
    app.init_resource::<Movers>()
        .add_systems(Update, move_listed);
    let count = 3000;
    let colliders = spawn_movers(&mut app, Rng::new(0x0f3e_70e5), count, 80.0, 0.6..2.6);
    // One collider in twenty moves, then one in seven.
    let start_moving = |app: &mut App, every: usize, from: usize| {
        let mut movers = app.world_mut().resource_mut::<Movers>();
        movers.0.extend(colliders.iter().skip(from).step_by(every));
    };
    start_moving(&mut app, 20, 0);
    app.update();
    for frame in 0..8 {
        if frame == 4 {
            // 300 more: 450 colliders moving, past one in eight.
            start_moving(&mut app, 10, 5);
        }
        app.update();
        let expected = assert_matches_brute_force(&mut app, &format!("frame {frame}"));
        assert!(expected.len() > 1000, "frame {frame}: the world must touch");
    }
}

#[test]
fn mixed_scales_over_a_parallel_prepare_stage_give_the_shapes_of_the_transforms() {
    let mut app = app_with_compute_threads(4);
    app.add_systems(Update, move_all);
    let colliders = spawn_movers(&mut app, Rng::new(0x5ca1_ed00), 3000, 80.0, 0.6..2.6);
    // Half the colliders, drawn at random, scaled a little: the table holds scaled and unscaled
    // transforms in no order, so that every task builds its shapes without the branch on the scale.
    let mut rng = Rng::new(0x0dd5);
    for &entity in &colliders {
        if rng.range(0.0, 1.0) < 0.5 {
            let scale = rng.range(0.8, 1.25);
            app.world_mut().get_mut::<Transform>(entity).unwrap().scale =
                Vec3::new(scale, 1.1, 1.0);
        }
    }
    app.update();
    assert_eq!(ComputeTaskPool::get().thread_num(), 4);
    for frame in 0..4 {
        app.update();
        for &entity in &colliders {
            let world = app.world();
            let collider = world.get::<Collider>(entity).unwrap();
            let transform = world.get::<GlobalTransform>(entity).unwrap();
            assert_eq!(
                world.get::<ColliderWorldShape>(entity).unwrap().0,
                collider.world_shape(&pose_from_global_transform(transform)),
                "frame {frame}: {entity}"
            );
        }
        let expected = assert_matches_brute_force(&mut app, &format!("frame {frame}"));
        assert!(expected.len() > 1000, "frame {frame}: the world must touch");
    }
}
