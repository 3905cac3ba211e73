//! [`CollisionDiagnostics`]: counts and stage timings, filled by the pipeline every update.

use core::time::Duration;

use bevy::diagnostic::{Diagnostic, DiagnosticPath, Diagnostics, RegisterDiagnostic};
use bevy::platform::time::Instant;
use bevy::prelude::*;

/// How long each stage of the last collision update took.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimings {
    /// [`CollisionSystems::Prepare`](crate::CollisionSystems::Prepare): world shapes from transforms.
    pub prepare: Duration,
    /// [`CollisionSystems::BroadPhase`](crate::CollisionSystems::BroadPhase): the proxies and the candidate pairs.
    pub broad_phase: Duration,
    /// [`CollisionSystems::NarrowPhase`](crate::CollisionSystems::NarrowPhase): exact tests and contacts.
    pub narrow_phase: Duration,
    /// [`CollisionSystems::Events`](crate::CollisionSystems::Events): started and ended pairs, messages,
    /// triggers and `CollidingEntities`.
    pub events: Duration,
}

impl StageTimings {
    /// The four stages together.
    pub fn total(&self) -> Duration {
        self.prepare + self.broad_phase + self.narrow_phase + self.events
    }
}

/// Counts and timings of the last collision update, readable by any system (the egui panel shows them).
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq)]
pub struct CollisionDiagnostics {
    /// Enabled colliders with a valid shape that took part.
    pub colliders: usize,
    /// Enabled colliders skipped because their shape is invalid (NaN, infinite or zero-scale
    /// transform, or a bad size).
    pub invalid_colliders: usize,
    /// Candidate pairs: those in the broad phase's pair set, whose fat AABBs overlap and whose layers
    /// interact.
    pub candidate_pairs: usize,
    /// Colliders the broad phase queried for new pairs this update (its move buffer): those added,
    /// those that changed layers, and those whose box left its fat AABB.
    pub queried_proxies: usize,
    /// Pairs the narrow phase tested this update: those of the pair set with a collider whose shape or
    /// layers changed.
    pub tested_pairs: usize,
    /// Pairs touching after the update.
    pub touching_pairs: usize,
    /// `CollisionStarted` pairs of the update, counted before any was dropped because an observer
    /// removed one of its colliders first (see [`CollisionStarted`](crate::CollisionStarted)).
    pub started: usize,
    /// `CollisionEnded` pairs sent by the update's events stage; not those a collider's removal or
    /// despawn sent at once.
    pub ended: usize,
    /// Time per stage.
    pub timings: StageTimings,
}

impl CollisionDiagnostics {
    /// [`StageTimings::prepare`] in milliseconds, in Bevy's `DiagnosticsStore`.
    pub const PREPARE: DiagnosticPath = DiagnosticPath::const_new("collision/prepare");
    /// [`StageTimings::broad_phase`] in milliseconds.
    pub const BROAD_PHASE: DiagnosticPath = DiagnosticPath::const_new("collision/broad_phase");
    /// [`StageTimings::narrow_phase`] in milliseconds.
    pub const NARROW_PHASE: DiagnosticPath = DiagnosticPath::const_new("collision/narrow_phase");
    /// [`StageTimings::events`] in milliseconds.
    pub const EVENTS: DiagnosticPath = DiagnosticPath::const_new("collision/events");
    /// [`StageTimings::total`] in milliseconds.
    pub const TOTAL: DiagnosticPath = DiagnosticPath::const_new("collision/total");
    /// [`Self::colliders`].
    pub const COLLIDERS: DiagnosticPath = DiagnosticPath::const_new("collision/colliders");
    /// [`Self::touching_pairs`].
    pub const TOUCHING_PAIRS: DiagnosticPath =
        DiagnosticPath::const_new("collision/touching_pairs");
    /// [`Self::started`].
    pub const STARTED: DiagnosticPath = DiagnosticPath::const_new("collision/started");
    /// [`Self::ended`].
    pub const ENDED: DiagnosticPath = DiagnosticPath::const_new("collision/ended");

    /// The stage timings, in milliseconds, and the counts, each with its path in Bevy's
    /// `DiagnosticsStore` and its unit's suffix.
    fn measurements(&self) -> [(DiagnosticPath, f64, &'static str); 9] {
        let ms = |duration: Duration| duration.as_secs_f64() * 1e3;
        let t = &self.timings;
        [
            (Self::PREPARE, ms(t.prepare), "ms"),
            (Self::BROAD_PHASE, ms(t.broad_phase), "ms"),
            (Self::NARROW_PHASE, ms(t.narrow_phase), "ms"),
            (Self::EVENTS, ms(t.events), "ms"),
            (Self::TOTAL, ms(t.total()), "ms"),
            (Self::COLLIDERS, self.colliders as f64, ""),
            (Self::TOUCHING_PAIRS, self.touching_pairs as f64, ""),
            (Self::STARTED, self.started as f64, ""),
            (Self::ENDED, self.ended as f64, ""),
        ]
    }

    /// Publishes the last update's timings and counts to Bevy's `DiagnosticsStore`, where the
    /// diagnostics tools (`LogDiagnosticsPlugin`, overlays) find them.
    pub(crate) fn publish(&self, store: &mut Diagnostics) {
        for (path, value, _) in self.measurements() {
            store.add_measurement(&path, || value);
        }
    }

    /// Registers every path with `app`.
    pub(crate) fn register(app: &mut App) {
        for (path, _, suffix) in Self::default().measurements() {
            app.register_diagnostic(Diagnostic::new(path).with_suffix(suffix));
        }
    }
}

/// Measures one stage.
pub(crate) struct StageTimer(Instant);

impl StageTimer {
    pub(crate) fn start() -> Self {
        Self(Instant::now())
    }

    pub(crate) fn elapsed(&self) -> Duration {
        self.0.elapsed()
    }
}
