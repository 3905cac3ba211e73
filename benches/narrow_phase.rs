//! Nanoseconds per pair for every narrow-phase test, beside parry2d's `intersection_test` on the same pairs.
//!
//! Run: `cargo bench -p bevy_rect_collision_benches --bench narrow_phase`. Each benchmark tests 4,096
//! candidate pairs; criterion's throughput line gives pairs per second. The `shape_*` groups test
//! every pair of the five kinds through `WorldShape::intersects`, as the plugin does. `pair_axis_cache` measures the
//! bookkeeping a per-pair frame-coherence cache would add.

use std::hint::black_box;

use bevy::math::{Rot2, Vec2};
use bevy_rect_collision::geometry::*;
use bevy_rect_collision_benches::{Regime, capsule, circle, pairs, polygon, rect, rotated_rect};
use criterion::{
    BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main, measurement::WallTime,
};
use parry2d::math::Pose;
use parry2d::query;
use parry2d::shape::{Ball, Capsule, ConvexPolygon as ParryPolygon, Cuboid, Shape};

const PAIRS: usize = 4096;
const SEED: u64 = 0x5eed_0001;

fn parry_pose(center: Vec2, rotation: Rot2) -> Pose {
    Pose::from_parts(
        center,
        parry2d::math::Rot2 {
            re: rotation.cos,
            im: rotation.sin,
        },
    )
}

/// A shape in parry2d at the same place, for the side-by-side run.
trait ToParry {
    fn to_parry(&self) -> (Pose, Box<dyn Shape>);
}

impl ToParry for WorldRect {
    fn to_parry(&self) -> (Pose, Box<dyn Shape>) {
        (
            parry_pose(self.center, Rot2::IDENTITY),
            Box::new(Cuboid::new(self.half_size)),
        )
    }
}

impl ToParry for WorldRotatedRect {
    fn to_parry(&self) -> (Pose, Box<dyn Shape>) {
        (
            parry_pose(self.center, self.rotation),
            Box::new(Cuboid::new(self.half_size)),
        )
    }
}

impl ToParry for WorldCircle {
    fn to_parry(&self) -> (Pose, Box<dyn Shape>) {
        (
            parry_pose(self.center, Rot2::IDENTITY),
            Box::new(Ball::new(self.radius)),
        )
    }
}

impl ToParry for WorldCapsule {
    fn to_parry(&self) -> (Pose, Box<dyn Shape>) {
        (
            parry_pose(self.center, self.rotation),
            Box::new(Capsule::new_y(self.half_length, self.radius)),
        )
    }
}

impl ToParry for ConvexPolygon {
    fn to_parry(&self) -> (Pose, Box<dyn Shape>) {
        let polygon = ParryPolygon::from_convex_polyline_unmodified(self.vertices().to_vec());
        (
            parry_pose(Vec2::ZERO, Rot2::IDENTITY),
            Box::new(polygon.expect("a convex polygon")),
        )
    }
}

impl ToParry for WorldShape {
    fn to_parry(&self) -> (Pose, Box<dyn Shape>) {
        match self {
            WorldShape::Rect(shape) => shape.to_parry(),
            WorldShape::RotatedRect(shape) => shape.to_parry(),
            WorldShape::Circle(shape) => shape.to_parry(),
            WorldShape::Capsule(shape) => shape.to_parry(),
            WorldShape::Polygon(shape) => shape.to_parry(),
        }
    }
}

/// Benchmarks `test` on `pairs` as `name`, and parry2d's `intersection_test` on the same pairs.
fn ours_and_parry<A: ToParry, B: ToParry>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    pairs: &[(A, B)],
    test: impl Fn(&A, &B, OverlapMode) -> bool,
) {
    group.bench_function("ours", |bench| {
        bench.iter(|| {
            pairs
                .iter()
                .filter(|(a, b)| test(black_box(a), black_box(b), OverlapMode::Closed))
                .count()
        })
    });
    let parry_pairs: Vec<_> = pairs
        .iter()
        .map(|(a, b)| (a.to_parry(), b.to_parry()))
        .collect();
    group.bench_function("parry2d", |bench| {
        bench.iter(|| {
            parry_pairs
                .iter()
                .filter(|((pa, sa), (pb, sb))| {
                    query::intersection_test(black_box(pa), &**sa, black_box(pb), &**sb).unwrap()
                })
                .count()
        })
    });
}

fn pair_kinds(c: &mut Criterion) {
    let overlapping = Regime::MostlyOverlapping;
    macro_rules! kind {
        ($name:literal, $first:expr, $second:expr, $test:expr) => {{
            let mut group = c.benchmark_group($name);
            group.throughput(Throughput::Elements(PAIRS as u64));
            let pairs = pairs(PAIRS, SEED, overlapping, $first, $second);
            ours_and_parry(&mut group, &pairs, $test);
            group.finish();
        }};
    }
    kind!("rect_rect", rect, rect, intersection_test_rect_rect);
    kind!(
        "rotated_rect_rect",
        rotated_rect,
        rect,
        intersection_test_rotated_rect_rect
    );
    kind!(
        "rotated_rect_rotated_rect",
        rotated_rect,
        rotated_rect,
        intersection_test_rotated_rect_rotated_rect
    );
    kind!("circle_rect", circle, rect, intersection_test_circle_rect);
    kind!(
        "circle_rotated_rect",
        circle,
        rotated_rect,
        intersection_test_circle_rotated_rect
    );
    kind!(
        "circle_circle",
        circle,
        circle,
        intersection_test_circle_circle
    );
}

/// Every pair of the five kinds through [`WorldShape::intersects`], beside parry2d.
fn shape_pairs(c: &mut Criterion) {
    type Maker = fn(&mut bevy_rect_collision_benches::SeededRng, Vec2) -> WorldShape;
    let kinds: [(&str, Maker); 5] = [
        ("rect", |rng, at| rect(rng, at).into()),
        ("rotated_rect", |rng, at| rotated_rect(rng, at).into()),
        ("circle", |rng, at| circle(rng, at).into()),
        ("capsule", |rng, at| capsule(rng, at).into()),
        ("polygon", |rng, at| polygon(rng, at).into()),
    ];
    for (i, (first_name, first)) in kinds.iter().enumerate() {
        for (second_name, second) in &kinds[i..] {
            let mut group = c.benchmark_group(format!("shape_{first_name}_{second_name}"));
            group.throughput(Throughput::Elements(PAIRS as u64));
            let pairs = pairs(PAIRS, SEED, Regime::MostlyOverlapping, first, second);
            ours_and_parry(
                &mut group,
                &pairs,
                |a: &WorldShape, b: &WorldShape, mode| a.intersects(b, mode),
            );
            group.finish();
        }
    }
}

/// The separating axis test preceded by a test of the two bounding boxes (phase 1 of "Rotated
/// rectangle intersection"): the early-out the Unity tutorial asks about.
fn aabb_then_sat(a: &WorldRotatedRect, b: &WorldRotatedRect) -> bool {
    let overlaps = a.bounding_half_size() + b.bounding_half_size() - (b.center - a.center).abs();
    overlaps.cmpge(Vec2::ZERO).all()
        && intersection_test_rotated_rect_rotated_rect(a, b, OverlapMode::Closed)
}

/// The question of the Unity tutorial "Are two rectangles with orientation in 2D space intersecting?": does a bounding-box test before the separating axes pay? In both regimes.
fn aabb_early_out(c: &mut Criterion) {
    for (regime, name) in [
        (
            Regime::MostlyOverlapping,
            "sat_early_out/mostly_overlapping",
        ),
        (Regime::MostlyApart, "sat_early_out/mostly_apart"),
    ] {
        let pairs = pairs(PAIRS, SEED, regime, rotated_rect, rotated_rect);
        let overlapping = pairs
            .iter()
            .filter(|(a, b)| intersection_test_rotated_rect_rotated_rect(a, b, OverlapMode::Closed))
            .count();
        println!("{name}: {overlapping} of {PAIRS} pairs overlap");
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Elements(PAIRS as u64));
        group.bench_function("sat", |bench| {
            bench.iter(|| {
                pairs
                    .iter()
                    .filter(|(a, b)| {
                        intersection_test_rotated_rect_rotated_rect(
                            black_box(a),
                            black_box(b),
                            OverlapMode::Closed,
                        )
                    })
                    .count()
            })
        });
        group.bench_function("aabb_then_sat", |bench| {
            bench.iter(|| {
                pairs
                    .iter()
                    .filter(|(a, b)| aabb_then_sat(black_box(a), black_box(b)))
                    .count()
            })
        });
        group.finish();
    }
}

/// The frame coherence of "Rotated rectangle intersection" needs, per pair, the axis that separated it last frame: a map from pair to
/// axis, filled each frame and looked up for each candidate. What that bookkeeping costs per pair, to
/// set beside what a cached axis could save (the separating-axis test itself, a few ns).
fn pair_axis_cache(c: &mut Criterion) {
    let mut rng = bevy_rect_collision_benches::SeededRng::new(SEED);
    let entity = |rng: &mut bevy_rect_collision_benches::SeededRng| {
        bevy::ecs::entity::Entity::from_raw_u32(rng.range(0.0, 10_000.0) as u32).unwrap()
    };
    let keys: Vec<_> = (0..PAIRS)
        .map(|_| (entity(&mut rng), entity(&mut rng)))
        .collect();
    let mut cache = bevy::platform::collections::HashMap::new();
    let mut group = c.benchmark_group("pair_axis_cache");
    group.throughput(Throughput::Elements(PAIRS as u64));
    group.bench_function("fill", |bench| {
        bench.iter(|| {
            cache.clear();
            for (axis, &key) in keys.iter().enumerate() {
                cache.insert(black_box(key), axis as u8);
            }
            cache.len()
        })
    });
    group.bench_function("look_up", |bench| {
        bench.iter(|| {
            keys.iter()
                .filter_map(|key| cache.get(black_box(key)))
                .count()
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    pair_kinds,
    shape_pairs,
    aabb_early_out,
    pair_axis_cache
);
criterion_main!(benches);
