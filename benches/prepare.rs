//! Nanoseconds per collider for the prepare stage's work: a world shape from a `GlobalTransform`
//! (`Collider::world_shape_from_transform`, as the stage builds it, and through the pose:
//! `pose_from_global_transform`, then `Collider::world_shape`), on the workload runner's mix of
//! shapes. The stage's way takes four sets of transforms: unscaled, as the runner's colliders start;
//! scaled by 2; turned by `rotate_z` for a minute of frames, as the runner turns its colliders, which
//! drifts the axes' lengths out of the unscaled range; and half of them drifted, in no order. The way
//! through the pose takes the unscaled ones.
//!
//! Run: `cargo bench -p bevy_rect_collision_benches --bench prepare`. Each iteration builds 4,096 world
//! shapes; criterion's throughput line gives colliders per second.

use std::hint::black_box;

use bevy::prelude::*;
use bevy_rect_collision::collider::pose_from_global_transform;
use bevy_rect_collision::prelude::*;
use bevy_rect_collision_benches::{SeededRng, Spawn};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

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
    let cases: [(&str, Vec<(Collider, GlobalTransform)>); 4] = [
        ("unscaled", colliders(&|_, transform| transform)),
        (
            "scaled",
            colliders(&|_, transform| transform.with_scale(Vec3::splat(2.0))),
        ),
        ("drifted", colliders(&|_, transform| drifted(transform))),
        (
            "half_drifted",
            colliders(&|i, transform| {
                if (i * 7919) % 11 < 5 {
                    drifted(transform)
                } else {
                    transform
                }
            }),
        ),
    ];
    let mut group = c.benchmark_group("prepare");
    group.throughput(Throughput::Elements(COLLIDERS as u64));
    for (name, colliders) in &cases {
        group.bench_function(format!("world_shape_from_transform/{name}"), |bench| {
            bench.iter(|| {
                colliders
                    .iter()
                    .filter_map(|(collider, transform)| {
                        collider.world_shape_from_transform(black_box(transform))
                    })
                    .count()
            })
        });
    }
    let colliders = &cases[0].1;
    group.bench_function("pose_and_world_shape", |bench| {
        bench.iter(|| {
            colliders
                .iter()
                .filter_map(|(collider, transform)| {
                    collider.world_shape(&pose_from_global_transform(black_box(transform)))
                })
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, world_shapes);
criterion_main!(benches);
