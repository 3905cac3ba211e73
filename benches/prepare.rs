//! Nanoseconds per collider for the prepare stage's work: a world shape from a `GlobalTransform`, as
//! the stage builds it (`internals::world_shape_from_transform`, which branches on whether the
//! transform is scaled), and through the pose (`pose_from_global_transform`, then
//! `Collider::world_shape`), on the workload runner's mix of shapes. The stage's way takes four sets
//! of transforms: unscaled, as the runner's colliders start;
//! scaled by 2; turned by `rotate_z` for a minute of frames, as the runner turns its colliders, which
//! drifts the axes' lengths out of the unscaled range for three quarters of them; and half of them so
//! turned, chosen at random. The way through the pose takes the unscaled ones.
//!
//! Run: `cargo bench -p bevy_rect_collision_benches --bench prepare`. Each iteration builds 4,096 world
//! shapes; criterion's throughput line gives colliders per second.

use std::hint::black_box;

use bevy::prelude::*;
use bevy_rect_collision::collider::pose_from_global_transform;
use bevy_rect_collision::internals;
use bevy_rect_collision::prelude::*;
use bevy_rect_collision_benches::{SeededRng, Spawn};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

const COLLIDERS: usize = 4096;

fn world_shapes(c: &mut Criterion) {
    let colliders = |adjust: &dyn Fn(usize, Transform) -> Transform| {
        let mut rng = SeededRng::new(0x5eed_0002);
        (0..COLLIDERS)
            .map(|i| {
                let spawn = Spawn::generate(&mut rng, i, 400.0, true);
                let transform = Transform::from_translation(spawn.position.extend(0.0))
                    .with_rotation(Quat::from_rotation_z(spawn.rotation));
                (
                    Collider::from_shape(spawn.shape),
                    adjust(i, transform).into(),
                )
            })
            .collect::<Vec<(Collider, GlobalTransform)>>()
    };
    // Turned by `rotate_z` every frame of a minute, as the workload runner turns its colliders: the
    // quaternion's rounding drifts the axes' lengths away from 1.
    let drifted = |mut transform: Transform| {
        for _ in 0..3600 {
            transform.rotate_z(0.01);
        }
        transform
    };
    let unscaled = colliders(&|_, transform| transform);
    let (scaled, drifted) = (
        colliders(&|_, transform| transform.with_scale(Vec3::splat(2.0))),
        colliders(&|_, transform| drifted(transform)),
    );
    // Each case: the colliders, and what share of them take the second set's transform. The half
    // drifted are drawn anew, at random, for every iteration: repeated, the same 4,096 branches one
    // way or the other are partly learnt by the branch predictor, as they are not in the prepare stage,
    // between whose runs the rest of the update runs.
    let cases = [
        ("unscaled", &unscaled, 0.0),
        ("scaled", &scaled, 1.0),
        ("drifted", &drifted, 1.0),
        ("half_drifted", &drifted, 0.5),
    ];
    let mut rng = SeededRng::new(0x5eed_0003);
    let mut draw = |second: &[(Collider, GlobalTransform)], share: f32| {
        (unscaled.iter().zip(second))
            .map(|(&first, &second)| if rng.unit() < share { second } else { first })
            .collect::<Vec<(Collider, GlobalTransform)>>()
    };
    let mut group = c.benchmark_group("prepare");
    group.throughput(Throughput::Elements(COLLIDERS as u64));
    // The shapes go through `black_box`, so that none of their numbers is left unworked.
    for (name, second, share) in cases {
        group.bench_function(format!("world_shape_from_transform/{name}"), |bench| {
            bench.iter_batched_ref(
                || draw(second, share),
                |colliders| {
                    (colliders.iter())
                        .filter_map(|(collider, transform)| {
                            black_box(internals::world_shape_from_transform(
                                collider,
                                black_box(transform),
                            ))
                        })
                        .count()
                },
                BatchSize::PerIteration,
            )
        });
    }
    let colliders = &unscaled;
    group.bench_function("pose_and_world_shape", |bench| {
        bench.iter(|| {
            colliders
                .iter()
                .filter_map(|(collider, transform)| {
                    let pose = pose_from_global_transform(black_box(transform));
                    black_box(collider.world_shape(&pose))
                })
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, world_shapes);
criterion_main!(benches);
