//! A workload (W1, uniform moving colliders, unless `--workload` names a game workload) on
//! bevy_rect_collision, avian2d 0.7 and bevy_rapier2d 0.36 in one run, headless: per engine the median and p99 of a whole `app.update()`, the speed ratios,
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
//! with a message. `--workload level`, `clustered`, `bullets` or `sizes` runs one of the game
//! workloads of `collision_bench` (`GameWorkload`): still walls are fixed bodies for the peers, and
//! bullets are fired and despawned alike in every app. `--queries` casts 1,000 rays of length 20 and
//! asks about 1,000 points after each update in every engine, and prints the median time of that
//! system alone, per engine; `--casts` casts a circle of radius 0.5 along each of the rays instead, and
//! asks no point. `--move-and-slide` holds every collider still (static bodies for the peers), adds
//! 1,000 characters, 0.8 × 0.8 boxes at the rays' origins (kinematic bodies for avian2d), and after
//! each update moves each by 2 along its ray with `move_and_slide`, ours and avian2d's `MoveAndSlide`,
//! without applying the result; it prints the median time of that system per engine, and the mean
//! length of the moves as a check that both met the same walls. bevy_rapier2d sits it out, and the
//! starts are not compared: avian2d reports no start between two still bodies. `--tilemap M` lays a
//! tile map of M × M cells (200 unless told), about 45% solid in round blobs, over the whole world
//! under the colliders: one `TilemapCollider` for this crate, a fixed body per solid tile for the
//! peers, as their users would set it up; the starts are not compared, since a merged region is one
//! collider where the peers see its tiles.
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
use std::collections::VecDeque;

use bevy::math::Ray2d;
use bevy_rect_collision_benches::{
    BULLET_FRAMES, GameWorkload, KindOrder, QUERIES, RAY_LENGTH, SeededRng, Spawn, blob_map,
    compute_threads_flag, count_or_exit, flag_value, median_p99, query_rays_and_points,
    task_pool_plugin, wrapped_step,
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

/// Spawns one collider of the workload for `engine`; returns its entity. A collider with no velocity
/// never moves: a fixed body for the peers.
fn spawn(world: &mut World, engine: Engine, spawn: &Spawn) -> Entity {
    let turns = !matches!(spawn.shape, ColliderShape::Rect { .. });
    let rotation = if turns { spawn.rotation } else { 0.0 };
    let transform = Transform::from_translation(spawn.position.extend(0.0))
        .with_rotation(Quat::from_rotation_z(rotation));
    let Some(velocity) = spawn.velocity else {
        return spawn_still(world, engine, spawn, transform);
    };
    let mover = Mover { velocity, turns };
    match engine {
        Engine::Baseline | Engine::Twin => world.spawn((transform, mover)).id(),
        Engine::Ours => {
            let collider = Collider::from_shape(spawn.shape);
            world.spawn((transform, mover, collider)).id()
        }
        Engine::Avian => {
            let collider = avian_collider(spawn.shape);
            world
                .spawn((
                    transform,
                    mover,
                    collider,
                    avian::RigidBody::Kinematic,
                    avian::Sensor,
                    avian::CollisionEventsEnabled,
                ))
                .id()
        }
        Engine::Rapier => {
            let collider = rapier_collider(spawn.shape);
            world
                .spawn((
                    transform,
                    mover,
                    collider,
                    rapier::RigidBody::KinematicPositionBased,
                    rapier::Sensor,
                    rapier::ActiveEvents::COLLISION_EVENTS,
                    rapier::ActiveCollisionTypes::all(),
                ))
                .id()
        }
    }
}

/// Spawns a collider that never moves for `engine`: a fixed body for the peers, whose moving sensors
/// still report touching it.
fn spawn_still(world: &mut World, engine: Engine, spawn: &Spawn, transform: Transform) -> Entity {
    match engine {
        Engine::Baseline | Engine::Twin => world.spawn(transform).id(),
        Engine::Ours => world
            .spawn((transform, Collider::from_shape(spawn.shape)))
            .id(),
        Engine::Avian => world
            .spawn((
                transform,
                avian_collider(spawn.shape),
                avian::RigidBody::Static,
                avian::CollisionEventsEnabled,
            ))
            .id(),
        Engine::Rapier => world
            .spawn((
                transform,
                rapier_collider(spawn.shape),
                rapier::RigidBody::Fixed,
                rapier::ActiveEvents::COLLISION_EVENTS,
                rapier::ActiveCollisionTypes::all(),
            ))
            .id(),
    }
}

fn avian_collider(shape: ColliderShape) -> avian::Collider {
    match shape {
        ColliderShape::Rect { half_size } | ColliderShape::RotatedRect { half_size } => {
            avian::Collider::rectangle(half_size.x * 2.0, half_size.y * 2.0)
        }
        ColliderShape::Circle { radius } => avian::Collider::circle(radius),
        ColliderShape::Capsule {
            radius,
            half_length,
        } => avian::Collider::capsule(radius, 2.0 * half_length),
        ColliderShape::ConvexPolygon(polygon) => {
            avian::Collider::convex_hull(polygon.vertices().to_vec()).expect("a convex polygon")
        }
    }
}

fn rapier_collider(shape: ColliderShape) -> rapier::Collider {
    match shape {
        ColliderShape::Rect { half_size } | ColliderShape::RotatedRect { half_size } => {
            rapier::Collider::cuboid(half_size.x, half_size.y)
        }
        ColliderShape::Circle { radius } => rapier::Collider::ball(radius),
        ColliderShape::Capsule {
            radius,
            half_length,
        } => rapier::Collider::capsule_y(half_length, radius),
        ColliderShape::ConvexPolygon(polygon) => {
            rapier::Collider::convex_hull(polygon.vertices()).expect("a convex polygon")
        }
    }
}

/// The bullets of [`GameWorkload::Bullets`], fired and despawned alike in every app: the same seed,
/// the same bullets.
#[derive(Resource)]
struct Firing {
    engine: Engine,
    rng: SeededRng,
    side: f32,
    per_frame: usize,
    in_flight: VecDeque<(Entity, usize)>,
    frame: usize,
}

fn fire_bullets(world: &mut World) {
    let Some(mut firing) = world.remove_resource::<Firing>() else {
        return;
    };
    firing.frame += 1;
    while let Some(&(bullet, fired)) = firing.in_flight.front()
        && firing.frame - fired >= BULLET_FRAMES
    {
        world.despawn(bullet);
        firing.in_flight.pop_front();
    }
    for _ in 0..firing.per_frame {
        let bullet = GameWorkload::bullet(&mut firing.rng, firing.side);
        let entity = spawn(world, firing.engine, &bullet);
        firing.in_flight.push_back((entity, firing.frame));
    }
    world.insert_resource(firing);
}

/// The rays and points of `--queries`, the same in every app and every frame, and what each frame's
/// queries took and found.
#[derive(Resource, Clone, Default)]
struct Queries {
    rays: Vec<Ray2d>,
    points: Vec<Vec2>,
    /// Whether each ray is cast as a circle of radius [`CAST_RADIUS`], and no point is asked
    /// (`--casts`).
    casts: bool,
    times: Vec<Duration>,
    hits: usize,
}

/// The radius of the circle `--casts` casts along each ray.
const CAST_RADIUS: f32 = 0.5;

impl Queries {
    fn new(side: f32, casts: bool) -> Self {
        let (rays, points) = query_rays_and_points(side);
        Self {
            rays,
            points: if casts { Vec::new() } else { points },
            casts,
            ..default()
        }
    }

    /// Times the asks over every ray (as a ray, or as a cast circle) and point; each returns how many
    /// hits it found.
    fn run(
        &mut self,
        ask_ray: impl Fn(&Ray2d) -> bool,
        ask_cast: impl Fn(&Ray2d) -> bool,
        ask_point: impl Fn(Vec2) -> usize,
    ) {
        let start = Instant::now();
        let ask: &dyn Fn(&Ray2d) -> bool = if self.casts { &ask_cast } else { &ask_ray };
        let hits = self.rays.iter().filter(|ray| ask(ray)).count()
            + self
                .points
                .iter()
                .map(|&point| ask_point(point))
                .sum::<usize>();
        self.times.push(start.elapsed());
        self.hits += hits;
    }
}

fn query_ours(query: SpatialQuery, mut queries: ResMut<Queries>) {
    let circle = Collider::circle(CAST_RADIUS);
    queries.run(
        |ray| query.cast_ray(*ray, RAY_LENGTH, &default()).is_some(),
        |ray| {
            let pose = Pose2d::from_translation(ray.origin);
            (query.cast_shape(&circle, &pose, ray.direction, RAY_LENGTH, &default())).is_some()
        },
        |point| query.point_intersections(point, &default()).len(),
    );
}

fn query_avian(query: avian::SpatialQuery, mut queries: ResMut<Queries>) {
    let filter = avian::SpatialQueryFilter::default();
    let (circle, config) = (
        avian::Collider::circle(CAST_RADIUS),
        avian::ShapeCastConfig::from_max_distance(RAY_LENGTH),
    );
    queries.run(
        |ray| {
            query
                .cast_ray(ray.origin, ray.direction, RAY_LENGTH, true, &filter)
                .is_some()
        },
        |ray| {
            (query.cast_shape(&circle, ray.origin, 0.0, ray.direction, &config, &filter)).is_some()
        },
        |point| query.point_intersections(point, &filter).len(),
    );
}

fn query_rapier(context: rapier::ReadRapierContext, mut queries: ResMut<Queries>) {
    let Ok(context) = context.single() else {
        return;
    };
    // One query pipeline for the whole batch, built once rather than for each query.
    let circle = rapier::Collider::ball(CAST_RADIUS);
    let options = rapier::ShapeCastOptions::with_max_time_of_impact(RAY_LENGTH);
    context.with_query_pipeline(rapier::QueryFilter::default(), |pipeline| {
        queries.run(
            |ray| {
                pipeline
                    .cast_ray(ray.origin, *ray.direction, RAY_LENGTH, true)
                    .is_some()
            },
            |ray| {
                let velocity = *ray.direction;
                (pipeline.cast_shape(ray.origin, 0.0, velocity, &*circle.raw, options)).is_some()
            },
            |point| pipeline.intersect_point(point).count(),
        );
    });
}

/// The characters of `--move-and-slide`, the move each is asked for every frame, and what the
/// moves took and came to.
#[derive(Resource, Clone, Default)]
struct Characters {
    entities: Vec<Entity>,
    motions: Vec<Vec2>,
    times: Vec<Duration>,
    /// The summed length of the moves made, over every frame.
    moved: f64,
}

/// How far each character of `--move-and-slide` is asked to move.
const CHARACTER_MOVE: f32 = 2.0;
/// The side of the characters' boxes.
const CHARACTER_SIDE: f32 = 0.8;

impl Characters {
    /// Times `slide` over every character and its motion; it returns the move made.
    fn run(&mut self, mut slide: impl FnMut(Entity, Vec2) -> Vec2) {
        let start = Instant::now();
        let moved: f32 = (self.entities.iter().zip(&self.motions))
            .map(|(&entity, &motion)| slide(entity, motion).length())
            .sum();
        self.times.push(start.elapsed());
        self.moved += f64::from(moved);
    }
}

fn slide_ours(query: SpatialQuery, mut characters: ResMut<Characters>) {
    let config = MoveAndSlideConfig::default();
    characters.run(|entity, motion| {
        (query.move_and_slide(entity, motion, &config)).map_or(Vec2::ZERO, |moved| moved.motion)
    });
}

fn slide_avian(
    move_and_slide: avian::MoveAndSlide,
    bodies: Query<(&avian::Collider, &avian::Position, &avian::Rotation)>,
    mut characters: ResMut<Characters>,
) {
    let config = avian::MoveAndSlideConfig::default();
    characters.run(|entity, motion| {
        let Ok((collider, position, rotation)) = bodies.get(entity) else {
            return Vec2::ZERO;
        };
        let filter = avian::SpatialQueryFilter::from_excluded_entities([entity]);
        let out = move_and_slide.move_and_slide(
            collider,
            position.0,
            rotation.as_radians(),
            motion,
            Duration::from_secs(1),
            &config,
            &filter,
            |_| avian::MoveAndSlideHitResponse::Accept,
        );
        out.position - position.0
    });
}

/// Spawns the characters of `--move-and-slide` for `engine`, at the rays' origins.
fn spawn_characters(world: &mut World, engine: Engine, side: f32) -> Characters {
    let (rays, _) = query_rays_and_points(side);
    let mut characters = Characters::default();
    for ray in rays {
        let transform = Transform::from_translation(ray.origin.extend(0.0));
        let entity = match engine {
            Engine::Ours => world
                .spawn((transform, Collider::rect(CHARACTER_SIDE, CHARACTER_SIDE)))
                .id(),
            Engine::Avian => world
                .spawn((
                    transform,
                    avian::Collider::rectangle(CHARACTER_SIDE, CHARACTER_SIDE),
                    avian::RigidBody::Kinematic,
                ))
                .id(),
            Engine::Baseline | Engine::Twin | Engine::Rapier => continue,
        };
        characters.entities.push(entity);
        characters.motions.push(*ray.direction * CHARACTER_MOVE);
    }
    characters
}

/// What every app of a run is given: the world, the colliders spawned at the start, the bullets fired
/// each frame, whether queries are asked, and the compute threads.
struct Setup {
    side: f32,
    spawns: Vec<Spawn>,
    bullets_per_frame: usize,
    queries: bool,
    /// Whether the queries are shape casts (`--casts`).
    casts: bool,
    /// Whether characters are moved with move-and-slide (`--move-and-slide`).
    move_and_slide: bool,
    /// A tile map under the colliders, covering the world (`--tilemap M`).
    tilemap: Option<TilemapCollider>,
    compute_threads: Option<usize>,
}

/// Spawns `map` over the world of side `side` for `engine`: one `TilemapCollider` for ours; for the
/// peers, as their users would, a fixed body for each solid tile.
fn spawn_tilemap(world: &mut World, engine: Engine, map: &TilemapCollider, side: f32) {
    let corner = Vec2::splat(-0.5 * side);
    if engine == Engine::Ours {
        world.spawn((map.clone(), Transform::from_translation(corner.extend(0.0))));
        return;
    }
    let size = map.size();
    let tile = ColliderShape::Rect {
        half_size: 0.5 * map.tile_size(),
    };
    for y in 0..size.y {
        for x in 0..size.x {
            let cell = UVec2::new(x, y);
            if map.get(cell) == 0 {
                continue;
            }
            let at = corner + map.cell_rect(cell).center();
            let still = Spawn {
                shape: tile,
                position: at,
                rotation: 0.0,
                velocity: None,
            };
            spawn_still(
                world,
                engine,
                &still,
                Transform::from_translation(at.extend(0.0)),
            );
        }
    }
}

/// A headless app running `engine` on the spawned colliders.
fn app(engine: Engine, setup: &Setup) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins.set(task_pool_plugin(setup.compute_threads)),
        TransformPlugin,
    ))
    .insert_resource(WorldSide(setup.side))
    .init_resource::<Starts>()
    .add_systems(Update, move_colliders);
    if setup.bullets_per_frame > 0 {
        app.insert_resource(Firing {
            engine,
            rng: SeededRng::new(0x0b01_1e75),
            side: setup.side,
            per_frame: setup.bullets_per_frame,
            in_flight: VecDeque::new(),
            frame: 0,
        })
        .add_systems(Update, fire_bullets.before(move_colliders));
    }
    if setup.queries {
        app.insert_resource(Queries::new(setup.side, setup.casts));
        match engine {
            Engine::Baseline | Engine::Twin => {}
            Engine::Ours => {
                app.add_systems(Last, query_ours);
            }
            Engine::Avian => {
                app.add_systems(Last, query_avian);
            }
            Engine::Rapier => {
                app.add_systems(Last, query_rapier);
            }
        }
    }
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
    for one in &setup.spawns {
        spawn(app.world_mut(), engine, one);
    }
    if let Some(map) = &setup.tilemap
        && !matches!(engine, Engine::Baseline | Engine::Twin)
    {
        spawn_tilemap(app.world_mut(), engine, map, setup.side);
    }
    if setup.move_and_slide {
        let characters = spawn_characters(app.world_mut(), engine, setup.side);
        app.insert_resource(characters);
        match engine {
            Engine::Ours => {
                app.add_systems(Last, slide_ours);
            }
            Engine::Avian => {
                app.add_systems(Last, slide_avian);
            }
            Engine::Baseline | Engine::Twin | Engine::Rapier => {}
        }
    }
    app
}

struct Run {
    engine: Engine,
    median: f64,
    p99: f64,
    starts: usize,
    /// With `--queries`, the median time of the query system and the hits it found per frame.
    queries: Option<(f64, f64)>,
    /// With `--move-and-slide`, the median time of the moves and their mean length.
    slides: Option<(f64, f64)>,
}

/// Runs every engine's app for `frames` timed frames after its warm-up. The apps take turns of
/// [`FRAMES_PER_TURN`] timed frames after one untimed, so that the machine's slower stretches, which
/// here last seconds, fall on all of them alike rather than on whichever ran then.
///
/// Each round of turns shuffles the apps' order: an app's frames depend on its place in the round and
/// on the app before it, which a fixed order would turn into a bias on every engine's added time
/// (`--twin` shows it: a second app with no engine, placed always second, comes out slower than the
/// first).
fn run_all(engines: &[Engine], setup: &Setup, frames: usize) -> Vec<Run> {
    let mut apps: Vec<(Engine, App, Vec<Duration>)> = engines
        .iter()
        .map(|&engine| {
            let mut app = app(engine, setup);
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
        .map(|(engine, mut app, mut samples)| {
            let (median, p99) = median_p99(&mut samples);
            let queries = app
                .world_mut()
                .remove_resource::<Queries>()
                .filter(|queries| !queries.times.is_empty())
                .map(|mut queries| {
                    let asked = queries.times.len();
                    (
                        median_p99(&mut queries.times).0,
                        queries.hits as f64 / asked as f64,
                    )
                });
            let slides = app
                .world_mut()
                .remove_resource::<Characters>()
                .filter(|characters| !characters.times.is_empty())
                .map(|mut characters| {
                    let moves = characters.times.len() * characters.entities.len();
                    (
                        median_p99(&mut characters.times).0,
                        characters.moved / moves as f64,
                    )
                });
            Run {
                engine,
                median,
                p99,
                starts: app.world().resource::<Starts>().0,
                queries,
                slides,
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
    let workload = flag_value(&args, "--workload").and_then(|name| {
        Some(match name {
            "w1" => return None,
            "level" => GameWorkload::Level,
            "clustered" => GameWorkload::Clustered,
            "bullets" => GameWorkload::Bullets,
            "sizes" => GameWorkload::Sizes,
            _ => {
                eprintln!(
                    "peers: --workload {name}: one of w1, level, clustered, bullets and sizes"
                );
                std::process::exit(2);
            }
        })
    });
    let move_and_slide = args.iter().any(|arg| arg == "--move-and-slide");
    let tilemap_side =
        (args.iter().any(|arg| arg == "--tilemap")).then(|| count("--tilemap", 200, 1));
    let mut rng = SeededRng::new(0x5eed_0000 + n as u64);
    let (side, mut spawns): (f32, Vec<Spawn>) = match workload {
        None => {
            let side = 4.0 * (n as f32).sqrt();
            let spawns = (0..n)
                .map(|i| Spawn::generate_in(kinds, &mut rng, i, side, true))
                .collect();
            (side, spawns)
        }
        Some(game) => {
            let side = game.side(n);
            let centres = GameWorkload::cluster_centres(&mut rng, side);
            let spawns = (0..game.spawned(n))
                .map(|i| game.spawn(&mut rng, i, n, side, &centres))
                .collect();
            (side, spawns)
        }
    };
    if move_and_slide {
        for one in &mut spawns {
            one.velocity = None;
        }
    }
    let setup = Setup {
        side,
        spawns,
        bullets_per_frame: if workload == Some(GameWorkload::Bullets) {
            (n / 120).max(1)
        } else {
            0
        },
        queries: args
            .iter()
            .any(|arg| arg == "--queries" || arg == "--casts"),
        casts: args.iter().any(|arg| arg == "--casts"),
        move_and_slide,
        tilemap: tilemap_side.map(|cells| {
            let cells = u32::try_from(cells).unwrap_or(u32::MAX);
            blob_map(&mut rng, cells, side / cells as f32)
        }),
        compute_threads,
    };

    let threads = compute_threads.map_or("Bevy's default".to_string(), |t| t.to_string());
    let mut name = match workload {
        None if move_and_slide => "w1 held still, with characters".to_string(),
        None => "w1 uniform moving".to_string(),
        Some(game) => format!("{game:?}"),
    };
    if let Some(cells) = tilemap_side {
        name += &format!(" over a tile map of {cells} x {cells} cells");
    }
    println!(
        "{name} n={n} frames={frames} (+{WARMUP_FRAMES} warm-up), whole app.update() per frame, \
         compute threads: {threads}, kinds: {kinds:?}"
    );
    let mut engines = Engine::ALL.to_vec();
    if args.iter().any(|arg| arg == "--twin") {
        engines.push(Engine::Twin);
    }
    let runs = run_all(&engines, &setup, frames);
    for run in &runs {
        println!(
            "  {:<20} median {:9.3} ms   p99 {:9.3} ms   collisions started {}",
            run.engine.name(),
            run.median,
            run.p99,
            run.starts
        );
        if let Some((median, mean)) = run.slides {
            println!(
                "  {:<20} {QUERIES} characters moved {CHARACTER_MOVE} with move-and-slide: median \
                 {:.3} ms ({:.2} µs a character), moves {mean:.3} long on average",
                "",
                median,
                median * 1e3 / QUERIES as f64
            );
        }
        if let Some((median, hits)) = run.queries
            && setup.casts
        {
            println!(
                "  {:<20} {QUERIES} circles of radius {CAST_RADIUS} cast {RAY_LENGTH} far: median \
                 {:.3} ms ({:.2} µs a cast), {hits:.0} hits a frame",
                "",
                median,
                median * 1e3 / QUERIES as f64
            );
        } else if let Some((median, hits)) = run.queries {
            println!(
                "  {:<20} {QUERIES} rays of length {RAY_LENGTH} and {QUERIES} points: median {:.3} ms \
                 ({:.2} µs a query), {hits:.0} hits a frame",
                "",
                median,
                median * 1e3 / (2 * QUERIES) as f64
            );
        }
    }
    let run_of = |engine: Engine| runs.iter().find(|run| run.engine == engine);
    let baseline = run_of(Engine::Baseline).expect("always run").median;
    // What the engine adds to a frame over moving the colliders alone.
    let added = |run: &Run| run.median - baseline;
    // How many times ours a peer's added time is; in a short run ours can fall within the noise.
    let times_ours = |peer: &Run| {
        let ours = added(run_of(Engine::Ours).expect("always run"));
        if ours > 0.0 {
            format!("{:.1}x ours", added(peer) / ours)
        } else {
            "ours is within the noise".to_string()
        }
    };
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
            "  {} adds {:.3} ms: {} ({:.1}x on whole frames); its starts differ from ours by \
             {disagreement:+.2}%",
            peer.engine.name(),
            added(peer),
            times_ours(peer),
            peer.median / ours.median
        );
    }
    let faster_peer = peers
        .iter()
        .min_by(|a, b| a.median.total_cmp(&b.median))
        .expect("two peers");
    println!(
        "  against the faster peer: {} on the time collision detection adds, {:.1}x on whole frames",
        times_ours(faster_peer),
        faster_peer.median / ours.median
    );
    if !agree && !setup.move_and_slide && setup.tilemap.is_none() {
        eprintln!(
            "the engines disagree by more than {MAX_DISAGREEMENT_PERCENT}% on the collisions started: \
             they are not measuring the same contacts"
        );
        std::process::exit(1);
    }
}
