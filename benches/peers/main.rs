//! The W1 workload (uniform moving colliders) on bevy_rect_collision, avian2d 0.7 and bevy_rapier2d
//! 0.36 in one run, headless: per engine the median and p99 of a whole `app.update()`, the speed ratios,
//! and whether the engines agree on how many collisions started. The apps are built side by side and
//! take turns of ten timed frames, so that the machine's slower stretches fall on every engine alike;
//! each turn starts with a frame that is not timed, since it finds the previous app's data in the caches.
//! Each round of turns takes the apps in a new order (seeded), so that none always runs first or after
//! the same app (see [`run_all`]).
//!
//! ```text
//! cargo run --release -p bevy_rect_collision_peers -- --n 10000 --frames 500
//! cargo run --release -p bevy_rect_collision_peers -- --n 10000 --frames 500 --twin
//! cargo run --release -p bevy_rect_collision_peers -- --n 10000 --frames 500 --compute-threads 2
//! cargo run --release -p bevy_rect_collision_peers -- --n 10000 --frames 500 --kinds shuffled
//! ```
//!
//! A fourth app runs the same colliders' movement and transform propagation with no collision engine.
//! Its median is subtracted from each engine's, which gives what collision detection adds to a frame:
//! the ratios are given on both measures. `--twin` runs a second such app and prints how far its median
//! lies from the first's: the bias of the apps' order and of the machine's drift, which every engine's
//! added time carries too. `--compute-threads N` gives Bevy's compute task pool N threads in every app;
//! without it the pool has Bevy's default size (one thread on two cores).
//! `--kinds shuffled` draws each collider's kind at random instead of in a period of ten
//! (`KindOrder`). `--n` and `--frames` are at least 1; a count that is not a whole number is refused
//! with a message.
//!
//! The peers are set up for detection only: kinematic sensor colliders with collision events on (for
//! rapier also `ActiveCollisionTypes::all()`, without which two kinematic bodies never collide), stepped
//! once per update in `PostUpdate` like this crate. Every engine gets the same spawn sequence
//! (`Spawn::generate_in`, seeded) and the same movement; axis-aligned rectangles never turn, so that
//! they mean the same shape to all three. The run fails if a peer's count of started collisions differs
//! from ours by more than 3%.

use std::time::{Duration, Instant};

use avian2d::prelude as avian;
use bevy::prelude::*;
use bevy_rapier2d::prelude as rapier;
use bevy_rect_collision::prelude::*;
use bevy_rect_collision_benches::{
    KindOrder, SeededRng, Spawn, compute_threads_flag, count_or_exit, median_p99, task_pool_plugin,
    wrapped_step,
};

const WARMUP_FRAMES: usize = 10;
/// Timed frames an engine's app runs in a row before the next app takes its turn (see [`run_all`]).
const FRAMES_PER_TURN: usize = 10;
/// The seed of the apps' order in each round of turns (see [`run_all`]).
const TURN_ORDER_SEED: u64 = 0x7e_0dde;
const FRAME_TIME: f32 = 1.0 / 60.0;
/// How far a peer's count of started collisions may stray from ours before the run fails: the engines
/// must be measuring the same contacts. They differ slightly where shapes just touch.
const MAX_DISAGREEMENT_PERCENT: f64 = 3.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    /// No collision engine: the movement and transform propagation every engine's frame includes.
    Baseline,
    /// A second app with no engine (`--twin`): how far its median lies from the first's is the bias of
    /// the apps' order and of the machine's drift, which every engine's added time carries too.
    Twin,
    Ours,
    Avian,
    Rapier,
}

impl Engine {
    const ALL: [Engine; 4] = [
        Engine::Baseline,
        Engine::Ours,
        Engine::Avian,
        Engine::Rapier,
    ];

    fn name(self) -> &'static str {
        match self {
            Engine::Baseline => "no collision engine",
            Engine::Twin => "no engine (twin)",
            Engine::Ours => "bevy_rect_collision",
            Engine::Avian => "avian2d 0.7",
            Engine::Rapier => "bevy_rapier2d 0.36",
        }
    }
}

/// How a collider moves each frame.
#[derive(Component)]
struct Mover {
    velocity: Vec2,
    /// Whether it also turns; axis-aligned rectangles do not.
    turns: bool,
}

/// The side of the square world.
#[derive(Resource)]
struct WorldSide(f32);

/// Collisions started so far, as the engine reported them.
#[derive(Resource, Default)]
struct Starts(usize);

fn move_colliders(side: Res<WorldSide>, mut movers: Query<(&mut Transform, &Mover)>) {
    for (mut transform, mover) in &mut movers {
        let position = transform.translation.truncate();
        transform.translation =
            wrapped_step(position, mover.velocity, FRAME_TIME, side.0).extend(0.0);
        if mover.turns {
            transform.rotate_z(0.01);
        }
    }
}

fn count_ours(mut started: MessageReader<CollisionStarted>, mut starts: ResMut<Starts>) {
    starts.0 += started.read().count();
}

fn count_avian(mut started: MessageReader<avian::CollisionStart>, mut starts: ResMut<Starts>) {
    starts.0 += started.read().count();
}

fn count_rapier(mut events: MessageReader<rapier::CollisionEvent>, mut starts: ResMut<Starts>) {
    starts.0 += events
        .read()
        .filter(|event| matches!(event, rapier::CollisionEvent::Started(..)))
        .count();
}

/// Spawns one collider of the workload for `engine`.
fn spawn(world: &mut World, engine: Engine, spawn: &Spawn) {
    let turns = !matches!(spawn.shape, ColliderShape::Rect { .. });
    let rotation = if turns { spawn.rotation } else { 0.0 };
    let transform = Transform::from_translation(spawn.position.extend(0.0))
        .with_rotation(Quat::from_rotation_z(rotation));
    let mover = Mover {
        velocity: spawn.velocity.unwrap_or_default(),
        turns,
    };
    match engine {
        Engine::Baseline | Engine::Twin => {
            world.spawn((transform, mover));
        }
        Engine::Ours => {
            let collider = Collider::from_shape(spawn.shape);
            world.spawn((transform, mover, collider));
        }
        Engine::Avian => {
            let collider = match spawn.shape {
                ColliderShape::Rect { half_size } | ColliderShape::RotatedRect { half_size } => {
                    avian::Collider::rectangle(half_size.x * 2.0, half_size.y * 2.0)
                }
                ColliderShape::Circle { radius } => avian::Collider::circle(radius),
            };
            world.spawn((
                transform,
                mover,
                collider,
                avian::RigidBody::Kinematic,
                avian::Sensor,
                avian::CollisionEventsEnabled,
            ));
        }
        Engine::Rapier => {
            let collider = match spawn.shape {
                ColliderShape::Rect { half_size } | ColliderShape::RotatedRect { half_size } => {
                    rapier::Collider::cuboid(half_size.x, half_size.y)
                }
                ColliderShape::Circle { radius } => rapier::Collider::ball(radius),
            };
            world.spawn((
                transform,
                mover,
                collider,
                rapier::RigidBody::KinematicPositionBased,
                rapier::Sensor,
                rapier::ActiveEvents::COLLISION_EVENTS,
                rapier::ActiveCollisionTypes::all(),
            ));
        }
    }
}

/// A headless app running `engine` on the spawned colliders.
fn app(engine: Engine, spawns: &[Spawn], side: f32, compute_threads: Option<usize>) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins.set(task_pool_plugin(compute_threads)),
        TransformPlugin,
    ))
    .insert_resource(WorldSide(side))
    .init_resource::<Starts>()
    .add_systems(Update, move_colliders);
    match engine {
        Engine::Baseline | Engine::Twin => {}
        Engine::Ours => {
            app.add_plugins(RectCollisionPlugin::default())
                .add_systems(Last, count_ours);
        }
        Engine::Avian => {
            app.add_plugins(avian::PhysicsPlugins::new(PostUpdate))
                .add_systems(Last, count_avian);
        }
        Engine::Rapier => {
            app.add_plugins(rapier::RapierPhysicsPlugin::<rapier::NoUserData>::default())
                .add_systems(Last, count_rapier);
        }
    }
    app.finish();
    app.cleanup();
    for one in spawns {
        spawn(app.world_mut(), engine, one);
    }
    app
}

struct Run {
    engine: Engine,
    median: f64,
    p99: f64,
    starts: usize,
}

/// Runs every engine's app for `frames` timed frames after its warm-up. The apps take turns of
/// [`FRAMES_PER_TURN`] timed frames after one untimed, so that the machine's slower stretches, which
/// here last seconds, fall on all of them alike rather than on whichever ran then.
///
/// Each round of turns shuffles the apps' order: an app's frames depend on its place in the round and
/// on the app before it, which a fixed order would turn into a bias on every engine's added time
/// (`--twin` shows it: a second app with no engine, placed always second, comes out slower than the
/// first).
fn run_all(
    engines: &[Engine],
    spawns: &[Spawn],
    side: f32,
    frames: usize,
    compute_threads: Option<usize>,
) -> Vec<Run> {
    let mut apps: Vec<(Engine, App, Vec<Duration>)> = engines
        .iter()
        .map(|&engine| {
            let mut app = app(engine, spawns, side, compute_threads);
            for _ in 0..WARMUP_FRAMES {
                app.update();
            }
            (engine, app, Vec::with_capacity(frames))
        })
        .collect();
    let mut order: Vec<usize> = (0..apps.len()).collect();
    let mut rng = SeededRng::new(TURN_ORDER_SEED);
    for turn_start in (0..frames).step_by(FRAMES_PER_TURN) {
        let turn_frames = FRAMES_PER_TURN.min(frames - turn_start);
        rng.shuffle(&mut order);
        for &index in &order {
            let (_, app, samples) = &mut apps[index];
            // The turn's first frame finds the caches holding the previous app's data: not timed.
            app.update();
            for _ in 0..turn_frames {
                let start = Instant::now();
                app.update();
                samples.push(start.elapsed());
            }
        }
    }
    apps.into_iter()
        .map(|(engine, app, mut samples)| {
            let (median, p99) = median_p99(&mut samples);
            Run {
                engine,
                median,
                p99,
                starts: app.world().resource::<Starts>().0,
            }
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let count = |flag: &str, default: usize, least: usize| {
        count_or_exit("peers", &args, flag, default, least)
    };
    let n = count("--n", 10_000, 1);
    let frames = count("--frames", 100, 1);
    let compute_threads = compute_threads_flag("peers", &args);
    let kinds = KindOrder::from_args(&args);
    let side = 4.0 * (n as f32).sqrt();
    let mut rng = SeededRng::new(0x5eed_0000 + n as u64);
    let spawns: Vec<Spawn> = (0..n)
        .map(|i| Spawn::generate_in(kinds, &mut rng, i, side, true))
        .collect();

    let threads = compute_threads.map_or("Bevy's default".to_string(), |t| t.to_string());
    println!(
        "w1 uniform moving n={n} frames={frames} (+{WARMUP_FRAMES} warm-up), whole app.update() per \
         frame, compute threads: {threads}, kinds: {kinds:?}"
    );
    let mut engines = Engine::ALL.to_vec();
    if args.iter().any(|arg| arg == "--twin") {
        engines.push(Engine::Twin);
    }
    let runs = run_all(&engines, &spawns, side, frames, compute_threads);
    for run in &runs {
        println!(
            "  {:<20} median {:9.3} ms   p99 {:9.3} ms   collisions started {}",
            run.engine.name(),
            run.median,
            run.p99,
            run.starts
        );
    }
    let run_of = |engine: Engine| runs.iter().find(|run| run.engine == engine);
    let baseline = run_of(Engine::Baseline).expect("always run").median;
    // What the engine adds to a frame over moving the colliders alone.
    let added = |run: &Run| (run.median - baseline).max(f64::EPSILON);
    let ours = run_of(Engine::Ours).expect("always run");
    println!(
        "  collision detection adds {:.3} ms to a frame with bevy_rect_collision",
        added(ours)
    );
    if let Some(twin) = run_of(Engine::Twin) {
        println!(
            "  the twin of the app with no engine differs from it by {:+.3} ms: the order's and the \
             machine's bias in every added time",
            twin.median - baseline
        );
    }
    let peers: Vec<&Run> = [Engine::Avian, Engine::Rapier]
        .into_iter()
        .filter_map(run_of)
        .collect();
    let mut agree = true;
    for &peer in &peers {
        let disagreement =
            (peer.starts as f64 - ours.starts as f64) / (ours.starts.max(1) as f64) * 100.0;
        agree &= disagreement.abs() <= MAX_DISAGREEMENT_PERCENT;
        println!(
            "  {} adds {:.3} ms: {:.1}x ours ({:.1}x on whole frames); its starts differ from ours by \
             {disagreement:+.2}%",
            peer.engine.name(),
            added(peer),
            added(peer) / added(ours),
            peer.median / ours.median
        );
    }
    let faster_peer = peers
        .iter()
        .min_by(|a, b| a.median.total_cmp(&b.median))
        .expect("two peers");
    println!(
        "  against the faster peer: {:.1}x on the time collision detection adds, {:.1}x on whole frames",
        added(faster_peer) / added(ours),
        faster_peer.median / ours.median
    );
    if !agree {
        eprintln!(
            "the engines disagree by more than {MAX_DISAGREEMENT_PERCENT}% on the collisions started: \
             they are not measuring the same contacts"
        );
        std::process::exit(1);
    }
}
