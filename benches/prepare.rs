//! Nanoseconds per collider for the prepare stage's work: a world shape from a `GlobalTransform`
//! (`Collider::world_shape_from_transform`, as the stage builds it, and through the pose:
//! `pose_from_global_transform`, then `Collider::world_shape`), on the workload runner's mix of
//! shapes, unscaled as its colliders are.
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
    let mut rng = SeededRng::new(0x5eed_0002);
    let colliders: Vec<(Collider, GlobalTransform)> = (0..COLLIDERS)
        .map(|i| {
            let spawn = Spawn::generate(&mut rng, i, 400.0, true);
            let transform = Transform::from_translation(spawn.position.extend(0.0))
                .with_rotation(Quat::from_rotation_z(spawn.rotation));
            (Collider::from_shape(spawn.shape), transform.into())
        })
        .collect();
    let mut group = c.benchmark_group("prepare");
    group.throughput(Throughput::Elements(COLLIDERS as u64));
    group.bench_function("world_shape_from_transform", |bench| {
        bench.iter(|| {
            colliders
                .iter()
                .filter_map(|(collider, transform)| {
                    collider.world_shape_from_transform(black_box(transform))
                })
                .count()
        })
    });
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
