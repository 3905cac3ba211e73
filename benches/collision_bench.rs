//! The workload runner: seeded worlds stepped headless, with the median, p99 and mean time of each
//! pipeline stage and of the whole update, the share of updates whose pipeline took more than 1.5
//! times its median (the aim on the p99 holds while it is at most 1%), allocations per frame, and
//! event counts.
//!
//! ```text
//! cargo run --release -p bevy_rect_collision_benches --bin collision_bench -- --workload w1 --n 10000
//! cargo run --release -p bevy_rect_collision_benches --bin collision_bench -- --all
//! cargo run --release -p bevy_rect_collision_benches --bin collision_bench -- --all --rounds 5
//! cargo run --release -p bevy_rect_collision_benches --bin collision_bench -- --all --compute-threads 2
//! ```
//!
//! `--frames F` times F frames of each run after its warm-up, 200 unless told, at every size; F is at
//! least 1; a count that is not a whole number, or a workload not listed below, is refused with a
//! message. `--compute-threads N` gives Bevy's compute task pool N threads; without it the pool has
//! Bevy's default size, which is one thread on a machine of two cores. `--rounds R` runs every workload
//! R times, one run of each a round, and ends with a Markdown table of each workload's medians over its
//! runs. `--kinds shuffled` draws each collider's kind at random, where by default the kinds follow
//! each other in a period of ten (`KindOrder` in the benches' library). `--slow-down K` has the
//! colliders move and turn at 1/K of their speed after the warm-up, as in a game whose colliders calm
//! down: fewer should leave their fat AABBs. `--tables K` (1
//! to 4) spreads the colliders over K of Bevy's tables, the i-th collider in table i mod K, as a game's
//! colliders spread over the component sets of its kinds of entity. `--churn C` despawns C of the
//! moving colliders a frame and spawns C moving ones, in any workload (W6 churns 1% unless told).
//! `--layered` puts every collider in one layer that interacts with itself: the same pairs, filtered by
//! layers. `--swept` makes the bullets of the bullets workload swept colliders, and marks
//! `Teleported` the step of one that leaves the world on one side and comes back on the other.
//! `--per-frame` prints a line for each timed frame: how many proxies the broad phase queried,
//! how many pairs the narrow phase tested, and each stage's time, to find which frames and stages make
//! a p99. `--fps N` starts each update 1/N s after the one before, sleeping between them, as a game
//! at N frames a second does; without it the updates follow each other at once, which leaves the
//! machine no time to go idle.
//!
//! Workloads (colliders are 40% rects, 30% rotated rects, 30% circles, sizes 1 to 3):
//! - `w1`: uniform moving, in a square of side 4√N;
//! - `w2`: dense pile, about 8 neighbours each;
//! - `w3`: static-heavy, N colliders that never move and N/100 that do;
//! - `w5`: teleport, every collider relocated each frame;
//! - `w6`: churn, 1% of colliders despawned and as many spawned each frame, the rest moving;
//! - `w7`: resting, nothing moves;
//! - `level`: 97% of W1 and 3% still walls, 10 to 60 long and 1 to 3 thick, a third of them rotated;
//! - `clustered`: W1's shapes in 16 Gaussian clusters in a mostly empty world of side 16√N;
//! - `bullets`: N/2 targets of W1 at up to 0.7 units a second per axis, and N/120 circles of radius
//!   0.2 fired a frame at 40 units a second, each despawned after 60 frames;
//! - `sizes`: W1 with both sides log-uniform from 0.25 to 40, in a world of side 8√N;
//! - `tilemap`: N colliders of W1 over a `TilemapCollider` of `--map M` × M unit cells (1,000 unless
//!   told; 0 for the colliders alone, in a world of side 1,000), about 45% solid in round blobs of
//!   three kinds; `--edits E` flips E random cells a frame. It prints how long the first update,
//!   which spawns the map's regions, took.
//!
//! `--games` runs W1, `level`, `clustered`, `bullets` and `sizes` at 10,000 and 100,000 colliders: the
//! workloads the broad phase is chosen on. `--queries` casts 1,000 rays of length 20 and asks about
//! 1,000 points after each update, the same every frame, and prints what each kind took.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bevy::math::Ray2d;
use bevy::prelude::*;
use bevy_rect_collision::prelude::*;
use bevy_rect_collision_benches::{
    BULLET_FRAMES, FramePacer, GameWorkload, KindOrder, P99_BOUND, QUERIES, RAY_LENGTH, SeededRng,
    Spawn, blob_map, compute_threads_flag, count_or_exit, flag_value, frame_interval_flag, mean_ms,
    median_of, median_p99, query_rays_and_points, share_past_bound, task_pool_plugin, wrapped_step,
};

/// Counts allocations, to report how many a frame makes.
struct CountingAllocator;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The collision pipeline's frame as seen from outside its stages: the allocations it made and its
/// span, from a system ordered after transform propagation and before the first stage to one ordered
/// after the last stage, which includes the executor's work between the stages as well as the stages'
/// own. The second system ignores the events stage's commands, as systems of a game that are not
/// ordered after that stage do: ordered after it plainly, it would add a sync point, which a game
/// shares with every other system's commands.
#[derive(Resource, Default)]
struct PipelineSpan {
    allocations_at_start: u64,
    allocations: u64,
    started: Option<Instant>,
    span: Duration,
}

fn before_pipeline(mut span: ResMut<PipelineSpan>) {
    span.allocations_at_start = ALLOCATIONS.load(Ordering::Relaxed);
    span.started = Some(Instant::now());
}

fn after_pipeline(mut span: ResMut<PipelineSpan>) {
    span.span = span
        .started
        .map_or(Duration::ZERO, |started| started.elapsed());
    span.allocations = ALLOCATIONS.load(Ordering::Relaxed) - span.allocations_at_start;
}

const WARMUP_FRAMES: usize = 10;
const FRAME_TIME: f32 = 1.0 / 60.0;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Workload {
    UniformMoving,
    DensePile,
    StaticHeavy,
    Teleport,
    Churn,
    Resting,
    /// A level, clusters, bullets or log-uniform sizes ([`GameWorkload`]).
    Game(GameWorkload),
    /// W1's colliders over a `TilemapCollider` of `--map` × `--map` unit cells, about 45% solid in
    /// blobs of three kinds, the colliders spread over the whole map.
    Tilemap,
}

impl Workload {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "w1" => Self::UniformMoving,
            "w2" => Self::DensePile,
            "w3" => Self::StaticHeavy,
            "w5" => Self::Teleport,
            "w6" => Self::Churn,
            "w7" => Self::Resting,
            "level" => Self::Game(GameWorkload::Level),
            "clustered" => Self::Game(GameWorkload::Clustered),
            "bullets" => Self::Game(GameWorkload::Bullets),
            "sizes" => Self::Game(GameWorkload::Sizes),
            "tilemap" => Self::Tilemap,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::UniformMoving => "w1 uniform moving",
            Self::DensePile => "w2 dense pile",
            Self::StaticHeavy => "w3 static-heavy",
            Self::Teleport => "w5 teleport",
            Self::Churn => "w6 churn",
            Self::Resting => "w7 resting",
            Self::Game(GameWorkload::Level) => "level (3% walls)",
            Self::Game(GameWorkload::Clustered) => "clustered",
            Self::Game(GameWorkload::Bullets) => "bullets",
            Self::Game(GameWorkload::Sizes) => "sizes 0.25 to 40",
            Self::Tilemap => "tilemap",
        }
    }

    /// Side of the square world for `n` colliders, and a tile map of `map` cells a side.
    fn side(self, n: usize, map: u32) -> f32 {
        match self {
            // About 8 neighbours each: a density of 0.5 colliders per unit square.
            Self::DensePile => (n as f32 / 0.5).sqrt(),
            Self::Game(game) => game.side(n),
            // The colliders alone (`--map 0`) move in the default map's world.
            Self::Tilemap => (if map > 0 { map } else { 1_000 }) as f32,
            _ => 4.0 * (n as f32).sqrt(),
        }
    }
}

#[derive(Component)]
struct Velocity(Vec2);

/// A marker that puts the colliders that have it in a table of their own (`--tables`).
#[derive(Component)]
struct TableMarker<const N: u8>;

/// The most tables `--tables` spreads the colliders over.
const MAX_TABLES: usize = 4;

/// How the spawned colliders are laid out, as the command line tells: in which order of kinds, over how
/// many of Bevy's tables, and whether with layers.
#[derive(Clone, Copy)]
struct SpawnLayout {
    /// The order of the colliders' kinds.
    kinds: KindOrder,
    /// How many of Bevy's tables the colliders spread over (`--tables`).
    tables: usize,
    /// Whether every collider has [`LAYERED`] (`--layered`), so that the pairs are filtered by layers.
    layered: bool,
    /// Whether the bullets of the bullets workload are swept (`--swept`).
    swept_bullets: bool,
}

/// The layers of every collider with `--layered`: one layer, which interacts with itself, so that the
/// pairs are those of colliders with the default layers, filtered by layers all the same.
const LAYERED: CollisionLayers = CollisionLayers::new(0b1, 0b1);

#[derive(Resource)]
struct Bench {
    workload: Workload,
    side: f32,
    rng: SeededRng,
    layout: SpawnLayout,
    /// How many moving colliders are despawned and spawned a frame (`--churn`); W6 churns 1% of them
    /// unless told, the other workloads none.
    churn: Option<usize>,
    /// Colliders that move (all but the static ones of W3).
    movers: Vec<Entity>,
    /// The share of their speed at which the colliders move: 1 in the warm-up, and after it one over
    /// `--slow-down`'s count.
    speed: f32,
    /// The centres of the clusters, for the clustered workload.
    centres: Vec<Vec2>,
    /// The bullets in flight, oldest first, with the frame each was fired on.
    bullets: VecDeque<(Entity, usize)>,
    /// The frames stepped so far.
    frame: usize,
    /// How many colliders the workload was asked for.
    n: usize,
    /// The tile map's side in cells, and how many of its cells are flipped a frame (`--map`,
    /// `--edits`).
    map: u32,
    edits: usize,
}

/// Spawns the i-th collider of W1 and the workloads built on it, laid out by `layout` (in table i mod
/// its tables); it moves if `moving`.
fn spawn_one(
    commands: &mut Commands,
    layout: SpawnLayout,
    rng: &mut SeededRng,
    side: f32,
    i: usize,
    moving: bool,
) -> Entity {
    let spawn = Spawn::generate_in(layout.kinds, rng, i, side, moving);
    spawn_as(commands, layout, spawn, i)
}

/// Spawns `spawn` as the i-th collider, laid out by `layout`.
fn spawn_as(commands: &mut Commands, layout: SpawnLayout, spawn: Spawn, i: usize) -> Entity {
    let collider = Collider::from_shape(spawn.shape);
    let mut entity = commands.spawn((
        Transform::from_translation(spawn.position.extend(0.0))
            .with_rotation(Quat::from_rotation_z(spawn.rotation)),
        collider,
    ));
    if let Some(velocity) = spawn.velocity {
        entity.insert(Velocity(velocity));
    }
    if layout.layered {
        entity.insert(LAYERED);
    }
    match i % layout.tables {
        0 => {}
        1 => {
            entity.insert(TableMarker::<1>);
        }
        2 => {
            entity.insert(TableMarker::<2>);
        }
        _ => {
            entity.insert(TableMarker::<3>);
        }
    }
    entity.id()
}

fn setup(mut commands: Commands, mut bench: ResMut<Bench>, count: Res<ColliderCount>) {
    let Bench {
        workload,
        side,
        rng,
        layout,
        movers,
        centres,
        map,
        ..
    } = &mut *bench;
    if *workload == Workload::Tilemap && *map > 0 {
        let half = *map as f32 * 0.5;
        commands.spawn((
            blob_map(rng, *map, 1.0),
            Transform::from_xyz(-half, -half, 0.0),
        ));
    }
    if let Workload::Game(game) = *workload {
        let n = count.0;
        *centres = GameWorkload::cluster_centres(rng, *side);
        for i in 0..game.spawned(n) {
            let spawn = game.spawn(rng, i, n, *side, centres);
            let entity = spawn_as(&mut commands, *layout, spawn, i);
            if spawn.velocity.is_some() {
                movers.push(entity);
            }
        }
        return;
    }
    for i in 0..count.0 {
        let moving = !matches!(workload, Workload::Resting | Workload::StaticHeavy);
        let entity = spawn_one(&mut commands, *layout, rng, *side, i, moving);
        if moving {
            movers.push(entity);
        }
    }
    if *workload == Workload::StaticHeavy {
        for i in 0..count.0 / 100 {
            movers.push(spawn_one(&mut commands, *layout, rng, *side, i, true));
        }
    }
}

#[derive(Resource)]
struct ColliderCount(usize);

/// The rays and points of `--queries`, the same every frame, and what asking about them took.
#[derive(Resource, Default)]
struct Queries {
    rays: Vec<Ray2d>,
    points: Vec<Vec2>,
    ray_times: Vec<Duration>,
    point_times: Vec<Duration>,
    ray_hits: usize,
    points_found: usize,
}

impl Queries {
    fn new(side: f32) -> Self {
        let (rays, points) = query_rays_and_points(side);
        Self {
            rays,
            points,
            ..default()
        }
    }
}

/// Casts every ray of [`Queries`] and asks about every point, timing each kind apart.
fn run_queries(query: SpatialQuery, mut queries: ResMut<Queries>) {
    let queries = &mut *queries;
    let start = Instant::now();
    let hits = (queries.rays.iter())
        .filter(|ray| query.cast_ray(**ray, RAY_LENGTH, &default()).is_some())
        .count();
    let rays = start.elapsed();
    let start = Instant::now();
    let found: usize = (queries.points.iter())
        .map(|&point| query.point_intersections(point, &default()).len())
        .sum();
    queries.point_times.push(start.elapsed());
    queries.ray_times.push(rays);
    queries.ray_hits += hits;
    queries.points_found += found;
}

fn step(
    mut commands: Commands,
    mut bench: ResMut<Bench>,
    mut movers: Query<(Entity, &mut Transform, &Velocity, Has<SweptCollider>)>,
    mut maps: Query<&mut TilemapCollider>,
) {
    let bench = &mut *bench;
    for mut map in &mut maps {
        for _ in 0..bench.edits {
            let cell =
                (Vec2::new(bench.rng.unit(), bench.rng.unit()) * bench.map as f32).as_uvec2();
            let kind = if map.get(cell) == 0 { 1 } else { 0 };
            map.set(cell, kind);
        }
    }
    let Bench {
        workload,
        side,
        rng,
        layout,
        churn,
        movers: list,
        speed,
        bullets,
        frame,
        n,
        ..
    } = &mut *bench;
    *frame += 1;
    let (side, half) = (*side, *side * 0.5);
    match workload {
        Workload::Resting => {}
        Workload::Teleport => {
            for (_, mut transform, _, _) in &mut movers {
                transform.translation = rng.point(half).extend(0.0);
            }
        }
        _ => {
            for (entity, mut transform, velocity, swept) in &mut movers {
                let position = transform.translation.truncate();
                let step = velocity.0 * *speed * FRAME_TIME;
                let next = wrapped_step(position, velocity.0 * *speed, FRAME_TIME, side);
                transform.translation = next.extend(0.0);
                transform.rotate_z(0.01 * *speed);
                // Leaving one side of the world for the other is a jump, as a game would mark it.
                if swept && next.distance_squared(position + step) > step.length_squared() {
                    commands.entity(entity).insert(Teleported);
                }
            }
        }
    }
    if *workload == Workload::Game(GameWorkload::Bullets) {
        while let Some(&(bullet, fired)) = bullets.front()
            && *frame - fired >= BULLET_FRAMES
        {
            commands.entity(bullet).despawn();
            bullets.pop_front();
        }
        for i in 0..(*n / 120).max(1) {
            let bullet = spawn_as(&mut commands, *layout, GameWorkload::bullet(rng, side), i);
            if layout.swept_bullets {
                commands.entity(bullet).insert(SweptCollider);
            }
            bullets.push_back((bullet, *frame));
        }
    }
    if *workload == Workload::Churn || churn.is_some() {
        let churned = churn.unwrap_or((list.len() / 100).max(1)).min(list.len());
        for _ in 0..churned {
            let index = (rng.unit() * list.len() as f32) as usize % list.len();
            commands.entity(list.swap_remove(index)).despawn();
        }
        for i in 0..churned {
            let entity = spawn_one(&mut commands, *layout, rng, side, i, true);
            list.push(entity);
        }
    }
}

struct Report {
    stages: [(&'static str, Vec<Duration>); 5],
    update: Vec<Duration>,
    allocations: Vec<u64>,
    pipeline_allocations: Vec<u64>,
    span: Vec<Duration>,
    started: usize,
    ended: usize,
    touching: usize,
    /// The colliders taking part at the last frame (`CollisionDiagnostics::colliders`).
    colliders: usize,
    candidates: usize,
    /// The pairs the narrow phase tested each frame (`CollisionDiagnostics::tested_pairs`).
    tested: Vec<usize>,
    /// The proxies the broad phase queried each frame (`CollisionDiagnostics::queried_proxies`).
    moved: Vec<usize>,
}

/// What the command line sets for every run besides the workload and its size.
#[derive(Clone, Copy)]
struct RunOptions {
    frames: usize,
    compute_threads: Option<usize>,
    layout: SpawnLayout,
    slow_down: usize,
    churn: Option<usize>,
    /// Whether each timed frame gets a line of its own (`--per-frame`).
    per_frame: bool,
    /// The time from one update's start to the next's, as in a game that runs at a fixed frame rate
    /// (`--fps`); `None` runs the updates back to back.
    frame_interval: Option<Duration>,
    /// Whether each frame casts [`QUERIES`] rays and asks about as many points after the pipeline
    /// (`--queries`).
    queries: bool,
    /// The tile map's side in cells for the tilemap workload, 0 for none (`--map`), and how many of
    /// its cells are flipped a frame (`--edits`).
    map: u32,
    edits: usize,
}

/// The line `--per-frame` prints for a timed frame: the proxies the broad phase queried, the pairs
/// the narrow phase tested, and each stage's time in microseconds. A frame that sets the p99 shows
/// here which stage took the time.
fn print_frame(frame: usize, diagnostics: &CollisionDiagnostics) {
    let micros = |time: Duration| time.as_secs_f64() * 1e6;
    let t = diagnostics.timings;
    println!(
        "  frame {frame:>5} moved {:>7} tested {:>7}   prepare {:7.1} µs   broad \
         {:7.1} µs   narrow {:7.1} µs   events {:7.1} µs   pipeline {:7.1} µs",
        diagnostics.queried_proxies,
        diagnostics.tested_pairs,
        micros(t.prepare),
        micros(t.broad_phase),
        micros(t.narrow_phase),
        micros(t.events),
        micros(t.total()),
    );
}

fn run(workload: Workload, n: usize, options: RunOptions) -> Report {
    let frames = options.frames;
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins.set(task_pool_plugin(options.compute_threads)),
        TransformPlugin,
        RectCollisionPlugin::default(),
    ))
    .insert_resource(ColliderCount(n))
    .insert_resource(Bench {
        workload,
        side: workload.side(n, options.map),
        rng: SeededRng::new(0x5eed_0000 + n as u64),
        layout: options.layout,
        churn: options.churn,
        movers: Vec::new(),
        speed: 1.0,
        centres: Vec::new(),
        bullets: VecDeque::new(),
        frame: 0,
        n,
        map: if workload == Workload::Tilemap {
            options.map
        } else {
            0
        },
        edits: options.edits,
    })
    .init_resource::<PipelineSpan>()
    .add_systems(Startup, setup)
    .add_systems(Update, step)
    .add_systems(
        PostUpdate,
        (
            before_pipeline
                .after(bevy::transform::TransformSystems::Propagate)
                .before(CollisionSystems::Prepare),
            after_pipeline.after_ignore_deferred(CollisionSystems::Events),
        ),
    );
    if options.queries {
        app.insert_resource(Queries::new(workload.side(n, options.map)))
            .add_systems(
                PostUpdate,
                run_queries.after_ignore_deferred(CollisionSystems::Events),
            );
    }
    app.finish();
    app.cleanup();
    let mut report = Report {
        stages: [
            ("prepare", Vec::new()),
            ("broad", Vec::new()),
            ("narrow", Vec::new()),
            ("events", Vec::new()),
            ("pipeline", Vec::new()),
        ],
        update: Vec::new(),
        allocations: Vec::new(),
        pipeline_allocations: Vec::new(),
        span: Vec::new(),
        started: 0,
        ended: 0,
        touching: 0,
        colliders: 0,
        candidates: 0,
        tested: Vec::new(),
        moved: Vec::new(),
    };
    let mut pacer = FramePacer::new(options.frame_interval);
    for frame in 0..WARMUP_FRAMES + frames {
        pacer.wait_for_next_frame();
        if frame == WARMUP_FRAMES {
            app.world_mut().resource_mut::<Bench>().speed = 1.0 / options.slow_down as f32;
            if let Some(mut queries) = app.world_mut().get_resource_mut::<Queries>() {
                let Queries { rays, points, .. } = core::mem::take(&mut *queries);
                *queries = Queries {
                    rays,
                    points,
                    ..default()
                };
            }
        }
        let allocations = ALLOCATIONS.load(Ordering::Relaxed);
        let start = Instant::now();
        app.update();
        let elapsed = start.elapsed();
        if frame == 0 && workload == Workload::Tilemap {
            println!(
                "the first update, which spawns the map and its regions: {:.0} ms",
                elapsed.as_secs_f64() * 1e3
            );
        }
        if frame < WARMUP_FRAMES {
            continue;
        }
        let d = *app.world().resource::<CollisionDiagnostics>();
        let t = d.timings;
        for (stage, value) in report.stages.iter_mut().zip([
            t.prepare,
            t.broad_phase,
            t.narrow_phase,
            t.events,
            t.total(),
        ]) {
            stage.1.push(value);
        }
        report.update.push(elapsed);
        report
            .allocations
            .push(ALLOCATIONS.load(Ordering::Relaxed) - allocations);
        let span = app.world().resource::<PipelineSpan>();
        report.pipeline_allocations.push(span.allocations);
        report.span.push(span.span);
        report.started += d.started;
        report.ended += d.ended;
        report.touching = d.touching_pairs;
        report.colliders = d.colliders;
        report.candidates = d.candidate_pairs;
        report.tested.push(d.tested_pairs);
        report.moved.push(d.queried_proxies);
        if options.per_frame {
            print_frame(frame - WARMUP_FRAMES, &d);
        }
    }
    if let Some(mut queries) = app.world_mut().remove_resource::<Queries>() {
        let (rays, _) = median_p99(&mut queries.ray_times);
        let (points, _) = median_p99(&mut queries.point_times);
        println!(
            "queries: {QUERIES} rays of length {RAY_LENGTH} take {:.3} ms ({:.2} µs a ray, {:.0} hits a \
             frame); {QUERIES} points {:.3} ms ({:.2} µs a point, {:.0} colliders found a frame)",
            rays,
            rays * 1e3 / QUERIES as f64,
            queries.ray_hits as f64 / frames as f64,
            points,
            points * 1e3 / QUERIES as f64,
            queries.points_found as f64 / frames as f64,
        );
    }
    report
}

/// One run of a workload in a line of the table that `--rounds` prints.
struct Summary {
    pipeline: f64,
    pipeline_p99: f64,
    span: f64,
    update: f64,
    pipeline_allocations: u64,
    allocations: u64,
    starts_per_frame: f64,
}

/// Prints a run's figures and returns the ones the table of `--rounds` gathers.
fn print_report(workload: Workload, n: usize, frames: usize, mut report: Report) -> Summary {
    println!("{} n={n} frames={frames}", workload.name());
    let (mut pipeline, mut pipeline_p99) = (0.0, 0.0);
    for (stage, samples) in &mut report.stages {
        let mean = mean_ms(samples);
        let (median, p99) = median_p99(samples);
        // For the whole pipeline, the share past the aim's bound: its p99 holds while that is at most 1%.
        let mut past = String::new();
        if *stage == "pipeline" {
            (pipeline, pipeline_p99) = (median, p99);
            let share = 100.0 * share_past_bound(samples, median);
            past = format!("   past {P99_BOUND} times the median {share:.2}%");
        }
        println!(
            "  {stage:<9} median {median:8.3} ms   p99 {p99:8.3} ms   mean {mean:8.3} ms{past}"
        );
    }
    let mean = mean_ms(&report.span);
    let (span, p99) = median_p99(&mut report.span);
    println!(
        "  {:<9} median {span:8.3} ms   p99 {p99:8.3} ms   mean {mean:8.3} ms   (before prepare to after events)",
        "span"
    );
    let mean = mean_ms(&report.update);
    let (update, p99) = median_p99(&mut report.update);
    println!(
        "  {:<9} median {update:8.3} ms   p99 {p99:8.3} ms   mean {mean:8.3} ms   (app.update, all systems)",
        "update"
    );
    report.allocations.sort_unstable();
    report.pipeline_allocations.sort_unstable();
    report.tested.sort_unstable();
    report.moved.sort_unstable();
    let summary = Summary {
        pipeline,
        pipeline_p99,
        span,
        update,
        pipeline_allocations: report.pipeline_allocations[report.pipeline_allocations.len() / 2],
        allocations: report.allocations[report.allocations.len() / 2],
        starts_per_frame: report.started as f64 / frames as f64,
    };
    println!(
        "  allocations per frame: median {} in the pipeline, {} in the whole app.update   colliders {}   candidates {}   touching {}   starts/frame {:.1}   ends/frame {:.1}   moved: median {}   tested: median {}",
        summary.pipeline_allocations,
        summary.allocations,
        report.colliders,
        report.candidates,
        report.touching,
        summary.starts_per_frame,
        report.ended as f64 / frames as f64,
        report.moved[report.moved.len() / 2],
        report.tested[report.tested.len() / 2],
    );
    summary
}

/// Prints, as rows of a Markdown table, each workload's medians over its runs, with the lowest and
/// highest of its runs' pipeline medians.
fn print_rounds_table(plan: &[(Workload, usize)], runs: &[Vec<Summary>]) {
    println!(
        "\nmedians over {} rounds (the pipeline's lowest and highest run in brackets):",
        runs[0].len()
    );
    println!(
        "| workload | N | pipeline median | p99 | span | whole `app.update` | allocations: pipeline (update) | starts per frame |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for ((workload, n), runs) in plan.iter().zip(runs) {
        let of = |field: fn(&Summary) -> f64| median_of(runs.iter().map(field).collect());
        let pipelines: Vec<f64> = runs.iter().map(|run| run.pipeline).collect();
        let lowest = pipelines.iter().copied().fold(f64::INFINITY, f64::min);
        let highest = pipelines.iter().copied().fold(0.0, f64::max);
        println!(
            "| {} | {n} | {:.3} ms ({lowest:.3} to {highest:.3}) | {:.3} ms | {:.3} ms | {:.3} ms | {} ({}) | {:.1} |",
            workload.name(),
            median_of(pipelines),
            of(|run| run.pipeline_p99),
            of(|run| run.span),
            of(|run| run.update),
            of(|run| run.pipeline_allocations as f64),
            of(|run| run.allocations as f64),
            of(|run| run.starts_per_frame),
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| flag_value(&args, flag);
    let count = |flag: &str, default: usize, least: usize| {
        count_or_exit("collision_bench", &args, flag, default, least)
    };
    let frames = count("--frames", 200, 1);
    let compute_threads = compute_threads_flag("collision_bench", &args);
    let kinds = KindOrder::from_args(&args);
    if kinds == KindOrder::Shuffled {
        println!("kinds in no order (--kinds shuffled)");
    }
    let plan: Vec<(Workload, usize)> = if args.iter().any(|a| a == "--all") {
        vec![
            (Workload::UniformMoving, 1_000),
            (Workload::UniformMoving, 10_000),
            (Workload::UniformMoving, 100_000),
            (Workload::DensePile, 10_000),
            (Workload::StaticHeavy, 100_000),
            (Workload::Teleport, 10_000),
            (Workload::Churn, 10_000),
            (Workload::Resting, 10_000),
        ]
    } else if args.iter().any(|a| a == "--games") {
        let games = [
            Workload::UniformMoving,
            Workload::Game(GameWorkload::Level),
            Workload::Game(GameWorkload::Clustered),
            Workload::Game(GameWorkload::Bullets),
            Workload::Game(GameWorkload::Sizes),
        ];
        [10_000, 100_000]
            .into_iter()
            .flat_map(|n| games.map(|workload| (workload, n)))
            .collect()
    } else {
        let workload = value("--workload").map_or(Workload::UniformMoving, |name| {
            Workload::parse(name).unwrap_or_else(|| {
                eprintln!(
                    "collision_bench: --workload {name}: one of w1, w2, w3, w5, w6, w7, level, \
                     clustered, bullets, sizes and tilemap"
                );
                std::process::exit(2);
            })
        });
        let n = count("--n", 10_000, 0);
        vec![(workload, n)]
    };
    let rounds = count("--rounds", 1, 1);
    let tables = count("--tables", 1, 1);
    if tables > MAX_TABLES {
        eprintln!("collision_bench: --tables {tables}: at most {MAX_TABLES}");
        std::process::exit(2);
    }
    if tables > 1 {
        println!("the colliders spread over {tables} tables");
    }
    let slow_down = count("--slow-down", 1, 1);
    if slow_down > 1 {
        println!("after the warm-up the colliders move and turn at 1/{slow_down} of their speed");
    }
    let layered = args.iter().any(|arg| arg == "--layered");
    if layered {
        println!("every collider in one layer, the pairs filtered by layers (--layered)");
    }
    let churn = (args.iter().any(|arg| arg == "--churn")).then(|| count("--churn", 1, 0));
    if let Some(churn) = churn {
        println!("{churn} moving colliders despawned and spawned a frame (--churn)");
    }
    let frame_interval = frame_interval_flag("collision_bench", &args);
    if let Some(interval) = frame_interval {
        println!(
            "each update starts {:.2} ms after the one before (--fps), as in a game",
            interval.as_secs_f64() * 1e3
        );
    }
    let options = RunOptions {
        frames,
        compute_threads,
        layout: SpawnLayout {
            kinds,
            tables,
            layered,
            swept_bullets: args.iter().any(|arg| arg == "--swept"),
        },
        slow_down,
        churn,
        per_frame: args.iter().any(|arg| arg == "--per-frame"),
        frame_interval,
        queries: args.iter().any(|arg| arg == "--queries"),
        map: u32::try_from(count("--map", 1_000, 0)).unwrap_or(u32::MAX),
        edits: count("--edits", 0, 0),
    };
    let mut runs: Vec<Vec<Summary>> = plan.iter().map(|_| Vec::new()).collect();
    // Round by round, every workload once a round: a slow stretch of the machine, which here lasts
    // seconds, falls on one run of each rather than on every run of one.
    for _ in 0..rounds {
        for (&(workload, n), runs) in plan.iter().zip(&mut runs) {
            let report = run(workload, n, options);
            runs.push(print_report(workload, n, frames, report));
        }
    }
    if rounds > 1 {
        print_rounds_table(&plan, &runs);
    }
}
