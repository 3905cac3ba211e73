//! The test app and its event log, shared by the ECS tests.
#![allow(dead_code, reason = "each test file uses a different part")]

use bevy::ecs::entity::EntityHashSet;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy_rect_collision::geometry::OverlapMode;
use bevy_rect_collision::internals;
use bevy_rect_collision::prelude::*;

#[path = "../../src/test_rng.rs"]
mod test_rng;
pub use test_rng::TestRng as Rng;

/// Inserted into a collider's entity, it moves the entity to another of Bevy's tables, which changes
/// the order in which the colliders are read.
#[derive(Component)]
pub struct Tagged;

/// Every collision event since the app was built.
#[derive(Resource, Default, Debug)]
pub struct EventLog {
    /// The messages, as `MessageReader`s see them.
    pub started: Vec<CollisionStarted>,
    pub ended: Vec<CollisionEnded>,
    /// Starts and ends in the order they happened, from a global observer: `(update, started?, pair)`.
    /// Messages of two types cannot tell which came first when a pair starts and ends in one frame.
    pub stream: Vec<(u32, bool, Entity, Entity)>,
    pub updates: u32,
    /// The starts that named, at the moment they reached the global observer, an entity that was
    /// despawned or had no `Collider`.
    pub starts_of_gone_colliders: Vec<(Entity, Entity)>,
}

impl EventLog {
    /// How many messages of each kind mention `entity`.
    pub fn counts_for(&self, entity: Entity) -> (usize, usize) {
        let started = self
            .started
            .iter()
            .filter(|e| e.collider1 == entity || e.collider2 == entity)
            .count();
        let ended = self
            .ended
            .iter()
            .filter(|e| e.collider1 == entity || e.collider2 == entity)
            .count();
        (started, ended)
    }
}

fn record_messages(
    mut started: MessageReader<CollisionStarted>,
    mut ended: MessageReader<CollisionEnded>,
    mut log: ResMut<EventLog>,
) {
    log.ended.extend(ended.read().copied());
    log.started.extend(started.read().copied());
}

fn count_update(mut log: ResMut<EventLog>) {
    log.updates += 1;
}

/// Each pair is triggered on both entities; the one with `collider1 < collider2` is logged.
fn record_started(
    event: On<CollisionStarted>,
    colliders: Query<(), With<Collider>>,
    mut log: ResMut<EventLog>,
) {
    if !colliders.contains(event.collider1) || !colliders.contains(event.collider2) {
        log.starts_of_gone_colliders
            .push((event.collider1, event.collider2));
    }
    if event.collider1 < event.collider2 {
        let update = log.updates;
        log.stream
            .push((update, true, event.collider1, event.collider2));
    }
}

fn record_ended(event: On<CollisionEnded>, mut log: ResMut<EventLog>) {
    if event.collider1 < event.collider2 {
        let update = log.updates;
        log.stream
            .push((update, false, event.collider1, event.collider2));
    }
}

/// `MinimalPlugins`, `TransformPlugin`, the plugin, and a system recording every message after the
/// collision update.
pub fn app() -> App {
    app_with(MinimalPlugins.build())
}

/// [`app`] with Bevy's compute task pool given `threads` threads. The pool is global to the process:
/// a test file using this must build every app the same way.
pub fn app_with_compute_threads(threads: usize) -> App {
    let mut task_pool_options = TaskPoolOptions::default();
    task_pool_options.compute.min_threads = threads;
    task_pool_options.compute.max_threads = threads;
    app_with(MinimalPlugins.set(TaskPoolPlugin { task_pool_options }))
}

/// [`app`] with `plugin`, for example one with hooks.
pub fn app_with_plugin(plugin: RectCollisionPlugin) -> App {
    app_with_both(MinimalPlugins.build(), plugin)
}

fn app_with(minimal_plugins: bevy::app::PluginGroupBuilder) -> App {
    app_with_both(minimal_plugins, RectCollisionPlugin::default())
}

fn app_with_both(
    minimal_plugins: bevy::app::PluginGroupBuilder,
    plugin: RectCollisionPlugin,
) -> App {
    let mut app = App::new();
    app.add_plugins((minimal_plugins, TransformPlugin, plugin))
        .init_resource::<EventLog>()
        .add_observer(record_started)
        .add_observer(record_ended)
        .add_systems(First, count_update)
        .add_systems(Last, record_messages);
    app
}

pub fn log(app: &App) -> &EventLog {
    app.world().resource::<EventLog>()
}

pub fn touching(app: &mut App, entity: Entity) -> EntityHashSet {
    app.world()
        .get::<CollidingEntities>(entity)
        .map(|c| c.iter().collect())
        .unwrap_or_default()
}

pub fn at(x: f32, y: f32) -> Transform {
    Transform::from_xyz(x, y, 0.0)
}

/// Every touching pair according to the geometry functions alone, over the current world shapes of
/// enabled colliders, with layers applied and no pair of two regions of one tile map: the brute-force
/// reference.
pub fn brute_force_pairs(app: &mut App) -> Vec<(Entity, Entity)> {
    let mut query = app
        .world_mut()
        .query_filtered::<BruteForceRow, (With<Collider>, Without<ColliderDisabled>)>();
    touching_pairs(query.iter(app.world()))
}

/// What brute force reads of a collider: its shape, its layers, and its tile map where it is one of a
/// map's regions.
type BruteForceRow = (
    Entity,
    &'static ColliderWorldShape,
    &'static CollisionLayers,
    Option<&'static TileRegionOf>,
);

/// The pairs of `colliders` whose layers match, which are not regions of one tile map, and whose
/// shapes touch, each `(lower, higher)`, sorted.
fn touching_pairs<'a>(
    colliders: impl Iterator<
        Item = (
            Entity,
            &'a ColliderWorldShape,
            &'a CollisionLayers,
            Option<&'a TileRegionOf>,
        ),
    >,
) -> Vec<(Entity, Entity)> {
    let shapes: Vec<_> = colliders
        .filter_map(|(e, s, l, map)| s.0.map(|s| (e, s, *l, map.map(|map| map.0))))
        .collect();
    let mut pairs = Vec::new();
    for (i, (a, shape_a, layers_a, map_a)) in shapes.iter().enumerate() {
        for (b, shape_b, layers_b, map_b) in &shapes[i + 1..] {
            let one_map = map_a.is_some() && map_a == map_b;
            if layers_a.interacts_with(layers_b)
                && !one_map
                && shape_a.intersects(shape_b, OverlapMode::Closed)
            {
                pairs.push((*a.min(b), *a.max(b)));
            }
        }
    }
    pairs.sort();
    pairs
}

/// Brute force's pairs as the narrow phase saw the world, taken by a system between it and the events
/// stage ([`record_pairs_at_narrow_phase`]). Observers that disable or re-layer a collider change the
/// world after that; the pipeline sees it on the next update.
#[derive(Resource, Default)]
pub struct PairsAtNarrowPhase(pub Vec<(Entity, Entity)>);

/// Makes the app keep [`PairsAtNarrowPhase`] each update.
pub fn record_pairs_at_narrow_phase(app: &mut App) {
    fn take(
        colliders: Query<BruteForceRow, (With<Collider>, Without<ColliderDisabled>)>,
        mut pairs: ResMut<PairsAtNarrowPhase>,
    ) {
        pairs.0 = touching_pairs(colliders.iter());
    }
    app.init_resource::<PairsAtNarrowPhase>().add_systems(
        PostUpdate,
        take.after(CollisionSystems::NarrowPhase)
            .before(CollisionSystems::Events),
    );
}

/// What `CollidingEntities` must hold after an update whose observers may have changed the world:
/// brute force's pairs as the narrow phase saw them, less those of colliders despawned or without a
/// `Collider` since (their pairs end at once).
pub fn expected_after_observers(app: &App) -> Vec<(Entity, Entity)> {
    let world = app.world();
    let has_collider = |e: Entity| world.get::<Collider>(e).is_some();
    world
        .resource::<PairsAtNarrowPhase>()
        .0
        .iter()
        .copied()
        .filter(|&(a, b)| has_collider(a) && has_collider(b))
        .collect()
}

/// The pairs left open by replaying every start and end since the start; fails if a pair started twice
/// or ended without starting.
pub fn replayed_pairs(app: &App) -> Vec<(Entity, Entity)> {
    let mut open: HashMap<(Entity, Entity), i32> = HashMap::default();
    for &(_, started, a, b) in &log(app).stream {
        *open.entry((a, b)).or_default() += if started { 1 } else { -1 };
    }
    assert!(
        open.values().all(|&n| n == 0 || n == 1),
        "a pair started twice or ended without starting"
    );
    let mut pairs: Vec<_> = open
        .into_iter()
        .filter(|&(_, n)| n == 1)
        .map(|((a, b), _)| (a.min(b), a.max(b)))
        .collect();
    pairs.sort();
    pairs
}

/// Fails, naming `context`, unless the observers' story is sound: each pair's starts and ends alternate,
/// beginning with a start, over the whole stream in the order the global observer saw them; no start
/// named a collider that was gone when it was dispatched; and the messages hold the same starts and
/// ends as the observers saw (the messages of the last update may still be unread).
pub fn assert_events_alternate(app: &App, context: &str) {
    let log = log(app);
    assert_eq!(
        log.starts_of_gone_colliders,
        [],
        "{context}: starts dispatched naming a despawned entity or one without a Collider"
    );
    let mut open: HashMap<(Entity, Entity), bool> = HashMap::default();
    for &(update, started, a, b) in &log.stream {
        let was_open = open.insert((a, b), started).unwrap_or(false);
        assert_ne!(
            was_open,
            started,
            "{context}: the pair {a}–{b} got a {} while {} (update {update})",
            if started { "start" } else { "end" },
            if was_open { "open" } else { "closed" }
        );
    }
    let count = |started: bool| -> HashMap<(Entity, Entity), usize> {
        let mut counts = HashMap::default();
        for &(_, s, a, b) in &log.stream {
            if s == started {
                *counts.entry((a, b)).or_default() += 1;
            }
        }
        counts
    };
    let (observed_starts, observed_ends) = (count(true), count(false));
    let mut read_starts: HashMap<(Entity, Entity), usize> = HashMap::default();
    for start in &log.started {
        *read_starts
            .entry((start.collider1, start.collider2))
            .or_default() += 1;
    }
    let mut read_ends: HashMap<(Entity, Entity), usize> = HashMap::default();
    for end in &log.ended {
        *read_ends.entry((end.collider1, end.collider2)).or_default() += 1;
    }
    assert_eq!(
        read_starts, observed_starts,
        "{context}: the starts read as messages against those observed"
    );
    assert_eq!(
        read_ends, observed_ends,
        "{context}: the ends read as messages against those observed"
    );
}

/// The entities a collider touches as its own observers tell it: a game's usual bookkeeping, kept by
/// [`observe_own_set`]'s observers.
#[derive(Component, Default, Debug)]
pub struct ObservedSet(pub EntityHashSet);

/// Gives `entity` an [`ObservedSet`] and the two entity observers that keep it: insert on
/// `CollisionStarted`, remove on `CollisionEnded`.
pub fn observe_own_set(entity: &mut EntityWorldMut) {
    entity
        .insert(ObservedSet::default())
        .observe(
            |hit: On<CollisionStarted>, mut sets: Query<&mut ObservedSet>| {
                if let Ok(mut set) = sets.get_mut(hit.collider1) {
                    set.0.insert(hit.collider2);
                }
            },
        )
        .observe(
            |hit: On<CollisionEnded>, mut sets: Query<&mut ObservedSet>| {
                if let Ok(mut set) = sets.get_mut(hit.collider1) {
                    set.0.remove(&hit.collider2);
                }
            },
        );
}

/// What a collider does to the other collider of a pair, from an observer, as games do: despawn it,
/// take its `Collider`, disable it, or take it out of every layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reaction {
    Despawn,
    RemoveCollider,
    Disable,
    LayersNone,
}

/// Makes its collider react to the other collider of each pair that starts touching it.
#[derive(Component, Clone, Copy, Debug)]
pub struct OnStart(pub Reaction);

/// Makes its collider react to the other collider of each pair that stops touching it.
#[derive(Component, Clone, Copy, Debug)]
pub struct OnEnd(pub Reaction);

impl Reaction {
    /// Queues the reaction on `other`; an entity already gone is passed over, as in a game that
    /// despawns from an end observer (the other may be the collider whose despawn ended the pair).
    pub fn apply(self, commands: &mut Commands, other: Entity) {
        let mut other = commands.entity(other);
        match self {
            Reaction::Despawn => {
                other.try_despawn();
            }
            Reaction::RemoveCollider => {
                other.try_remove::<Collider>();
            }
            Reaction::Disable => {
                other.try_insert(ColliderDisabled);
            }
            Reaction::LayersNone => {
                other.try_insert(CollisionLayers::NONE);
            }
        }
    }
}

/// Adds the global observers that carry out [`OnStart`] and [`OnEnd`].
pub fn add_reactions(app: &mut App) {
    app.add_observer(
        |hit: On<CollisionStarted>, reactions: Query<&OnStart>, mut commands: Commands| {
            if let Ok(OnStart(reaction)) = reactions.get(hit.collider1) {
                reaction.apply(&mut commands, hit.collider2);
            }
        },
    )
    .add_observer(
        |hit: On<CollisionEnded>, reactions: Query<&OnEnd>, mut commands: Commands| {
            if let Ok(OnEnd(reaction)) = reactions.get(hit.collider1) {
                reaction.apply(&mut commands, hit.collider2);
            }
        },
    );
}

/// Fails, naming `context`, where an entity's [`ObservedSet`] differs from its `CollidingEntities`.
pub fn assert_observed_sets_match(app: &mut App, context: &str) {
    let mut query = app
        .world_mut()
        .query::<(Entity, &ObservedSet, Option<&CollidingEntities>)>();
    for (entity, observed, colliding) in query.iter(app.world()) {
        let colliding: EntityHashSet = colliding.map(|c| c.iter().collect()).unwrap_or_default();
        assert_eq!(
            observed.0, colliding,
            "{context}: what {entity}'s observers kept against its CollidingEntities"
        );
    }
}

/// Fails, naming `context`, when some entity's `CollidingEntities` holds another entity whose own set
/// does not hold it back.
pub fn assert_colliding_is_symmetric(app: &mut App, context: &str) {
    let mut query = app.world_mut().query::<(Entity, &CollidingEntities)>();
    let touching: HashMap<Entity, EntityHashSet> = query
        .iter(app.world())
        .map(|(e, c)| (e, c.iter().collect()))
        .collect();
    for (entity, others) in &touching {
        for other in others {
            assert!(
                touching
                    .get(other)
                    .is_some_and(|back| back.contains(entity)),
                "{context}: {entity} touches {other} but not the other way round"
            );
        }
    }
}

/// Brute force's touching pairs, after checking that `CollidingEntities` and the replayed event stream
/// both give exactly them; `context` names the failure.
pub fn assert_matches_brute_force(app: &mut App, context: &str) -> Vec<(Entity, Entity)> {
    assert_broad_phase_holds_the_colliders(app, context);
    let expected = brute_force_pairs(app);
    assert_eq!(
        colliding_pairs(app),
        expected,
        "{context}: CollidingEntities against brute force"
    );
    assert_eq!(
        replayed_pairs(app),
        expected,
        "{context}: the event stream against brute force"
    );
    assert_eq!(
        contacts_pairs(app),
        expected,
        "{context}: the Contacts resource against brute force"
    );
    assert_contacts_are_current(app, context);
    expected
}

/// Fails, naming `context`, unless every contact in [`Contacts`] (but those found on the way of a
/// sweep) is the one the shapes give now.
pub fn assert_contacts_are_current(app: &mut App, context: &str) {
    let mut state = app.world_mut().query::<&ColliderWorldShape>();
    let shapes = state.query(app.world());
    let contacts = app.world().resource::<Contacts>();
    let shape = |entity| shapes.get(entity).ok().and_then(|shape| shape.0);
    for pair in contacts.iter().filter(|pair| pair.time_of_impact.is_none()) {
        let (a, b) = (shape(pair.collider1), shape(pair.collider2));
        let now = a
            .zip(b)
            .and_then(|(a, b)| a.contact(&b, OverlapMode::Closed));
        assert_eq!(
            Some(pair.contact),
            now,
            "{context}: the contact of {}-{} is the shapes' now",
            pair.collider1,
            pair.collider2
        );
    }
}

/// Checks the broad phase's invariants ([`internals::validate_broad_phase`]), and that every enabled collider
/// with a valid shape has a proxy, its shape's box inside the proxy's fat AABB. A proxy may outlive
/// its collider by one update where a system took the collider out after the broad phase ran.
pub fn assert_broad_phase_holds_the_colliders(app: &mut App, context: &str) {
    let mut shapes = app
        .world_mut()
        .query_filtered::<(Entity, &ColliderWorldShape), (With<Collider>, Without<ColliderDisabled>)>();
    let mut expected: Vec<(Entity, bevy::math::bounding::Aabb2d)> = shapes
        .iter(app.world())
        .filter_map(|(entity, shape)| shape.aabb().map(|aabb| (entity, aabb)))
        .collect();
    expected.sort_unstable_by_key(|&(entity, _)| entity);
    internals::validate_broad_phase(app.world());
    let proxies: HashMap<Entity, bevy::math::bounding::Aabb2d> =
        internals::fat_aabbs(app.world()).into_iter().collect();
    for (entity, aabb) in &expected {
        let fat = proxies
            .get(entity)
            .unwrap_or_else(|| panic!("{context}: {entity}, enabled and valid, has a proxy"));
        assert!(
            fat.min.cmple(aabb.min).all() && fat.max.cmpge(aabb.max).all(),
            "{context}: {entity}'s box {aabb:?} lies in its fat AABB {fat:?}"
        );
    }
}

/// Every pair the [`Contacts`] resource lists, after checking that it lists them sorted, counts them
/// right, and finds each with `get` and `contains`, either way round.
pub fn contacts_pairs(app: &App) -> Vec<(Entity, Entity)> {
    let contacts = app.world().resource::<Contacts>();
    let mut pairs: Vec<_> = contacts
        .iter()
        .map(|pair| (pair.collider1, pair.collider2))
        .collect();
    pairs.sort_unstable();
    assert!(
        pairs.iter().all(|(a, b)| a < b) && pairs.windows(2).all(|w| w[0] != w[1]),
        "Contacts::iter lists each pair once, the lower entity first"
    );
    assert_eq!(
        contacts.len(),
        pairs.len(),
        "Contacts::len counts the listed pairs"
    );
    for pair in contacts.iter() {
        let (a, b) = (pair.collider1, pair.collider2);
        assert_eq!(contacts.get(a, b), Some(pair.contact), "{a}-{b} found");
        assert!(contacts.contains(b, a), "{b}-{a} found the other way round");
    }
    pairs
}

/// Every pair the plugin reports touching through `CollidingEntities`, each once.
pub fn colliding_pairs(app: &mut App) -> Vec<(Entity, Entity)> {
    let mut query = app.world_mut().query::<(Entity, &CollidingEntities)>();
    let mut pairs: Vec<_> = query
        .iter(app.world())
        .flat_map(|(e, touching)| touching.iter().map(move |o| (e.min(o), e.max(o))))
        .collect();
    pairs.sort();
    pairs.dedup();
    pairs
}

/// A collider's speed, for the test files' systems that move colliders.
#[derive(Component)]
pub struct Velocity(pub Vec2);

/// Every pair of active colliders whose shapes intersect, found by a sweep along x over their boxes
/// (grown by a margin, so that the sweep drops no pair the exact test accepts) and the exact test:
/// brute force's answer, in the time a world of tens of thousands of colliders allows.
pub fn swept_pairs(app: &mut App) -> Vec<(Entity, Entity)> {
    let mut query = app
        .world_mut()
        .query_filtered::<(Entity, &ColliderWorldShape), (With<Collider>, Without<ColliderDisabled>)>();
    let mut shapes: Vec<_> = query
        .iter(app.world())
        .filter_map(|(entity, shape)| shape.0.map(|shape| (entity, shape, shape.aabb())))
        .collect();
    shapes.sort_by(|a, b| a.2.min.x.total_cmp(&b.2.min.x));
    let margin = 1e-3;
    let mut pairs = Vec::new();
    for (i, (a, shape_a, box_a)) in shapes.iter().enumerate() {
        for (b, shape_b, box_b) in &shapes[i + 1..] {
            if box_b.min.x > box_a.max.x + margin {
                break;
            }
            let apart_in_y =
                box_b.min.y > box_a.max.y + margin || box_a.min.y > box_b.max.y + margin;
            if !apart_in_y && shape_a.intersects(shape_b, OverlapMode::Closed) {
                pairs.push((*a.min(b), *a.max(b)));
            }
        }
    }
    pairs.sort();
    pairs
}

/// Asserts that `CollidingEntities` and the event stream both give `expected`, the sweep's pairs.
pub fn assert_matches(app: &mut App, expected: &[(Entity, Entity)], frame: usize) {
    assert_eq!(
        colliding_pairs(app),
        expected,
        "frame {frame}: CollidingEntities against the sweep"
    );
    assert_eq!(
        replayed_pairs(app),
        expected,
        "frame {frame}: the event stream against the sweep"
    );
}

/// Spawns `count` moving and turning colliders, a third of each kind, in a square of side `side`, of
/// sides (or diameters) in `sizes`.
pub fn spawn_movers(
    app: &mut App,
    mut rng: Rng,
    count: usize,
    side: f32,
    sizes: core::ops::Range<f32>,
) -> Vec<Entity> {
    (0..count)
        .map(|i| {
            let position = Vec2::new(rng.range(-side, side), rng.range(-side, side)) * 0.5;
            let (w, h) = (
                rng.range(sizes.start, sizes.end),
                rng.range(sizes.start, sizes.end),
            );
            let collider = match i % 5 {
                0 => Collider::rect(w, h),
                1 => Collider::rotated_rect(w, h),
                2 => Collider::circle(w * 0.5),
                3 => Collider::capsule(w * 0.25, h * 0.5),
                _ => quadrilateral(w, h),
            };
            let velocity = Velocity(Vec2::new(rng.range(-0.3, 0.3), rng.range(-0.3, 0.3)));
            let transform = Transform::from_translation(position.extend(0.0))
                .with_rotation(Quat::from_rotation_z(rng.range(-3.1, 3.1)));
            app.world_mut().spawn((transform, collider, velocity)).id()
        })
        .collect()
}

/// Spawns `bundle`, a collider and what goes with it, at `transform`, and returns its entity.
pub fn spawn_at(app: &mut App, transform: Transform, bundle: impl Bundle) -> Entity {
    app.world_mut().spawn((transform, bundle)).id()
}

/// A convex quadrilateral about `w` wide and `h` high, centred near its origin: the tests' polygon.
pub fn quadrilateral(w: f32, h: f32) -> Collider {
    Collider::convex_polygon(&[
        Vec2::new(-0.5 * w, -0.5 * h),
        Vec2::new(0.5 * w, -0.5 * h),
        Vec2::new(0.2 * w, 0.5 * h),
        Vec2::new(-0.4 * w, 0.4 * h),
    ])
}
