//! N moving colliders (40% rects, 30% rotated rects, 30% circles, sizes 1 to 3, in a square of side 4√N)
//! with the pipeline's counts and stage timings on screen and, every two seconds, in the log. `F9` shows
//! the collision overlay.
//!
//! Run: `cargo run --release --example stress -- 10000` (N defaults to 10,000)

#[path = "support/mod.rs"]
mod support;

use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::prelude::*;
use bevy_rect_collision::prelude::*;
use support::{BaseColor, help_text, sprite_for};

#[derive(Component)]
struct Velocity(Vec2);

#[derive(Component)]
struct Hud;

#[derive(Resource)]
struct WorldSide(f32);

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    App::new()
        .add_plugins((
            DefaultPlugins,
            FrameTimeDiagnosticsPlugin::default(),
            RectCollisionPlugin::default(),
            RectCollisionDebugPlugin,
        ))
        .insert_resource(WorldSide(4.0 * (count as f32).sqrt()))
        .add_systems(
            Startup,
            move |commands: Commands,
                  assets: Res<AssetServer>,
                  side: Res<WorldSide>,
                  store: ResMut<GizmoConfigStore>| {
                setup(commands, assets, side, store, count)
            },
        )
        .add_systems(Update, (move_colliders, tint, update_hud, log_summary))
        .run();
}

/// A small seeded generator, so every run shows the same world.
struct Rng(u64);

impl Rng {
    fn range(&mut self, low: f32, high: f32) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        low + (high - low) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
    }
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    side: Res<WorldSide>,
    mut store: ResMut<GizmoConfigStore>,
    count: usize,
) {
    store.config_mut::<CollisionGizmos>().0.enabled = false;
    commands.spawn((
        Camera2d,
        Projection::from(OrthographicProjection {
            scale: side.0 / 680.0,
            ..OrthographicProjection::default_2d()
        }),
    ));
    let mut rng = Rng(0x5eed);
    let half = side.0 * 0.5;
    for i in 0..count {
        let (w, h) = (rng.range(1.0, 3.0), rng.range(1.0, 3.0));
        let collider = match i % 10 {
            0..4 => Collider::rect(w, h),
            4..7 => Collider::rotated_rect(w, h),
            _ => Collider::circle(w * 0.5),
        };
        let color = Color::srgb(0.3, 0.55, 0.85);
        commands.spawn((
            Transform::from_xyz(rng.range(-half, half), rng.range(-half, half), 0.0)
                .with_rotation(Quat::from_rotation_z(rng.range(-3.0, 3.0))),
            sprite_for(&collider, color, &assets),
            BaseColor(color),
            Velocity(Vec2::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0))),
            collider,
        ));
    }
    commands.spawn((Hud, help_text("")));
}

/// Moves every collider, wrapping around the square world.
fn move_colliders(
    time: Res<Time>,
    side: Res<WorldSide>,
    mut movers: Query<(&mut Transform, &Velocity)>,
) {
    let (dt, half) = (time.delta_secs(), side.0 * 0.5);
    movers.par_iter_mut().for_each(|(mut transform, velocity)| {
        let moved = transform.translation.truncate() + velocity.0 * dt;
        let wrapped = (moved + half).rem_euclid(Vec2::splat(side.0)) - half;
        transform.translation = wrapped.extend(0.0);
    });
}

fn tint(
    mut sprites: Query<(&mut Sprite, &BaseColor, &CollidingEntities), Changed<CollidingEntities>>,
) {
    for (mut sprite, base, touching) in &mut sprites {
        sprite.color = if touching.is_empty() {
            base.0
        } else {
            support::TOUCHING
        };
    }
}

/// Every two seconds, the frame rate and the collision time in the log too.
fn log_summary(
    time: Res<Time>,
    mut last: Local<f32>,
    diagnostics: Res<CollisionDiagnostics>,
    store: Res<DiagnosticsStore>,
) {
    if time.elapsed_secs() - *last < 2.0 {
        return;
    }
    *last = time.elapsed_secs();
    let fps = store
        .get(&FrameTimeDiagnosticsPlugin::FPS)
        .and_then(|fps| fps.smoothed())
        .unwrap_or(0.0);
    info!(
        "{} colliders: {fps:.1} fps, collision {:.2} ms, {} touching pairs",
        diagnostics.colliders,
        diagnostics.timings.total().as_secs_f64() * 1e3,
        diagnostics.touching_pairs
    );
}

fn update_hud(
    diagnostics: Res<CollisionDiagnostics>,
    store: Res<DiagnosticsStore>,
    mut hud: Single<&mut Text, With<Hud>>,
) {
    let fps = store
        .get(&FrameTimeDiagnosticsPlugin::FPS)
        .and_then(|fps| fps.smoothed())
        .unwrap_or(0.0);
    let t = diagnostics.timings;
    let ms = |d: core::time::Duration| d.as_secs_f64() * 1e3;
    hud.0 = format!(
        "{fps:.0} fps   colliders {}   candidate pairs {}   touching {}\n\
         collision {:.2} ms: prepare {:.2}, broad {:.2}, narrow {:.2}, events {:.2}   (F9: overlay)",
        diagnostics.colliders,
        diagnostics.candidate_pairs,
        diagnostics.touching_pairs,
        ms(t.total()),
        ms(t.prepare),
        ms(t.broad_phase),
        ms(t.narrow_phase),
        ms(t.events),
    );
}
