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
    /// [`CollisionSystems::BroadPhase`](crate::CollisionSystems::BroadPhase): candidate pairs.
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
    /// Pairs the broad phase handed to the narrow phase: on updates where few colliders moved, only
    /// the pairs involving one of them.
    pub candidate_pairs: usize,
    /// Whether the broad phase built its grid anew this update. It keeps the last build's grid while
    /// nothing but the colliders' places changed and few colliders left the grown boxes the build put
    /// them in; see the crate's README, "Performance".
    pub grid_built: bool,
    /// Whether the broad phase took in and kept this update a grid built in the background, beside the
    /// last update, from that update's colliders: what spares colliders that all drift (in worlds of
    /// 512 colliders or more) an update that builds the grid. See the crate's README, "Performance".
    pub grid_built_in_background: bool,
    /// Whether the broad phase started a build in the background this update, over this update's
    /// colliders, for the next update to take in ([`Self::grid_built_in_background`]): an update that
    /// keeps the grid starts one as the grid is about to stop being kept. Such an update costs a little
    /// more than one that only keeps the grid. See the crate's README, "Performance".
    pub build_started_in_background: bool,
    /// Whether the broad phase copied every collider out of Bevy's tables this update: for a build, or
    /// to keep the grid where it cannot read the colliders where they are (in more than eight tables,
    /// some with an invalid shape, a collider's layers changed, or more of them than fit a core's
    /// cache). An update that reads them where they are and starts a build in the background leaves
    /// that build to gather them, on its own thread. See the crate's README, "Performance".
    pub colliders_gathered: bool,
    /// Pairs touching after the update.
    pub touching_pairs: usize,
    /// `CollisionStarted` pairs of the update, counted before any was dropped because an observer
    /// removed one of its colliders first (see [`CollisionStarted`](crate::CollisionStarted)).
    pub started: usize,
    /// `CollisionEnded` pairs of the update, including those ended when a collider was removed or
    /// despawned since the previous update.
    pub ended: usize,
    /// Pairs the events stage compared to find what started and ended: last update's touching pairs
    /// and this update's, or, where both updates kept the same grid, only the pairs of that grid that
    /// touch in one update of the two and both updates' pairs of colliders that left their grown boxes.
    /// See the crate's README, "Performance".
    pub compared_pairs: usize,
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
