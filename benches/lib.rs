//! Shared pieces of the benchmarks: a seeded generator of shapes and candidate pairs.

use std::f32::consts::PI;

use bevy::math::{Rot2, Vec2};
use bevy_rect_collision::geometry::{WorldCircle, WorldRect, WorldRotatedRect};

/// A small, seeded xorshift generator: the same seed gives the same workload on every machine.
#[derive(Clone, Debug)]
pub struct SeededRng(u64);

impl SeededRng {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    /// A uniform float in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A uniform float in `[low, high)`.
    pub fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }

    /// A uniform point in the square of half side `half`.
    pub fn point(&mut self, half: f32) -> Vec2 {
        Vec2::new(self.range(-half, half), self.range(-half, half))
    }
}

/// How far apart the two shapes of a generated pair sit, relative to their sizes.
#[derive(Clone, Copy, Debug)]
pub enum Regime {
    /// Centres close together: most pairs overlap, as after a broad phase.
    MostlyOverlapping,
    /// Centres spread out: most pairs are apart, where early-outs pay.
    MostlyApart,
}

impl Regime {
    fn spread(self) -> f32 {
        match self {
            Regime::MostlyOverlapping => 1.5,
            Regime::MostlyApart => 8.0,
        }
    }
}

/// An axis-aligned rectangle with sides between 1 and 3.
pub fn rect(rng: &mut SeededRng, center: Vec2) -> WorldRect {
    WorldRect::new(center, Vec2::new(rng.range(0.5, 1.5), rng.range(0.5, 1.5)))
}

/// A rotated rectangle with sides between 1 and 3 at a random angle.
pub fn rotated_rect(rng: &mut SeededRng, center: Vec2) -> WorldRotatedRect {
    WorldRotatedRect::new(
        center,
        Vec2::new(rng.range(0.5, 1.5), rng.range(0.5, 1.5)),
        Rot2::radians(rng.range(-PI, PI)),
    )
}

/// A circle with a diameter between 1 and 3.
pub fn circle(rng: &mut SeededRng, center: Vec2) -> WorldCircle {
    WorldCircle::new(center, rng.range(0.5, 1.5))
}

/// `count` pairs from two shape makers, the second shape's centre within the regime's spread of the first.
pub fn pairs<A, B>(
    count: usize,
    seed: u64,
    regime: Regime,
    mut first: impl FnMut(&mut SeededRng, Vec2) -> A,
    mut second: impl FnMut(&mut SeededRng, Vec2) -> B,
) -> Vec<(A, B)> {
    let mut rng = SeededRng::new(seed);
    (0..count)
        .map(|_| {
            let center = rng.point(100.0);
            let a = first(&mut rng, center);
            let offset = rng.point(regime.spread());
            let b = second(&mut rng, center + offset);
            (a, b)
        })
        .collect()
}
