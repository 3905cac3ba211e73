//! Shared pieces of the benchmarks: a seeded generator of shapes and candidate pairs, the runners'
//! command-line flags and the pacing of their frames.

use std::f32::consts::PI;
use std::time::{Duration, Instant};

use bevy::math::{Dir2, Ray2d, Rot2, UVec2, Vec2};
use bevy_rect_collision::TilemapCollider;
use bevy_rect_collision::collider::ColliderShape;
use bevy_rect_collision::geometry::{
    ConvexPolygon, WorldCapsule, WorldCircle, WorldRect, WorldRotatedRect,
};

#[path = "../src/test_rng.rs"]
#[allow(dead_code, reason = "the benchmarks draw through `SeededRng`")]
mod test_rng;

/// The tests' seeded generator, with the draws the workloads ask for: the same seed gives the same
/// workload on every machine.
#[derive(Clone, Debug)]
pub struct SeededRng(test_rng::TestRng);

impl SeededRng {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> Self {
        Self(test_rng::TestRng::new(seed))
    }

    /// A uniform float in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        self.0.unit()
    }

    /// A uniform float in `[low, high)`.
    pub fn range(&mut self, low: f32, high: f32) -> f32 {
        self.0.range(low, high)
    }

    /// Two independent standard normal values (Box and Muller).
    pub fn gaussian_pair(&mut self) -> Vec2 {
        let radius = (-2.0 * (1.0 - self.unit()).ln()).sqrt();
        Vec2::from_angle(self.range(-PI, PI)) * radius
    }

    /// A uniform point in the square of half side `half`.
    pub fn point(&mut self, half: f32) -> Vec2 {
        Vec2::new(self.range(-half, half), self.range(-half, half))
    }

    /// Shuffles `items` in place (Fisher and Yates): each order about as likely as any other, the same
    /// orders from the same seed.
    ///
    /// ```
    /// use bevy_rect_collision_benches::SeededRng;
    ///
    /// let mut rng = SeededRng::new(7);
    /// let mut seen = std::collections::HashSet::new();
    /// for _ in 0..200 {
    ///     let mut order = [0, 1, 2, 3];
    ///     rng.shuffle(&mut order);
    ///     let mut sorted = order;
    ///     sorted.sort();
    ///     assert_eq!(sorted, [0, 1, 2, 3], "a shuffle keeps every item once");
    ///     seen.insert(order);
    /// }
    /// // 200 shuffles of four items come out in all 24 orders.
    /// assert_eq!(seen.len(), 24);
    ///
    /// let (mut a, mut b) = ([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]);
    /// SeededRng::new(3).shuffle(&mut a);
    /// SeededRng::new(3).shuffle(&mut b);
    /// assert_eq!(a, b, "the same seed, the same order");
    /// ```
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for last in (1..items.len()).rev() {
            let pick = ((self.unit() * (last + 1) as f32) as usize).min(last);
            items.swap(pick, last);
        }
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

/// A capsule 1 to 3 long end to end, half as wide, at a random angle.
pub fn capsule(rng: &mut SeededRng, center: Vec2) -> WorldCapsule {
    let radius = rng.range(0.25, 0.75);
    WorldCapsule::new(
        center,
        radius * rng.range(0.5, 1.5),
        radius,
        Rot2::radians(rng.range(-PI, PI)),
    )
}

/// A convex polygon of 3 to 8 vertices, the hull of points on a circle of radius 0.5 to 1.5 at
/// random angles.
pub fn polygon(rng: &mut SeededRng, center: Vec2) -> ConvexPolygon {
    let radius = rng.range(0.5, 1.5);
    let count = 3 + (rng.unit() * 6.0) as usize;
    loop {
        let points: Vec<Vec2> = (0..count)
            .map(|_| center + Vec2::from_angle(rng.range(-PI, PI)) * radius)
            .collect();
        if let Ok(hull) = ConvexPolygon::hull(&points) {
            return hull;
        }
    }
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

/// One collider of a workload: its shape, where it starts, and how it moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spawn {
    /// The shape, as the collider holds it before scale.
    pub shape: ColliderShape,
    /// Where its centre starts.
    pub position: Vec2,
    /// Its starting angle about Z, in radians.
    pub rotation: f32,
    /// Its velocity, or `None` for a collider that never moves.
    pub velocity: Option<Vec2>,
}

/// The order in which a workload's colliders take their kinds, which is the order of the kinds in
/// Bevy's tables: the prepare stage and the broad phase's gather branch on the kind row by row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KindOrder {
    /// Four rects, three rotated rects and three circles, over and over: the order a game gets that
    /// spawns each kind in runs, and one the branch predictor learns.
    #[default]
    Periodic,
    /// Each collider's kind drawn at random, in the same shares: no order to learn.
    Shuffled,
}

impl KindOrder {
    /// The order named `periodic` or `shuffled`; `None` for any other name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "periodic" => Some(Self::Periodic),
            "shuffled" => Some(Self::Shuffled),
            _ => None,
        }
    }

    /// The order a command line asks for with `--kinds periodic` or `--kinds shuffled`; periodic without
    /// the flag. Panics on another name, as the binaries' other flags do on bad values.
    ///
    /// ```
    /// use bevy_rect_collision_benches::KindOrder;
    ///
    /// let args = |list: &[&str]| list.iter().map(|arg| arg.to_string()).collect::<Vec<_>>();
    /// assert_eq!(KindOrder::from_args(&args(&["--kinds", "shuffled"])), KindOrder::Shuffled);
    /// assert_eq!(KindOrder::from_args(&args(&["--n", "10"])), KindOrder::Periodic);
    /// ```
    pub fn from_args(args: &[String]) -> Self {
        flag_value(args, "--kinds")
            .map(|name| Self::parse(name).expect("--kinds is periodic or shuffled"))
            .unwrap_or_default()
    }

    /// The tenth of the mix that the i-th collider falls in: 0 to 3 a rect, 4 to 6 a rotated rect, 7 to
    /// 9 a circle. Shuffled, each tenth comes from a hash of `i` (SplitMix64's finaliser), so that the
    /// workload's other draws stay what they are in the periodic order.
    ///
    /// ```
    /// use bevy_rect_collision_benches::KindOrder;
    ///
    /// assert_eq!(KindOrder::Periodic.tenth(13), 3);
    /// let shuffled: Vec<usize> = (0..10_000).map(|i| KindOrder::Shuffled.tenth(i)).collect();
    /// let share = |tenths: core::ops::Range<usize>| {
    ///     shuffled.iter().filter(|tenth| tenths.contains(tenth)).count()
    /// };
    /// // The shares of the mix, 40%, 30% and 30%, within 2 points.
    /// assert!((3_800..4_200).contains(&share(0..4)), "{}", share(0..4));
    /// assert!((2_800..3_200).contains(&share(4..7)), "{}", share(4..7));
    /// assert!((2_800..3_200).contains(&share(7..10)), "{}", share(7..10));
    /// // No period: the kinds of rows ten apart differ as often as two drawn at random do (66%).
    /// let differ = (10..10_000).filter(|&i| shuffled[i] / 4 != shuffled[i - 10] / 4).count();
    /// assert!(differ > 4_000, "{differ}");
    /// ```
    pub fn tenth(self, i: usize) -> usize {
        match self {
            Self::Periodic => i % 10,
            Self::Shuffled => {
                let mut z = (i as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                ((z ^ (z >> 31)) % 10) as usize
            }
        }
    }
}

impl Spawn {
    /// The i-th collider of a workload in a square of side `side`: 40% rects, 30% rotated rects, 30%
    /// circles in the periodic [`KindOrder`], sizes 1 to 3, uniform positions and angles, speeds up to 3
    /// per axis if `moving`.
    pub fn generate(rng: &mut SeededRng, i: usize, side: f32, moving: bool) -> Self {
        Self::generate_in(KindOrder::Periodic, rng, i, side, moving)
    }

    /// [`Spawn::generate`] with the kinds in `order`; everything but the kinds is the same in either.
    pub fn generate_in(
        order: KindOrder,
        rng: &mut SeededRng,
        i: usize,
        side: f32,
        moving: bool,
    ) -> Self {
        let (w, h) = (rng.range(1.0, 3.0), rng.range(1.0, 3.0));
        let half_size = Vec2::new(w, h) * 0.5;
        let shape = match order.tenth(i) {
            0..4 => ColliderShape::Rect { half_size },
            4..7 => ColliderShape::RotatedRect { half_size },
            _ => ColliderShape::Circle { radius: w * 0.5 },
        };
        let position = rng.point(side * 0.5);
        let rotation = rng.range(-3.1, 3.1);
        let velocity = moving.then(|| Vec2::new(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)));
        Self {
            shape,
            position,
            rotation,
            velocity,
        }
    }
}

/// The game workloads the broad phase is chosen on, beside W1: each spawns its colliders with
/// [`GameWorkload::spawn`]. Bullets also fire [`GameWorkload::bullet`]s every frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameWorkload {
    /// 97% of W1, plus 3% still walls 10 to 60 long and 1 to 3 thick, a third of them rotated.
    Level,
    /// W1's shapes in 16 Gaussian clusters of deviation √(N/16π), in a world of side 16√N.
    Clustered,
    /// N/2 W1 targets at up to 0.7 units a second per axis; N/120 bullets fired a frame.
    Bullets,
    /// W1 with both sides log-uniform from 0.25 to 40, in a world of side 8√N.
    Sizes,
}

/// How many clusters [`GameWorkload::Clustered`] spreads its colliders over.
pub const CLUSTERS: usize = 16;

/// How many frames a bullet of [`GameWorkload::Bullets`] lives.
pub const BULLET_FRAMES: usize = 60;

impl GameWorkload {
    /// The side of the square world of `n` colliders.
    pub fn side(self, n: usize) -> f32 {
        let root = (n as f32).sqrt();
        match self {
            Self::Level | Self::Bullets => 4.0 * root,
            Self::Clustered => 16.0 * root,
            Self::Sizes => 8.0 * root,
        }
    }

    /// How many colliders to spawn at the start for `n`: the targets alone for bullets.
    pub fn spawned(self, n: usize) -> usize {
        match self {
            Self::Bullets => n / 2,
            _ => n,
        }
    }

    /// The centres of the clusters of [`GameWorkload::Clustered`] in a world of side `side`, kept a
    /// cluster's three deviations from the edges.
    pub fn cluster_centres(rng: &mut SeededRng, side: f32) -> Vec<Vec2> {
        (0..CLUSTERS).map(|_| rng.point(side * 0.35)).collect()
    }

    /// The i-th of the `n` colliders of the workload in a world of side `side` (`centres` from
    /// [`Self::cluster_centres`] for the clustered one).
    ///
    /// ```
    /// use bevy_rect_collision_benches::{GameWorkload, SeededRng};
    ///
    /// let mut rng = SeededRng::new(1);
    /// let n = 1_000;
    /// let side = GameWorkload::Level.side(n);
    /// let walls = (0..n)
    ///     .map(|i| GameWorkload::Level.spawn(&mut rng, i, n, side, &[]))
    ///     .filter(|spawn| spawn.velocity.is_none())
    ///     .count();
    /// assert_eq!(walls, 30, "3% of the level is still walls");
    /// ```
    pub fn spawn(
        self,
        rng: &mut SeededRng,
        i: usize,
        n: usize,
        side: f32,
        centres: &[Vec2],
    ) -> Spawn {
        match self {
            Self::Level if i % 100 < 3 => {
                let half_size = Vec2::new(rng.range(10.0, 60.0), rng.range(1.0, 3.0)) * 0.5;
                let rotated = rng.unit() < 1.0 / 3.0;
                Spawn {
                    shape: if rotated {
                        ColliderShape::RotatedRect { half_size }
                    } else {
                        ColliderShape::Rect { half_size }
                    },
                    position: rng.point(side * 0.5),
                    rotation: if rotated { rng.range(-3.1, 3.1) } else { 0.0 },
                    velocity: None,
                }
            }
            Self::Level => Spawn::generate(rng, i, side, true),
            Self::Clustered => {
                let mut spawn = Spawn::generate(rng, i, side, true);
                let deviation = (n as f32 / (CLUSTERS as f32 * PI)).sqrt();
                let centre = centres[i % centres.len()];
                spawn.position = centre + rng.gaussian_pair() * deviation;
                spawn
            }
            Self::Bullets => {
                let mut spawn = Spawn::generate(rng, i, side, true);
                spawn.velocity = spawn.velocity.map(|v| v * (0.7 / 3.0));
                spawn
            }
            Self::Sizes => {
                let mut spawn = Spawn::generate(rng, i, side, true);
                let mut log_uniform = || (rng.range(0.25f32.ln(), 40f32.ln())).exp();
                let half_size = Vec2::new(log_uniform(), log_uniform()) * 0.5;
                spawn.shape = match spawn.shape {
                    ColliderShape::Rect { .. } => ColliderShape::Rect { half_size },
                    ColliderShape::RotatedRect { .. } => ColliderShape::RotatedRect { half_size },
                    ColliderShape::Circle { .. } => ColliderShape::Circle {
                        radius: half_size.x,
                    },
                    other @ (ColliderShape::Capsule { .. } | ColliderShape::ConvexPolygon(_)) => {
                        other
                    }
                };
                spawn
            }
        }
    }

    /// A bullet of [`GameWorkload::Bullets`]: a circle of radius 0.2 fired from anywhere in the world
    /// of side `side`, in any direction, at 40 units a second.
    pub fn bullet(rng: &mut SeededRng, side: f32) -> Spawn {
        let angle = rng.range(-PI, PI);
        Spawn {
            shape: ColliderShape::Circle { radius: 0.2 },
            position: rng.point(side * 0.5),
            rotation: 0.0,
            velocity: Some(Vec2::from_angle(angle) * 40.0),
        }
    }
}

/// How many rays and how many points `--queries` asks about each frame, in both runners.
pub const QUERIES: usize = 1_000;

/// How far the rays of `--queries` reach.
pub const RAY_LENGTH: f32 = 20.0;

/// The rays and points of `--queries` in a world of side `side`: [`QUERIES`] rays from uniform points
/// in uniform directions and as many uniform points, from a seed of their own, so that every runner
/// and every engine asks the same.
///
/// ```
/// use bevy_rect_collision_benches::{QUERIES, query_rays_and_points};
///
/// let (rays, points) = query_rays_and_points(100.0);
/// assert_eq!((rays.len(), points.len()), (QUERIES, QUERIES));
/// assert!(points.iter().all(|p| p.abs().max_element() <= 50.0), "within the world");
/// assert_eq!(query_rays_and_points(100.0).1, points, "the same every time");
/// ```
pub fn query_rays_and_points(side: f32) -> (Vec<Ray2d>, Vec<Vec2>) {
    let mut rng = SeededRng::new(0x0e11_5eed);
    let half = side * 0.5;
    let rays = (0..QUERIES)
        .map(|_| {
            let origin = rng.point(half);
            let direction = Dir2::from_xy(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
            Ray2d::new(origin, direction.unwrap_or(Dir2::X))
        })
        .collect();
    let points = (0..QUERIES).map(|_| rng.point(half)).collect();
    (rays, points)
}

/// Where a collider moving at `velocity` is after `dt` from `position`, wrapped into the square of side
/// `side` centred on the origin: the world's edges are joined, so the density stays uniform.
pub fn wrapped_step(position: Vec2, velocity: Vec2, dt: f32, side: f32) -> Vec2 {
    let half = side * 0.5;
    (position + velocity * dt + half).rem_euclid(Vec2::splat(side)) - half
}

/// The median and the 99th percentile of `samples`, in milliseconds; sorts them.
///
/// # Panics
///
/// On no samples: the runners ask for at least one frame ([`count_flag`]).
pub fn median_p99(samples: &mut [Duration]) -> (f64, f64) {
    samples.sort_unstable();
    let at =
        |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
    (at(0.5), at(0.99))
}

/// The aim's bound on the p99: at most this many times the median (issue 6).
pub const P99_BOUND: f64 = 1.5;

/// The share of `samples` that took more than [`P99_BOUND`] times `median_ms` (in milliseconds): the
/// p99 meets the aim while this share stays at or below 1%, whatever the times beyond the bound.
///
/// ```
/// use std::time::Duration;
/// use bevy_rect_collision_benches::share_past_bound;
///
/// let samples = [10, 10, 15, 16, 40].map(Duration::from_micros);
/// // 1.5 times 0.010 ms is 15 µs: two of the five took longer.
/// assert_eq!(share_past_bound(&samples, 0.010), 0.4);
/// assert_eq!(share_past_bound(&[], 0.010), 0.0);
/// ```
pub fn share_past_bound(samples: &[Duration], median_ms: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let bound = Duration::from_secs_f64(P99_BOUND * median_ms / 1e3);
    let past = samples.iter().filter(|&&sample| sample > bound).count();
    past as f64 / samples.len() as f64
}

/// The median of `values`, the upper of the two middle ones for an even count: the figure the runners'
/// tables take over several runs.
///
/// # Panics
///
/// On no values: the runners ask for at least one round ([`count_flag`]).
///
/// ```
/// use bevy_rect_collision_benches::median_of;
///
/// assert_eq!(median_of(vec![3.0, 1.0, 2.0]), 2.0);
/// assert_eq!(median_of(vec![4.0, 1.0, 3.0, 2.0]), 3.0);
/// ```
pub fn median_of(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The mean of `samples`, in milliseconds (0 for none). Beside the median it shows work done on some
/// frames only, such as a grid rebuilt every few frames, which the median can hide.
///
/// ```
/// use std::time::Duration;
/// use bevy_rect_collision_benches::mean_ms;
///
/// let samples = [1, 1, 1, 5].map(Duration::from_millis);
/// assert_eq!(mean_ms(&samples), 2.0);
/// assert_eq!(mean_ms(&[]), 0.0);
/// ```
pub fn mean_ms(samples: &[Duration]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.iter().sum::<Duration>().as_secs_f64() * 1e3 / samples.len() as f64
}

/// The value after `flag` on the command line `args` (`--n 10000` gives `Some("10000")` for `--n`).
pub fn flag_value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|arg| arg == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// The count after `flag` on the command line `args`, `default` without the flag, or an error that says
/// what is wrong when the value is not a whole number or is below `least` (a run of `--frames 0` has no
/// frame to take a median of).
///
/// ```
/// use bevy_rect_collision_benches::count_flag;
///
/// let args = |line: &str| line.split(' ').map(String::from).collect::<Vec<_>>();
/// assert_eq!(count_flag(&args("bench --frames 300"), "--frames", 200, 1), Ok(300));
/// assert_eq!(count_flag(&args("bench --n 10"), "--frames", 200, 1), Ok(200));
/// assert!(count_flag(&args("bench --frames 0"), "--frames", 200, 1).is_err());
/// assert!(count_flag(&args("bench --frames many"), "--frames", 200, 1).is_err());
/// assert!(count_flag(&args("bench --frames"), "--frames", 200, 1).is_err());
/// ```
pub fn count_flag(
    args: &[String],
    flag: &str,
    default: usize,
    least: usize,
) -> Result<usize, String> {
    if !args.iter().any(|arg| arg == flag) {
        return Ok(default);
    }
    match flag_value(args, flag).map(str::parse::<usize>) {
        Some(Ok(count)) if count >= least => Ok(count),
        Some(Ok(count)) => Err(format!("{flag} {count}: at least {least} is needed")),
        Some(Err(_)) | None => Err(format!("{flag} takes a whole number of at least {least}")),
    }
}

/// The count after `flag` on the command line `args`, as [`count_flag`] reads it; a value it refuses
/// stops the runner named `program`, with its message on standard error and exit code 2.
///
/// ```
/// use bevy_rect_collision_benches::count_or_exit;
///
/// let args: Vec<String> = "bench --rounds 3".split(' ').map(String::from).collect();
/// assert_eq!(count_or_exit("bench", &args, "--rounds", 1, 1), 3);
/// assert_eq!(count_or_exit("bench", &args, "--frames", 200, 1), 200);
/// ```
pub fn count_or_exit(
    program: &str,
    args: &[String],
    flag: &str,
    default: usize,
    least: usize,
) -> usize {
    count_flag(args, flag, default, least).unwrap_or_else(|error| {
        eprintln!("{program}: {error}");
        std::process::exit(2);
    })
}

/// The threads `--compute-threads N` asks for on the command line `args`, at least one, or `None`
/// without the flag (Bevy's default sizes, see [`task_pool_plugin`]); a value it refuses stops the
/// runner named `program` ([`count_or_exit`]).
///
/// ```
/// use bevy_rect_collision_benches::compute_threads_flag;
///
/// let args = |line: &str| line.split(' ').map(String::from).collect::<Vec<_>>();
/// assert_eq!(compute_threads_flag("bench", &args("bench --compute-threads 2")), Some(2));
/// assert_eq!(compute_threads_flag("bench", &args("bench --frames 2")), None);
/// ```
pub fn compute_threads_flag(program: &str, args: &[String]) -> Option<usize> {
    (args.iter().any(|arg| arg == "--compute-threads"))
        .then(|| count_or_exit(program, args, "--compute-threads", 1, 1))
}

/// Bevy's task pools with `compute_threads` threads in the compute pool, or Bevy's default sizes for
/// `None` (on two cores that is one compute thread: the other core goes to the I/O and async pools,
/// which a headless benchmark leaves idle).
pub fn task_pool_plugin(compute_threads: Option<usize>) -> bevy::app::TaskPoolPlugin {
    let mut task_pool_options = bevy::app::TaskPoolOptions::default();
    if let Some(threads) = compute_threads {
        task_pool_options.compute.min_threads = threads;
        task_pool_options.compute.max_threads = threads;
    }
    bevy::app::TaskPoolPlugin { task_pool_options }
}

/// The interval `--fps N` asks for on the command line `args`, 1/N s, or `None` without the flag (the
/// frames follow each other at once); a value it refuses stops the runner named `program`
/// ([`count_or_exit`]). `--fps` alone asks for 60.
///
/// ```
/// use std::time::Duration;
/// use bevy_rect_collision_benches::frame_interval_flag;
///
/// let args = |line: &str| line.split(' ').map(String::from).collect::<Vec<_>>();
/// assert_eq!(frame_interval_flag("bench", &args("bench --fps 50")), Some(Duration::from_millis(20)));
/// assert_eq!(frame_interval_flag("bench", &args("bench --frames 2")), None);
/// ```
pub fn frame_interval_flag(program: &str, args: &[String]) -> Option<Duration> {
    (args.iter().any(|arg| arg == "--fps")).then(|| {
        let fps = count_or_exit(program, args, "--fps", 60, 1);
        Duration::from_secs_f64(1.0 / fps as f64)
    })
}

/// Starts each frame an interval after the one before, as a game at so many frames a second does,
/// sleeping until then; a frame that overran its interval is followed at once, as in a game. Without
/// an interval the frames follow each other at once.
///
/// ```
/// use std::time::{Duration, Instant};
/// use bevy_rect_collision_benches::FramePacer;
///
/// let before = Instant::now();
/// let mut pacer = FramePacer::new(Some(Duration::from_millis(2)));
/// pacer.wait_for_next_frame(); // the first frame starts at once
/// pacer.wait_for_next_frame();
/// pacer.wait_for_next_frame();
/// // The third starts two intervals after the pacer was made, which was after `before`.
/// assert!(before.elapsed() >= Duration::from_millis(4));
/// ```
pub struct FramePacer {
    interval: Option<Duration>,
    next_start: Instant,
}

impl FramePacer {
    /// A pacer whose first frame starts now, the next ones `interval` apart (`None`: at once).
    pub fn new(interval: Option<Duration>) -> Self {
        Self {
            interval,
            next_start: Instant::now(),
        }
    }

    /// Sleeps until the next frame's start, or returns at once if it has passed or there is no
    /// interval.
    pub fn wait_for_next_frame(&mut self) {
        let Some(interval) = self.interval else {
            return;
        };
        let now = Instant::now();
        if self.next_start > now {
            std::thread::sleep(self.next_start - now);
        }
        self.next_start += interval;
    }
}

/// How many kinds of solid tile [`blob_map`] draws.
pub const TILE_KINDS: u8 = 3;

/// A tile map of `side` × `side` cells of side `tile`, about 45% solid in round blobs of
/// [`TILE_KINDS`] kinds, of radius 2 to 10 cells.
pub fn blob_map(rng: &mut SeededRng, side: u32, tile: f32) -> TilemapCollider {
    let mut map = TilemapCollider::new(UVec2::splat(side), Vec2::splat(tile));
    let mut solid = 0usize;
    let target = side as usize * side as usize * 45 / 100;
    while solid < target {
        let centre = Vec2::new(rng.unit(), rng.unit()) * side as f32;
        let radius = rng.range(2.0, 10.0);
        let kind = 1 + (rng.unit() * f32::from(TILE_KINDS)) as u8 % TILE_KINDS;
        let low = (centre - radius).max(Vec2::ZERO).as_uvec2();
        let high = (centre + radius)
            .min(Vec2::splat(side as f32 - 1.0))
            .as_uvec2();
        for y in low.y..=high.y {
            for x in low.x..=high.x {
                let cell = UVec2::new(x, y);
                if (cell.as_vec2() + 0.5).distance(centre) <= radius && map.get(cell) == 0 {
                    map.set(cell, kind);
                    solid += 1;
                }
            }
        }
    }
    map
}
