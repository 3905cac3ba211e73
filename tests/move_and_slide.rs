//! `SpatialQuery::move_and_slide` and `CollisionHooks`, through the public API: a character in a level
//! of walls, slopes, seams and a one-way platform; random worlds against brute force; the hooks' ends.

mod common;

use core::time::Duration;
use std::sync::Mutex;

use bevy::ecs::system::{RunSystemOnce, SystemParam};
use bevy::prelude::*;
use bevy::time::{TimePlugin, TimeUpdateStrategy};
use bevy_rect_collision::geometry::{OverlapMode, WorldShape, shape_cast};
use bevy_rect_collision::prelude::*;
use common::{Rng, quadrilateral, spawn_at};

const STEP: f32 = 1.0 / 60.0;
const SKIN: f32 = 0.01;
const GRAVITY: f32 = 30.0;
const RUN: f32 = 5.0;
const JUMP: f32 = 13.0;

#[derive(Component)]
struct Player {
    velocity: Vec2,
}

/// What the game's player presses this frame.
#[derive(Resource, Default)]
struct Input {
    run: f32,
    jump: bool,
}

/// Whether one-way platforms let everything fall through them.
#[derive(Resource, Default)]
struct DropThrough(bool);

/// The last `move_and_slide` output of the player.
#[derive(Resource, Default)]
struct LastMove(Option<MoveAndSlideOutput>);

#[derive(Component)]
struct OneWay;

#[derive(Component)]
struct Wall;

/// One-way platforms: they hold what is above their top, unless `DropThrough`.
#[derive(SystemParam)]
struct OneWayPlatforms<'w, 's> {
    platforms: Query<'w, 's, (), With<OneWay>>,
    shapes: Query<'w, 's, &'static ColliderWorldShape>,
    drop_through: Res<'w, DropThrough>,
}

impl CollisionHooks for OneWayPlatforms<'_, '_> {
    fn filter_pair(&self, a: Entity, b: Entity) -> bool {
        let (platform, other) = if self.platforms.contains(a) {
            (a, b)
        } else {
            (b, a)
        };
        if !self.platforms.contains(platform) {
            return true;
        }
        if self.drop_through.0 {
            return false;
        }
        let aabb = |entity| Some(self.shapes.get(entity).ok()?.0?.aabb());
        match (aabb(platform), aabb(other)) {
            (Some(platform), Some(other)) => other.min.y >= platform.max.y - 1e-3,
            _ => true,
        }
    }
}

/// The game's character controller: run, jump from the ground, fall, and move with `move_and_slide`.
fn move_player(
    query: SpatialQuery<OneWayPlatforms>,
    input: Res<Input>,
    mut last: ResMut<LastMove>,
    player: Single<(Entity, &mut Player, &mut Transform)>,
) {
    let (entity, mut player, mut transform) = player.into_inner();
    let grounded = last.0.as_ref().is_some_and(MoveAndSlideOutput::grounded);
    player.velocity.x = input.run * RUN;
    player.velocity.y -= GRAVITY * STEP;
    if input.jump && grounded {
        player.velocity.y = JUMP;
    }
    let config = MoveAndSlideConfig::default();
    let Some(moved) = query.move_and_slide(entity, player.velocity * STEP, &config) else {
        return;
    };
    transform.translation += moved.motion.extend(0.0);
    let bumped_head = moved.hits.iter().any(|(_, hit)| hit.normal.y < -0.5);
    if (moved.grounded() && player.velocity.y < 0.0) || (bumped_head && player.velocity.y > 0.0) {
        player.velocity.y = 0.0;
    }
    last.0 = Some(moved);
}

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins.build().disable::<TimePlugin>(),
        TimePlugin,
        TransformPlugin,
        RectCollisionPlugin::default().with_hooks::<OneWayPlatforms>(),
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        STEP,
    )))
    .init_resource::<Input>()
    .init_resource::<DropThrough>()
    .init_resource::<LastMove>();
    app
}

fn wall(app: &mut App, center: Vec2, angle: f32, collider: Collider) -> Entity {
    let transform =
        Transform::from_translation(center.extend(0.0)).with_rotation(Quat::from_rotation_z(angle));
    app.world_mut().spawn((transform, collider, Wall)).id()
}

fn tile(app: &mut App, x: f32, y: f32) -> Entity {
    wall(app, Vec2::new(x, y), 0.0, Collider::rect(1.0, 1.0))
}

fn one_way(app: &mut App, center: Vec2, width: f32) -> Entity {
    let collider = Collider::rect(width, 0.2);
    let transform = Transform::from_translation(center.extend(0.0));
    (app.world_mut())
        .spawn((transform, collider, OneWay, ActiveHooks))
        .id()
}

fn spawn_player(app: &mut App, at: Vec2, collider: Collider) -> Entity {
    let player = (app.world_mut())
        .spawn((
            Transform::from_translation(at.extend(0.0)),
            collider,
            Player {
                velocity: Vec2::ZERO,
            },
        ))
        .id();
    app.add_systems(Update, move_player);
    player
}

fn position(app: &App, entity: Entity) -> Vec2 {
    let transform = app.world().get::<Transform>(entity).unwrap();
    transform.translation.truncate()
}

fn world_shape(app: &App, entity: Entity) -> WorldShape {
    app.world()
        .get::<ColliderWorldShape>(entity)
        .unwrap()
        .0
        .unwrap()
}

fn grounded(app: &App) -> bool {
    let last = app.world().resource::<LastMove>();
    last.0.as_ref().is_some_and(MoveAndSlideOutput::grounded)
}

/// The walls whose interior `shape` overlaps, one-way platforms aside.
fn walls_overlapped(app: &mut App, shape: &WorldShape) -> Vec<Entity> {
    let mut walls = app
        .world_mut()
        .query_filtered::<(Entity, &ColliderWorldShape), With<Wall>>();
    (walls.iter(app.world()))
        .filter(|(_, wall)| {
            wall.0
                .is_some_and(|wall| shape.intersects(&wall, OverlapMode::InteriorOnly))
        })
        .map(|(entity, _)| entity)
        .collect()
}

/// A walled room, 30 wide and 10 high: a floor of flush unit tiles, a 30° ramp, a 60° ramp, a
/// pillar, a ball, a floating ledge and a one-way platform.
fn level(app: &mut App) {
    for i in 0..30 {
        tile(app, i as f32 + 0.5, -0.5);
        tile(app, i as f32 + 0.5, 10.5);
    }
    for j in 0..10 {
        tile(app, -0.5, j as f32 + 0.5);
        tile(app, 30.5, j as f32 + 0.5);
    }
    let (thirty, sixty) = (30f32.to_radians(), 60f32.to_radians());
    wall(
        app,
        Vec2::new(6.0, 0.0),
        thirty,
        Collider::rotated_rect(6.0, 1.0),
    );
    wall(
        app,
        Vec2::new(12.0, 0.5),
        sixty,
        Collider::rotated_rect(4.0, 1.0),
    );
    wall(app, Vec2::new(18.5, 1.0), 0.0, Collider::rect(1.0, 2.0));
    wall(app, Vec2::new(21.0, 0.3), 0.0, Collider::circle(0.8));
    wall(app, Vec2::new(15.0, 4.0), 0.0, Collider::rect(3.0, 0.5));
    one_way(app, Vec2::new(25.0, 2.6), 4.0);
}

#[test]
fn over_ten_thousand_frames_of_random_input_the_player_never_ends_a_frame_inside_a_wall() {
    for (k, body) in [
        Collider::rect(0.8, 0.8),
        Collider::circle(0.4),
        Collider::capsule(0.4, 0.4),
    ]
    .into_iter()
    .enumerate()
    {
        let mut app = app();
        level(&mut app);
        let player = spawn_player(&mut app, Vec2::new(2.0, 1.0), body);
        let mut rng = Rng::new(0x5eed + k as u64);
        let (mut grounded_frames, mut highest) = (0, 0.0f32);
        for frame in 0..10_000 {
            if frame % 20 == 0 {
                let run = [-1.0, 0.0, 1.0][rng.below(3)];
                let jump = rng.below(3) == 0;
                *app.world_mut().resource_mut::<Input>() = Input { run, jump };
                app.world_mut().resource_mut::<DropThrough>().0 = rng.below(10) == 0;
            }
            app.update();
            let shape = world_shape(&app, player);
            let inside = walls_overlapped(&mut app, &shape);
            assert!(
                inside.is_empty(),
                "{k}, frame {frame}: the player at {} is inside {inside:?}",
                shape.center()
            );
            let aabb = shape.aabb();
            assert!(
                aabb.min.cmpge(Vec2::ZERO).all() && aabb.max.cmple(Vec2::new(30.0, 10.0)).all(),
                "{k}, frame {frame}: the player left the room: {aabb:?}"
            );
            grounded_frames += usize::from(grounded(&app));
            highest = highest.max(shape.center().y);
        }
        // The walk went somewhere: it stood most of the time and jumped onto things.
        assert!(grounded_frames > 2_000, "{k}: grounded {grounded_frames}");
        assert!(highest > 2.5, "{k}: never higher than {highest}");
    }
}

/// A room with a floor from x = 0 to 40 and one more wall.
fn room_with(extra: impl FnOnce(&mut App)) -> App {
    let mut app = app();
    for i in 0..40 {
        tile(&mut app, i as f32 + 0.5, -0.5);
    }
    extra(&mut app);
    app
}

/// Runs the app with `input` for `frames` frames, and gives each frame's player position.
fn run(app: &mut App, player: Entity, input: Input, frames: usize) -> Vec<Vec2> {
    *app.world_mut().resource_mut::<Input>() = input;
    (0..frames)
        .map(|_| {
            app.update();
            position(app, player)
        })
        .collect()
}

/// A room with a ramp 1 thick whose top face rises from (10, 0) at `degrees` for `length`; the unit
/// normal of that face; and a 0.8 × 0.8 player standing at `x`.
fn ramp_room(degrees: f32, length: f32, x: f32) -> (App, Vec2, Entity) {
    let angle = degrees.to_radians();
    let normal = Vec2::new(-angle.sin(), angle.cos());
    let center = Vec2::new(10.0, 0.0) + Vec2::from_angle(angle) * length * 0.5 - normal * 0.5;
    let mut app = room_with(|app| {
        wall(app, center, angle, Collider::rotated_rect(length, 1.0));
    });
    let player = spawn_player(&mut app, Vec2::new(x, 0.5), Collider::rect(0.8, 0.8));
    (app, normal, player)
}

#[test]
fn along_a_thirty_degree_slope_the_player_slides_up_it_and_stands() {
    let angle = 30f32.to_radians();
    let (mut app, normal, player) = ramp_room(30.0, 10.0, 5.0);
    run(&mut app, player, Input::default(), 10);
    let path = run(
        &mut app,
        player,
        Input {
            run: 1.0,
            jump: false,
        },
        150,
    );
    let on_ramp: Vec<Vec2> = path
        .iter()
        .copied()
        .filter(|p| p.x > 11.0 && p.x < 16.0)
        .collect();
    assert!(on_ramp.len() > 20, "the player reached the ramp: {path:?}");
    // The box's lower right corner a skin width above the ramp's face, along its normal.
    for (k, &p) in on_ramp.iter().enumerate() {
        let corner = p + Vec2::new(0.4, -0.4);
        let height = (corner - Vec2::new(10.0, 0.0)).dot(normal);
        assert!(
            (height - SKIN).abs() < 1e-3,
            "step {k}: the corner is {height} off the ramp at {p}"
        );
    }
    for pair in on_ramp.windows(2) {
        let step = pair[1] - pair[0];
        let along = step.normalize().dot(Vec2::from_angle(angle));
        assert!(along > 0.9999, "a step {step} not along the ramp");
    }
    assert!(grounded(&app), "a 30° ramp is ground");
}

#[test]
fn a_sixty_degree_slope_is_no_ground_and_is_not_climbed() {
    let (mut app, _, player) = ramp_room(60.0, 6.0, 8.0);
    let path = run(
        &mut app,
        player,
        Input {
            run: 1.0,
            jump: false,
        },
        120,
    );
    let highest = path.iter().map(|p| p.y).fold(f32::MIN, f32::max);
    assert!(highest < 1.0, "the player climbed a 60° wall to {highest}");
    // Pressed against it, it keeps sliding back to the floor: never ground there, only the floor.
    let last = app.world().resource::<LastMove>().0.clone().unwrap();
    let (_, ground) = last.ground.expect("the floor is ground");
    assert_eq!(ground.normal, Vec2::Y);
}

#[test]
fn in_a_v_shaped_corner_the_player_comes_to_rest_without_jitter() {
    let angle = 30f32.to_radians();
    let mut app = room_with(|app| {
        wall(
            app,
            Vec2::new(8.0, 2.0),
            -angle,
            Collider::rotated_rect(5.0, 1.0),
        );
        wall(
            app,
            Vec2::new(12.0, 2.0),
            angle,
            Collider::rotated_rect(5.0, 1.0),
        );
    });
    let player = spawn_player(&mut app, Vec2::new(10.0, 6.0), Collider::rect(0.8, 0.8));
    run(&mut app, player, Input::default(), 120);
    let rest = run(&mut app, player, Input::default(), 60);
    for (frame, p) in rest.iter().enumerate() {
        assert!(
            (*p - rest[0]).length() < 1e-4,
            "frame {frame}: the player moved from {} to {p}",
            rest[0]
        );
    }
    let shape = world_shape(&app, player);
    assert!(walls_overlapped(&mut app, &shape).is_empty());
    assert!(grounded(&app));
    assert!((rest[0].x - 10.0).abs() < 0.01, "at rest at {}", rest[0]);
}

#[test]
fn a_player_half_a_unit_inside_a_wall_is_pushed_out_on_the_first_call() {
    for (body, at) in [
        (Collider::rect(0.8, 0.8), Vec2::new(2.0 + 0.4 - 0.5, 3.0)),
        (Collider::circle(0.4), Vec2::new(2.0 + 0.4 - 0.5, 3.0)),
        (
            Collider::rotated_rect(0.8, 0.8),
            Vec2::new(2.0 + 0.4 - 0.5, 3.0),
        ),
    ] {
        let mut app = app();
        let block = wall(&mut app, Vec2::new(1.0, 3.0), 0.0, Collider::rect(2.0, 4.0));
        let player = spawn_at(&mut app, Transform::from_translation(at.extend(0.0)), body);
        app.update();
        let moved = app
            .world_mut()
            .run_system_once(move |query: SpatialQuery| {
                query.move_and_slide(player, Vec2::ZERO, &MoveAndSlideConfig::default())
            })
            .unwrap()
            .unwrap();
        assert!(
            (moved.motion - Vec2::new(0.5 + SKIN, 0.0)).length() < 1e-4,
            "{body:?}: pushed by {}",
            moved.motion
        );
        let shape = world_shape(&app, player).translated(moved.motion);
        let wall_shape = world_shape(&app, block);
        assert!(!shape.intersects(&wall_shape, OverlapMode::Closed));
    }
}

#[test]
fn a_player_jumps_up_through_a_one_way_platform_stands_on_it_and_drops_through_on_demand() {
    let mut app = room_with(|app| {
        one_way(app, Vec2::new(10.0, 2.5), 6.0);
    });
    let player = spawn_player(&mut app, Vec2::new(10.0, 0.4), Collider::rect(0.8, 0.8));
    run(&mut app, player, Input::default(), 10);
    let jump = run(
        &mut app,
        player,
        Input {
            run: 0.0,
            jump: true,
        },
        1,
    );
    let rise = run(&mut app, player, Input::default(), 120);
    let highest = rise.iter().map(|p| p.y).fold(jump[0].y, f32::max);
    assert!(
        highest > 3.0,
        "the jump went through the platform: up to {highest}"
    );
    // The platform's top at 2.6: the player stands on it, a skin width above.
    let standing = *rise.last().unwrap();
    assert!(
        (standing.y - (2.6 + 0.4 + SKIN)).abs() < 1e-4,
        "standing at {standing}"
    );
    assert!(grounded(&app), "the platform is ground");
    app.world_mut().resource_mut::<DropThrough>().0 = true;
    let fall = run(&mut app, player, Input::default(), 60);
    app.world_mut().resource_mut::<DropThrough>().0 = false;
    let landed = *fall.last().unwrap();
    assert!(
        (landed.y - (0.4 + SKIN)).abs() < 1e-4,
        "dropped through to the floor: at {landed}"
    );
}

/// Every pair the hooks were asked about.
#[derive(Resource, Default)]
struct Asked(Mutex<Vec<(Entity, Entity)>>);

/// Whether the hooks turn every pair down.
#[derive(Resource, Default)]
struct RejectAll(bool);

#[derive(SystemParam)]
struct Recording<'w> {
    asked: Res<'w, Asked>,
    reject: Res<'w, RejectAll>,
}

impl CollisionHooks for Recording<'_> {
    fn filter_pair(&self, a: Entity, b: Entity) -> bool {
        self.asked.0.lock().unwrap().push((a, b));
        !self.reject.0
    }
}

/// The starts and ends of the pairs, in order: `(started?, collider1, collider2)`.
#[derive(Resource, Default)]
struct Log(Vec<(bool, Entity, Entity)>);

fn recording_app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        TransformPlugin,
        RectCollisionPlugin::default().with_hooks::<Recording>(),
    ))
    .init_resource::<Asked>()
    .init_resource::<RejectAll>()
    .init_resource::<Log>()
    .add_observer(|start: On<CollisionStarted>, mut log: ResMut<Log>| {
        if start.collider1 < start.collider2 {
            log.0.push((true, start.collider1, start.collider2));
        }
    })
    .add_observer(|end: On<CollisionEnded>, mut log: ResMut<Log>| {
        if end.collider1 < end.collider2 {
            log.0.push((false, end.collider1, end.collider2));
        }
    });
    app
}

fn events(app: &mut App) -> Vec<(bool, Entity, Entity)> {
    core::mem::take(&mut app.world_mut().resource_mut::<Log>().0)
}

fn asked(app: &mut App) -> Vec<(Entity, Entity)> {
    let asked = app.world_mut().resource_mut::<Asked>();
    core::mem::take(&mut *asked.0.lock().unwrap())
}

#[test]
fn hooks_are_asked_each_update_about_marked_pairs_only_and_a_turned_down_pair_ends() {
    let mut app = recording_app();
    let spawn = |app: &mut App, x: f32, hooks: bool| {
        let mut entity = app
            .world_mut()
            .spawn((Transform::from_xyz(x, 0.0, 0.0), Collider::rect(1.0, 1.0)));
        if hooks {
            entity.insert(ActiveHooks);
        }
        entity.id()
    };
    let (a, b) = (spawn(&mut app, 0.0, true), spawn(&mut app, 0.5, false));
    let (c, d) = (spawn(&mut app, 10.0, false), spawn(&mut app, 10.5, false));
    app.update();
    let ab = (a.min(b), a.max(b));
    assert_eq!(asked(&mut app), vec![ab]);
    let mut started = events(&mut app);
    started.sort();
    let cd = (c.min(d), c.max(d));
    let mut both = vec![(true, ab.0, ab.1), (true, cd.0, cd.1)];
    both.sort();
    assert_eq!(started, both);
    // Nothing moves: the marked pair is asked again, the other is not.
    app.update();
    assert_eq!(asked(&mut app), vec![ab]);
    assert_eq!(events(&mut app), vec![]);
    app.world_mut().resource_mut::<RejectAll>().0 = true;
    app.update();
    assert_eq!(asked(&mut app), vec![ab]);
    assert_eq!(
        events(&mut app),
        vec![(false, ab.0, ab.1)],
        "it ends in that update"
    );
    let contacts = app.world().resource::<Contacts>();
    assert!(
        !contacts.contains(a, b),
        "a turned-down pair does not touch"
    );
    assert!(contacts.contains(c, d), "an unmarked pair still touches");
    let colliding = |app: &App, e: Entity| app.world().get::<CollidingEntities>(e).unwrap().len();
    assert_eq!((colliding(&app, a), colliding(&app, b)), (0, 0));
    app.update();
    assert_eq!(events(&mut app), vec![], "and stays apart");
    app.world_mut().resource_mut::<RejectAll>().0 = false;
    app.update();
    assert_eq!(
        events(&mut app),
        vec![(true, ab.0, ab.1)],
        "it starts again when let through"
    );
    assert_eq!((colliding(&app, a), colliding(&app, b)), (1, 1));
    // Without the marker, a pair the hooks kept apart touches again at once.
    app.world_mut().resource_mut::<RejectAll>().0 = true;
    app.update();
    assert_eq!(events(&mut app), vec![(false, ab.0, ab.1)]);
    asked(&mut app);
    app.world_mut().entity_mut(a).remove::<ActiveHooks>();
    app.update();
    assert_eq!(events(&mut app), vec![(true, ab.0, ab.1)]);
    assert_eq!(asked(&mut app), vec![], "no marker, no question");
    app.world_mut().entity_mut(a).insert(ActiveHooks);
    app.world_mut().resource_mut::<RejectAll>().0 = false;
    app.update();
    // A despawn ends it as usual.
    app.world_mut().despawn(a);
    app.update();
    assert_eq!(events(&mut app), vec![(false, ab.0, ab.1)]);
}

#[test]
fn cast_collider_skips_itself_and_asks_the_hooks() {
    let mut app = recording_app();
    let mover = spawn_at(
        &mut app,
        Transform::default(),
        (Collider::rect(1.0, 1.0), ActiveHooks),
    );
    let target = spawn_at(
        &mut app,
        Transform::from_xyz(5.0, 0.0, 0.0),
        Collider::rect(1.0, 1.0),
    );
    app.update();
    let cast = move |query: SpatialQuery<Recording>| query.cast_collider(mover, Dir2::X, 10.0);
    let (hit, at) = app.world_mut().run_system_once(cast).unwrap().unwrap();
    assert_eq!(hit, target);
    assert_eq!(at.distance, 4.0);
    asked(&mut app);
    app.world_mut().resource_mut::<RejectAll>().0 = true;
    assert_eq!(app.world_mut().run_system_once(cast).unwrap(), None);
    assert_eq!(
        asked(&mut app),
        vec![(mover.min(target), mover.max(target))]
    );
    // Without the hooks named, the query lets every pair through.
    let plain = move |query: SpatialQuery| query.cast_collider(mover, Dir2::X, 10.0);
    assert!(app.world_mut().run_system_once(plain).unwrap().is_some());
}

/// A random wall of any kind, 0.5 to 4 across, in a 20 × 20 square.
fn random_wall(rng: &mut Rng) -> (Vec2, f32, Collider) {
    let center = Vec2::new(rng.range(-10.0, 10.0), rng.range(-10.0, 10.0));
    let (w, h) = (rng.range(0.5, 4.0), rng.range(0.5, 4.0));
    match rng.below(5) {
        0 => (center, 0.0, Collider::rect(w, h)),
        1 => (center, rng.range(-3.2, 3.2), Collider::rotated_rect(w, h)),
        2 => (center, 0.0, Collider::circle(w * 0.5)),
        3 => (
            center,
            rng.range(-3.2, 3.2),
            Collider::capsule(w * 0.25, h * 0.5),
        ),
        _ => (center, rng.range(-3.2, 3.2), quadrilateral(w, h)),
    }
}

#[test]
fn in_random_worlds_move_and_slide_never_ends_inside_and_moves_freely_where_nothing_is_in_the_way()
{
    let mut rng = Rng::new(77);
    let (mut free, mut blocked) = (0, 0);
    for world in 0..60 {
        let mut app = app();
        let walls: Vec<Entity> = (0..25)
            .map(|_| {
                let (center, angle, collider) = random_wall(&mut rng);
                wall(&mut app, center, angle, collider)
            })
            .collect();
        let body = [
            Collider::rect(0.8, 1.2),
            Collider::circle(0.5),
            Collider::rotated_rect(0.8, 1.2),
            Collider::capsule(0.4, 0.4),
            quadrilateral(0.8, 1.2),
        ][world % 5];
        let player = (app.world_mut())
            .spawn((Transform::from_rotation(Quat::from_rotation_z(0.3)), body))
            .id();
        for _ in 0..20 {
            let at = Vec2::new(rng.range(-10.0, 10.0), rng.range(-10.0, 10.0));
            app.world_mut()
                .get_mut::<Transform>(player)
                .unwrap()
                .translation = at.extend(0.0);
            app.update();
            let start = world_shape(&app, player);
            let wall_shapes: Vec<WorldShape> =
                walls.iter().map(|&w| world_shape(&app, w)).collect();
            let near = |shape: &WorldShape| {
                (wall_shapes.iter()).any(|wall| shape.intersects(wall, OverlapMode::Closed))
            };
            if near(&start) {
                continue;
            }
            let motion = Vec2::from_angle(rng.range(-3.2, 3.2)) * rng.range(0.0, 6.0);
            let moved = app
                .world_mut()
                .run_system_once(move |query: SpatialQuery| {
                    query.move_and_slide(player, motion, &MoveAndSlideConfig::default())
                })
                .unwrap()
                .unwrap();
            let end = start.translated(moved.motion);
            let inside =
                (wall_shapes.iter()).any(|wall| end.intersects(wall, OverlapMode::InteriorOnly));
            assert!(
                !inside,
                "world {world}: {start:?} moved by {motion} into a wall"
            );
            assert!(moved.motion.length() <= motion.length() + 1e-4);
            // Brute force: whether anything is within the motion and a skin width.
            let reach = motion.length() + SKIN;
            let in_the_way = Dir2::new(motion).is_ok_and(|direction| {
                (wall_shapes.iter())
                    .any(|wall| shape_cast(&start, direction, reach, wall).is_some())
            });
            // A move that ends within a skin width of a surface, beside it, is lifted back to the
            // skin width: casts of twice that in 32 directions from the end find every such one.
            let end_near_a_wall = (0..32).any(|k| {
                let direction =
                    Dir2::new(Vec2::from_angle(k as f32 * core::f32::consts::TAU / 32.0))
                        .expect("a unit direction");
                let end = start.translated(motion);
                (wall_shapes.iter())
                    .any(|wall| shape_cast(&end, direction, 2.0 * SKIN, wall).is_some())
            });
            if end_near_a_wall && !in_the_way {
                continue;
            }
            if in_the_way {
                blocked += 1;
                assert!(
                    !moved.hits.is_empty(),
                    "world {world}: blocked without a hit"
                );
            } else {
                free += 1;
                assert_eq!(moved.motion, motion, "world {world}: a free move is whole");
                assert!(moved.hits.is_empty());
            }
            if let Some((ground, hit)) = moved.ground {
                assert!(walls.contains(&ground));
                assert!(hit.normal.dot(Vec2::Y) >= 45f32.to_radians().cos() - 1e-6);
            }
        }
    }
    assert!(
        free > 100 && blocked > 100,
        "free {free}, blocked {blocked}"
    );
}

#[test]
fn move_and_slide_takes_bad_input_and_other_layers_without_panicking() {
    let mut app = app();
    let block = wall(&mut app, Vec2::new(3.0, 0.0), 0.0, Collider::rect(1.0, 4.0));
    app.world_mut()
        .entity_mut(block)
        .insert(CollisionLayers::new(2, 2));
    let player = spawn_at(
        &mut app,
        Transform::default(),
        (Collider::rect(1.0, 1.0), CollisionLayers::new(1, 1)),
    );
    let nothing = app.world_mut().spawn(Transform::default()).id();
    app.update();
    let call = |app: &mut App, entity: Entity, motion: Vec2, config: MoveAndSlideConfig| {
        app.world_mut()
            .run_system_once(move |query: SpatialQuery| {
                query.move_and_slide(entity, motion, &config)
            })
            .unwrap()
    };
    let default = MoveAndSlideConfig::default();
    assert_eq!(call(&mut app, nothing, Vec2::X, default), None);
    let nan = call(&mut app, player, Vec2::NAN, default).unwrap();
    assert_eq!(nan.motion, Vec2::ZERO);
    // On its own layers the player does not meet the block; on the block's, it stops at it.
    let through = call(&mut app, player, Vec2::X * 5.0, default).unwrap();
    assert_eq!(through.motion, Vec2::X * 5.0);
    let layers = Some(CollisionLayers::new(2, 2));
    let stopped = call(
        &mut app,
        player,
        Vec2::X * 5.0,
        MoveAndSlideConfig { layers, ..default },
    );
    let stopped = stopped.unwrap();
    assert!(
        (stopped.motion.x - (2.0 - SKIN)).abs() < 1e-4,
        "{}",
        stopped.motion
    );
    let weird = MoveAndSlideConfig {
        skin_width: f32::NAN,
        max_ground_angle: f32::INFINITY,
        layers,
        ..default
    };
    let moved = call(&mut app, player, Vec2::X * 5.0, weird).unwrap();
    assert!(moved.motion.x <= 2.0, "{}", moved.motion);
}

/// Moves `player` by `motion` with `move_and_slide` and applies it, `frames` times; its positions.
fn slide_for(app: &mut App, player: Entity, motion: Vec2, frames: usize) -> Vec<Vec2> {
    (0..frames)
        .map(|_| {
            let moved = app
                .world_mut()
                .run_system_once(move |query: SpatialQuery| {
                    query.move_and_slide(player, motion, &MoveAndSlideConfig::default())
                })
                .unwrap()
                .unwrap();
            let mut transform = app.world_mut().get_mut::<Transform>(player).unwrap();
            transform.translation += moved.motion.extend(0.0);
            app.update();
            position(app, player)
        })
        .collect()
}

#[test]
fn a_player_sliding_past_a_convex_corner_does_not_stick_to_it() {
    for corner_on in [false, true] {
        let mut app = app();
        // A pillar from x = 5 to 6, y = 0 to 2.
        let pillar = wall(&mut app, Vec2::new(5.5, 1.0), 0.0, Collider::rect(1.0, 2.0));
        // Up along the pillar's left side, pressed into it; or down onto its top-left corner, the
        // player's lower right corner aimed at it.
        let (start, motion) = if corner_on {
            (Vec2::new(4.6 - 0.5, 2.4 + 0.5), Vec2::new(0.05, -0.05))
        } else {
            (Vec2::new(4.6 - SKIN, 0.5), Vec2::new(0.05, 0.05))
        };
        let player = spawn_at(
            &mut app,
            Transform::from_translation(start.extend(0.0)),
            Collider::rect(0.8, 0.8),
        );
        app.update();
        let path = slide_for(&mut app, player, motion, 80);
        let shape = world_shape(&app, player);
        let pillar_shape = world_shape(&app, pillar);
        assert!(!shape.intersects(&pillar_shape, OverlapMode::InteriorOnly));
        let end = *path.last().unwrap();
        if corner_on {
            // It lands on the pillar's top, a skin width above, slides along it, and falls past
            // its far end.
            let on_top = |p: &Vec2| (p.y - (2.4 + SKIN)).abs() < 1e-4 && p.x > 5.6;
            assert!(
                path.iter().any(on_top),
                "never slid along the top: {path:?}"
            );
            assert!(end.x > 6.5 && end.y < 2.0, "stuck at {end}");
        } else {
            // It rises along the side and, past the top, goes on over it.
            assert!(end.x > 6.0 && end.y > 2.4, "stuck at {end}");
        }
    }
}

/// The rule of [`ByIndex`]: a marked pair is let through unless its entities' indices sum to a
/// multiple of `modulus`; `flip` inverts the answer.
#[derive(Resource)]
struct Rule {
    modulus: u32,
    flip: bool,
}

impl Rule {
    fn accepts(&self, a: Entity, b: Entity) -> bool {
        (a.index_u32() + b.index_u32()).is_multiple_of(self.modulus) == self.flip
    }
}

#[derive(SystemParam)]
struct ByIndex<'w> {
    rule: Res<'w, Rule>,
}

impl CollisionHooks for ByIndex<'_> {
    fn filter_pair(&self, a: Entity, b: Entity) -> bool {
        self.rule.accepts(a, b)
    }
}

#[test]
fn under_random_motion_and_rules_the_hooked_pairs_agree_with_brute_force_and_every_start_ends() {
    let mut app = common::app_with_plugin(RectCollisionPlugin::default().with_hooks::<ByIndex>());
    app.insert_resource(Rule {
        modulus: 3,
        flip: false,
    });
    let mut rng = Rng::new(0xb00c5);
    let colliders: Vec<Entity> = (0..300)
        .map(|_| {
            let (center, angle, collider) = random_wall(&mut rng);
            let entity = wall(&mut app, center * 2.0, angle, collider);
            // Few enough that, where few move, the changed colliders stay under a quarter.
            if rng.below(10) == 0 {
                app.world_mut().entity_mut(entity).insert(ActiveHooks);
            }
            entity
        })
        .collect();
    let mut marked_pairs_seen = 0;
    for frame in 0..300 {
        // Stretches where few colliders move, where the pair set keeps its lists, and where most do.
        let share = if (frame / 25) % 2 == 0 { 50 } else { 2 };
        for &entity in &colliders {
            if rng.below(100) < share {
                let step = Vec2::new(rng.range(-0.5, 0.5), rng.range(-0.5, 0.5));
                let mut transform = app.world_mut().get_mut::<Transform>(entity).unwrap();
                transform.translation += step.extend(0.0);
            }
            if rng.below(200) == 0 {
                let mut entity = app.world_mut().entity_mut(entity);
                if entity.contains::<ActiveHooks>() {
                    entity.remove::<ActiveHooks>();
                } else {
                    entity.insert(ActiveHooks);
                }
            }
        }
        if frame % 10 == 0 {
            let mut rule = app.world_mut().resource_mut::<Rule>();
            rule.flip = !rule.flip;
            rule.modulus = 2 + (frame / 10) % 3;
        }
        app.update();
        let all = common::brute_force_pairs(&mut app);
        let (world, rule) = (app.world(), app.world().resource::<Rule>());
        let marked = |(a, b): &(Entity, Entity)| {
            world.get::<ActiveHooks>(*a).is_some() || world.get::<ActiveHooks>(*b).is_some()
        };
        marked_pairs_seen += all.iter().filter(|pair| marked(pair)).count();
        let expected: Vec<_> = (all.iter().copied())
            .filter(|pair| !marked(pair) || rule.accepts(pair.0, pair.1))
            .collect();
        assert_eq!(
            common::colliding_pairs(&mut app),
            expected,
            "frame {frame}: CollidingEntities against brute force less the turned-down pairs"
        );
        common::assert_events_alternate(&app, &format!("frame {frame}"));
    }
    assert!(
        marked_pairs_seen > 1_000,
        "{marked_pairs_seen} marked pairs"
    );
}
