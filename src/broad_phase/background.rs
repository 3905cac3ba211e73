//! Building the grid in the background, on a thread of the plugin's own, while colliders drift.
//!
//! An update that keeps the grid because the colliders drifted within their grown boxes (`drift.rs`)
//! starts a build over this update's colliders when the grid is about to stop being kept: as old as the
//! last grid was when it stopped, where a sample shows colliders about to leave their boxes, or once a
//! few have left them ([`should_start`]); an update earlier after a build that started once many had
//! left ([`started_late`]). The build runs on another thread while the pipeline and the rest of the
//! frame go on, and the next update takes it in before anything else, waiting for it if it has begun
//! and not finished; every collider that left its new grown box since counts as moved since that build,
//! as after any build. So the update that would have built the grid, several times the cost of one that
//! keeps it, finds a grid ready instead. A build that has not begun (the thread not yet run, or busy
//! with a build dropped before) is dropped, and so is one the update cannot use (few moved, a collider
//! was enabled, the settings changed): the update goes on as if none had started. The pairs and
//! contacts are the same either way.
//!
//! The thread is the plugin's own (`build_thread.rs`), started with the first build, so that waking it
//! never makes the update wait (on Linux it runs as a batch thread), and so that the game's tasks on
//! Bevy's async compute pool never hold the builds back. It ends with the app. Until the forty-fourth
//! round the builds ran on Bevy's async compute pool.
//!
//! The build starts from the colliders the update gathered, or, where the update read them in their
//! table, from the entries it wrote them to, shared with the build, which gathers them on its own
//! thread ([`KeptEntries`]).
//!
//! Where the app has no async compute task pool (it runs no work in the background, as with
//! Bevy's `TaskPoolPlugin` left out), or on the web, the grid is built in the update.

use core::time::Duration;
use std::sync::Arc;

use bevy::math::Vec4;
use bevy::platform::time::Instant;
use bevy::tasks::AsyncComputeTaskPool;

use super::build_thread::{BuildThread, Taken};
use super::gather::{GatherTarget, gather_from_entries};
use super::grid::Bounds;
use super::{ColliderEntry, GridBuild, MOVED_SHARE};
use crate::layers::CollisionLayers;
use crate::parallel::on_this_thread;

/// Whether an update that kept the grid starts a build in the background: with `escaped` of its
/// `entries` out of their grown boxes since the build and `came_or_went` new or gone since
/// ([`MovedSinceBuild`](super::moved::MovedSinceBuild), both counted as moved), `kept` updates before
/// it kept the build, and `kept_before` updates kept the build before (an update less when that build
/// started late, see [`started_late`]); `leaving_soon` is asked only at that age (see below).
///
/// Colliders that drift at like speeds leave their grown boxes within a frame or two of each other: on
/// workload W1 at 10,000, of the 1,250 that may leave before a build is due, 1 to 9 had left on the
/// fourth update after a build, 142 to 237 on the fifth and more than 1,250 on the sixth; at 100,000,
/// 312 to 367 of 12,500 on the fifth. So a build starts on the update before the one on which the last
/// build stopped being kept (one update before that one's age), or once more than a sixty-fourth of
/// the room for moves (one entry in [`MOVED_SHARE`]) is taken, at the first sign of such a wave, and
/// at least [`START_FLOOR`] colliders.
///
/// The age alone would keep the pace of the fastest stretch: colliders that slow down would have their
/// grid built as often as before, where it could be kept longer. So at the last build's age a build
/// starts only where a sample shows colliders about to leave their grown boxes (`leaving_soon`, see
/// [`sample_shows_leaving_soon`]); otherwise it waits for the sample, or for the first escapes, on a
/// later update, and the build after it starts at the longer age. With W1's colliders moving and
/// turning at an eighth of their speed after the warm-up (`collision_bench --slow-down 8`), 17 builds
/// in 600 updates against 120 at 10,000 colliders, 7 in 200 against 50 at 100,000; there, 400 updates
/// took the whole run 4.5 and 4.2 s of processor time against 5.5 and 5.2 s (`time`, two alternating
/// runs each). At W1's own speed the sample shows the wave coming at every build's age: 150 builds in
/// 600 updates at 10,000, 50 in 200 at 100,000, 25 in 100 at 1,000,000, and 75 in 300 on W2.
///
/// Colliders that come and go, spawned and despawned among the drifting ones, take room for moves
/// too, but at a steady pace rather than in a wave: a build starts once they would take the rest of
/// the room within [`LEAD`] updates, going on at the pace they came and went since the build.
///
/// Only worlds of [`SIZES`] colliders build in the background; smaller ones build in the update.
#[inline]
pub(super) fn should_start(
    entries: usize,
    escaped: usize,
    came_or_went: usize,
    kept: usize,
    kept_before: usize,
    leaving_soon: impl FnOnce() -> bool,
) -> bool {
    if !SIZES.contains(&entries) {
        return false;
    }
    let (room, age) = (entries / MOVED_SHARE, kept + 1);
    let as_old_as_the_last = kept_before > 0 && age >= kept_before;
    let room_running_out = (escaped + came_or_went) * age + came_or_went * LEAD > room * age;
    let first_sign = escaped * START_SHARE > room && escaped >= START_FLOOR;
    first_sign || room_running_out || (as_old_as_the_last && leaving_soon())
}

/// Whether a sample of a kept build's slots shows colliders about to leave their grown boxes: one that
/// has left (its box in `now` is `Bounds::NOWHERE`, as for the colliders moved since the build), or one
/// that, going on at the pace at which it used up `margin` over the `age` updates since the build's
/// positions, leaves its grown box (`grown(slot)`) within [`LEAD`] updates. `now` holds every slot's
/// box as of this update. A slot whose collider is gone (`grown` gives `None`) shows nothing: its box
/// is `NOWHERE` too, but colliders that come and go are counted apart (see [`should_start`]).
pub(super) fn sample_shows_leaving_soon(
    now: &[Bounds],
    grown: impl Fn(usize) -> Option<Bounds>,
    margin: f32,
    age: usize,
) -> bool {
    let stride = (now.len() / PACE_SAMPLES).max(1);
    let (age, lead) = (age as f32, LEAD as f32);
    (0..now.len()).step_by(stride).any(|slot| {
        // Per side of the box, how far it may still go, and how far it went since the build; a side
        // that went inwards (a box shrinking as its collider turns) never leaves.
        let Some(grown) = grown(slot) else {
            return false;
        };
        let room_left = grown.room_to(now[slot]);
        let used = margin - room_left;
        // A box that left is `NOWHERE`, whose NaN lanes compare false.
        !room_left.cmpge(Vec4::ZERO).all() || (room_left * age).cmplt(used * lead).any()
    })
}

/// How many slots [`sample_shows_leaving_soon`] looks at.
const PACE_SAMPLES: usize = 64;

/// How many updates ahead of the first sampled collider leaving its grown box a build starts at the
/// last build's age (see [`should_start`]): one for the build to run beside the update that starts
/// it, and two for colliders that quicken.
const LEAD: usize = 3;

/// See [`should_start`].
const START_SHARE: usize = 64;

/// The fewest escaped colliders that start a build at the first sign of a wave ([`should_start`]),
/// whatever the share of the room they take. In small worlds a sixty-fourth of the room is a collider or
/// two (2 at 1,000 colliders), who leave their grown boxes one or two at a time on W1: a build then
/// started on every update after the one that took the last in, 254 builds in 600 updates at 1,000,
/// against 144 with this floor, the pipeline's median and p99 the same (W1, `--frames 600`, three runs
/// each). From 8,192 colliders the share is the larger, and the floor changes nothing.
const START_FLOOR: usize = 16;

/// Whether a build started with `escaped` of its `entries` out of their grown boxes since the last
/// build came late: on the update of the wave it should have come before, with more than an eighth of
/// the room for moves taken (one entry in [`LATE_SHARE`]). The update that takes it in counts the last
/// build as kept an update less, so that the next build starts an update earlier than this one did.
///
/// [`should_start`] keeps the builds' pace, a late one too. On workload W1 at 100,000 colliders, 91 to
/// 120 had left their boxes on the update before the wave, short of the 196 that start a build, and
/// 8,700 to 9,800 on the update of the wave, whose pairs took 1.5 to 1.8 ms to find; so every fifth
/// update of the first forty spent 3.9 to 4.6 ms in the broad phase against 2.2 to 2.6 ms, until a
/// wave came early enough to start a build ahead (temporary timers). With builds that start late
/// followed by one an update earlier, the pipeline's p99 went from 7.91 to 9.07 ms to 6.58 to 8.13 ms
/// and the broad phase's from 3.81 to 4.42 ms to 2.57 to 2.98 ms, the pipeline's median from 5.95 to
/// 6.68 ms to 6.08 to 6.73 ms (seven alternating runs of 200 frames each). At 1,000,000, whose builds
/// had kept a pace of one in five updates throughout (30 in 150) and now come one in about four (36),
/// the broad phase's p99 went from 39.9 to 41.6 ms to 34.6 to 36.9 ms and its mean from 29.3 to 31.0 ms
/// to 28.3 to 29.8 ms, the pipeline's median 74.2 to 80.3 ms either way (four alternating runs each).
///
/// An eighth since the forty-fifth round, a quarter before. The waves of smaller worlds take less of
/// their room: with a quarter, the builds of W1 at 1,000 and at 10,000 kept a pace of one in five
/// updates, each starting on its wave, with 14 to 27 of 1,000 colliders out of their grown boxes (a
/// room of 125) and 149 to 300 of 10,000 (1,250); at 1,000,000 the first six builds did so, with 22,000
/// to 31,600 out (125,000). The updates before those waves had 0 to 4, 2 to 10 and 38 to 471 out; at
/// 100,000 they have 91 to 1,029 of 12,500, under an eighth, and its builds start as before (a
/// sixteenth, tried in the forty-second round, brought 100,000's builds a wave too early). With an
/// eighth the builds come one in four, before their waves. On W1 at 10,000 the updates that start a
/// build took 201 µs at the median against 270 µs, their broad phase 55 against 105 µs (`--per-frame`,
/// 1,000 updates), and the pipeline's p99 went from 0.261 and 0.265 ms to 0.223 and 0.223 ms; at 60
/// updates a second (`--fps 60`, 900 updates) from 0.342 to 0.506 ms to 0.288 to 0.328 ms, the median
/// 0.213 to 0.265 ms against 0.201 to 0.217 ms (three alternating runs each). At 1,000,000 the broad
/// phase's p99 went from 18.4 and 18.5 ms to 14.1 and 14.4 ms (`--frames 100`, two each). W1 at 100,000,
/// W2 and W6 start their builds on the same updates as before.
#[inline]
pub(super) fn started_late(entries: usize, escaped: usize) -> bool {
    escaped * LATE_SHARE > entries
}

/// See [`started_late`].
const LATE_SHARE: usize = 8 * MOVED_SHARE;

/// The numbers of colliders whose builds run in the background. On workload W1 (alternating runs
/// against builds in the update, quiet stretches), at 10,000 the pipeline's p99 went from 0.71 to 0.91
/// ms to 0.54 to 0.63 ms in six runs of seven, its median and mean within the noise.
///
/// From 512 colliders since the forty-second round, 4,096 before. A build in the update costs an
/// update at 1,000 colliders about 27 µs, every sixth update; starting one in the background costs the
/// update that starts it 3 to 8 µs, waking the thread that builds. And the updates that keep a grown
/// build from the background test its pairs grouped by kind and compare their ranks with the last
/// update's (`pairs_grouped` in `mod.rs`), where a build in the update leaves the narrow phase to group
/// them and the events stage to compare all of them (about 1,000 pairs at 1,000 colliders, against
/// about 20). W1, `--frames 600`, three alternating runs each against the builds in the update: at
/// 1,000 the pipeline's median went from 0.020 to 0.021 ms to 0.017 ms, its mean from 0.025 to 0.026 ms to 0.018
/// to 0.019 ms and its p99 from 0.048 to 0.055 ms to 0.029 to 0.044 ms; at 2,000 the median from 0.041
/// to 0.042 ms to 0.032 to 0.033 ms and the p99 from 0.102 to 0.112 ms to 0.050 and 0.051 ms in two
/// runs (0.131 ms in the third, in a slow stretch); at 512 the median from 0.011 to 0.009 ms and the
/// mean from 0.014 to 0.010 to 0.011 ms, but the p99 from 0.028 to 0.033 ms to 0.034 to 0.043 ms, the
/// start's cost nearing the update's. Earlier rounds found smaller builds costing less in the update
/// than waking another thread and fetching its results from its cache (at 1,000 the p99 went from
/// 0.079 and 0.105 ms to 0.124 and 0.144 ms in the first round of builds in the background; the
/// sixteenth round's runs at 1,000 went either way as the host's state changed), before builds started
/// from the kept entries, without a gather (`start_from_entries`), and before the grouped pairs.
///
/// Larger ones were first left in the update: bound by memory, which the build in the background
/// took from the update (at 1,000,000 the median went from 103 to 125 ms; at 100,000 one run was
/// faster, one slower). Since the loops that read out of order ask for their data ahead
/// (`prefetch.rs`) and each gathered collider takes one cache line, the build in the background
/// pays there too: at 100,000 the median went from 7.15 to 7.95 ms to 6.89 to 7.17 ms and the p99
/// from 11.8 to 13.6 ms to 9.0 to 10.2 ms (four alternating runs each, a slow stretch); at
/// 1,000,000 the median from 84.9 and 90.9 ms to 82.5 and 86.9 ms and the p99 from 138 and 145 ms
/// to 101 and 105 ms (two); at 50,000 the median went from 2.99 to 3.44 ms to 3.26 to 3.30 ms and
/// the p99 from 5.0 to 5.9 ms to 4.5 to 4.9 ms, the mean 3.10 to 3.54 ms either way (three).
pub(super) const SIZES: core::ops::RangeFrom<usize> = 512..;

/// A build in the background: its buffers, at rest or lent to the running build that fills them.
#[derive(Debug, Default)]
pub(super) struct BackgroundBuild {
    /// The buffers, while no build runs (none until the first build, or while one dropped unbegun
    /// still has them).
    idle: Option<Box<Job>>,
    /// The thread that runs the builds, started with the first.
    thread: BuildThreadState,
    /// Whether a build runs whose buffers have not come back.
    running: bool,
    /// The number of the last build started: one not begun when the next update needs it is dropped,
    /// so that an update never waits for the thread to finish another. A dropped build comes back
    /// with its number, and cannot pass for a later one.
    started: u64,
    /// A build this update filled, handed to the thread when the pipeline ends ([`Self::hand_over`]).
    pending: Option<Box<Job>>,
    /// When the last update's pipeline ended.
    pipeline_ended: Option<Instant>,
    /// The time from the end of the last update's pipeline to the start of this update's broad phase.
    between_updates: Duration,
    /// How long the last build taken in took the thread.
    last_build: Duration,
}

/// Whether a build started in an update goes to the thread at once or when the pipeline ends: at the
/// end where the time between two updates (`between_updates`, from the end of one pipeline to the start
/// of the next update's broad phase) is at least twice what the last build took (`last_build`), so that
/// it runs beside the rest of the game's frame rather than beside the update's narrow phase, with which
/// it shares the memory; at once where the next update follows too soon for that, as the workload
/// runner's do, or before any build has been timed.
///
/// On workload W1 at 100,000 colliders with updates 1/60 s apart (`collision_bench --fps 60`), the
/// updates that start a build went past 1.5 times the median in 22 of 74 with the build handed over at
/// once, their narrow phase sharing the memory with it, and in none with the build handed over at the
/// end: the pipeline's p99 went from 6.4 and 7.0 ms to 3.9 and 4.0 ms (two alternating runs of 300
/// updates each). Handed over at the end in the runner's back-to-back updates, W2's builds were not
/// ready in time: its p99 went from 1.2 and 1.3 ms to 2.0 and 2.5 ms.
///
/// ```text
/// between updates 16 ms, last build 3 ms: at the end
/// between updates 0.6 ms, last build 1.1 ms: at once
/// ```
pub(super) fn hands_over_at_the_end(between_updates: Duration, last_build: Duration) -> bool {
    !last_build.is_zero() && between_updates >= 2 * last_build
}

/// Whether the thread that runs the builds is running.
#[derive(Debug, Default)]
enum BuildThreadState {
    /// Not started yet.
    #[default]
    NotStarted,
    Running(BuildThread<Box<Job>>),
    /// It could not start, or it ended (a build panicked): the grid is built in the update.
    Unavailable,
}

/// The buffers of a build in the background: the build's, and the entries it starts from when the
/// update that started it read the colliders in their table.
#[derive(Debug, Default)]
struct Job {
    build: GridBuild,
    kept: KeptEntries,
    /// Whether the build keeps each collider's layers.
    layered: bool,
    /// How long the build took the thread.
    took: Duration,
}

/// The colliders a build starts from when the update that started it read them in Bevy's tables that
/// hold them, instead of gathering them: the entries of the build that update kept, holding this
/// update's shapes, with each entry's row in those tables (counted over them one after another) and its
/// layers (none when the build kept none). The build gathers them on its own thread
/// ([`gather_from_entries`]). On workload W1 at 10,000 the updates that started a build took 0.125 to
/// 0.128 ms in the broad phase against 0.163 to 0.176 ms when they gathered the colliders for it
/// (medians of those 200 in 1,000 updates, three alternating runs each), and the pipeline's p99 went
/// from 0.436 and 0.484 ms to 0.400 and 0.402 ms (`--all --rounds 5`, two alternating runs each). The
/// entries are shared, not copied: a copy made by the update cost it about 0.015 ms more at the broad
/// phase's p99 (`benches/README.md`).
#[derive(Debug, Default)]
struct KeptEntries {
    /// The entries, shared with the build that kept them until this build has gathered them; `None`
    /// where the build starts from colliders gathered by the update.
    entries: Option<Arc<Vec<ColliderEntry>>>,
    rows: Vec<u32>,
    layers: Vec<CollisionLayers>,
}

impl BackgroundBuild {
    /// Starts a build that grows the boxes, after `fill` has handed it this update's gathered
    /// colliders; does nothing without an async compute task pool (the app runs no work in the
    /// background), or on the web, where the next update could not wait for it.
    pub(super) fn start(&mut self, layered: bool, fill: impl FnOnce(&mut GridBuild)) {
        // The job's entries are `None` here: a build lets go of them before it ends.
        self.spawn(layered, |job| fill(&mut job.build));
    }

    /// Starts a build that grows the boxes over the colliders of `kept`'s entries, where this update
    /// wrote their shapes from the tables that hold them (`kept.order` gives each entry's row): the
    /// build gathers them from the shared entries on its own thread ([`KeptEntries`]), and builds the
    /// same grid as from a gather of those tables. Does nothing where [`Self::start`] does nothing.
    pub(super) fn start_from_entries(&mut self, layered: bool, kept: &GridBuild) {
        debug_assert!(kept.order_indexes_rows, "the entries' rows are known");
        self.spawn(layered, |job| {
            let from = &mut job.kept;
            from.entries = Some(Arc::clone(&kept.entries));
            kept.entry_rows(&mut from.rows);
            from.layers.clone_from(&kept.layers);
        });
    }

    /// Waits until the build last started, if it runs, has begun on the thread, so that the next update
    /// takes it in rather than dropping it: for tests of the builds' pace, which the scheduling of the
    /// test threads must not change.
    #[cfg(test)]
    pub(super) fn wait_until_begun(&self) {
        if let (true, BuildThreadState::Running(thread)) = (self.running, &self.thread) {
            // Bounded, so that a thread that ended fails the test rather than hanging it.
            let deadline = Instant::now() + Duration::from_secs(10);
            while self.pending.is_none()
                && !thread.has_begun(self.started)
                && Instant::now() < deadline
            {
                std::thread::yield_now();
            }
        }
    }

    /// How many builds have started so far: an update that compares it before and after its broad
    /// phase knows whether it started one.
    pub(super) fn started_count(&self) -> u64 {
        self.started
    }

    /// Hands the build to the thread (`build_thread.rs`), after `fill` has handed it its colliders.
    fn spawn(&mut self, layered: bool, fill: impl FnOnce(&mut Job)) {
        if cfg!(target_arch = "wasm32") || self.running || AsyncComputeTaskPool::try_get().is_none()
        {
            return;
        }
        self.take_back_dropped();
        self.start_thread();
        if !matches!(self.thread, BuildThreadState::Running(_)) {
            return;
        }
        let mut job = self.idle.take().unwrap_or_default();
        job.layered = layered;
        fill(&mut job);
        self.started += 1;
        self.running = true;
        if hands_over_at_the_end(self.between_updates, self.last_build) {
            self.pending = Some(job);
        } else {
            self.send(job);
        }
    }

    /// Hands `job`, the build last started, to the thread; where the thread cannot take it (two
    /// dropped builds wait for it yet), the update goes on as if none had started.
    fn send(&mut self, job: Box<Job>) {
        let BuildThreadState::Running(thread) = &self.thread else {
            return;
        };
        if let Err(job) = thread.send(self.started, job) {
            self.keep_unsent(job);
        }
    }

    /// Keeps the buffers of the build last started, which never went to the thread, for the next,
    /// letting go of the entries it shared: no build runs.
    fn keep_unsent(&mut self, mut job: Box<Job>) {
        job.kept.entries = None;
        self.idle = Some(job);
        self.running = false;
    }

    /// Marks the end of the update's pipeline (the end of the events stage), handing over the build
    /// this update started, if [`hands_over_at_the_end`] kept it until now.
    pub(super) fn hand_over(&mut self) {
        if let Some(job) = self.pending.take() {
            self.send(job);
        }
        self.pipeline_ended = Some(Instant::now());
    }

    /// Starts the thread that runs the builds, where it was not started.
    fn start_thread(&mut self) {
        if matches!(self.thread, BuildThreadState::NotStarted) {
            self.thread = match BuildThread::start("collision grid", run_job) {
                Ok(thread) => BuildThreadState::Running(thread),
                Err(_) => BuildThreadState::Unavailable,
            };
        }
    }

    /// Takes back the buffers of builds dropped unbegun that have finished since, as the idle ones
    /// where none are.
    fn take_back_dropped(&mut self) {
        let BuildThreadState::Running(thread) = &mut self.thread else {
            return;
        };
        loop {
            match thread.try_take() {
                Taken::Done(_, job) => {
                    self.idle.get_or_insert(job);
                }
                Taken::NoneYet => return,
                Taken::Ended => {
                    self.thread = BuildThreadState::Unavailable;
                    return;
                }
            }
        }
    }

    /// Waits for the running build, if it has begun, and returns its buffers: filled by the build, to
    /// be taken in or left for the next build. Drops a build that has not begun (the thread not yet
    /// run, or busy with one dropped before): the update goes on as if none had started.
    ///
    /// Called first thing in every update's broad phase, it also times the gap since the last
    /// pipeline ended. A build still waiting to be handed over (the last update's pipeline did not end)
    /// is dropped.
    pub(super) fn finish(&mut self) -> Option<&mut GridBuild> {
        if let Some(ended) = self.pipeline_ended.take() {
            self.between_updates = ended.elapsed();
        }
        if !self.running {
            return None;
        }
        if let Some(job) = self.pending.take() {
            self.keep_unsent(job);
            return None;
        }
        self.running = false;
        let BuildThreadState::Running(thread) = &mut self.thread else {
            return None;
        };
        loop {
            let taken = match thread.try_take() {
                Taken::NoneYet if thread.has_begun(self.started) => thread.take().ok_or(()),
                // Dropped: it comes back later, with its number.
                Taken::NoneYet => return None,
                Taken::Done(number, job) => Ok((number, job)),
                Taken::Ended => Err(()),
            };
            match taken {
                Ok((number, job)) if number == self.started => {
                    self.last_build = job.took;
                    return Some(&mut self.idle.insert(job).build);
                }
                // A build dropped before.
                Ok((_, job)) => {
                    self.idle.get_or_insert(job);
                }
                Err(()) => {
                    self.thread = BuildThreadState::Unavailable;
                    return None;
                }
            }
        }
    }
}

/// Runs a build on the thread that runs the builds.
fn run_job(job: &mut Box<Job>) {
    let begun = Instant::now();
    // Never split over the compute pool: the update waits for this build (`on_this_thread`).
    on_this_thread(|| {
        let Job {
            build,
            kept,
            layered,
            ..
        } = &mut **job;
        // Let go of the shared entries as soon as they are gathered.
        if let Some(entries) = kept.entries.take() {
            let target = GatherTarget {
                colliders: &mut build.gathered,
                layers: &mut build.gathered_layers,
            };
            gather_from_entries(&entries, &kept.rows, &kept.layers, target);
            build.gathered_rows = true;
        }
        build.run(true, *layered);
        // Indexed here, not by the update that takes the build in.
        build.moved.index(&build.entries);
    });
    job.took = begun.elapsed();
}

#[cfg(test)]
mod tests {
    use core::sync::atomic::{AtomicBool, Ordering};

    use bevy::ecs::entity::Entity;
    use bevy::math::Vec2;
    use bevy::math::bounding::Aabb2d;
    use bevy::tasks::TaskPool;

    use super::*;
    use crate::broad_phase::gather::GatheredCollider;
    use crate::geometry::{WorldRect, WorldShape};

    /// Holds every build on the thread while set.
    static HOLD: AtomicBool = AtomicBool::new(true);

    /// [`run_job`], once [`HOLD`] is released.
    fn run_job_when_released(job: &mut Box<Job>) {
        while HOLD.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        run_job(job);
    }

    /// `count` squares of side 2 in a row, 3 apart: a build of them has `count` entries.
    fn fill_squares(build: &mut GridBuild, count: u32) {
        build.gathered = (0..count)
            .map(|index| {
                let center = Vec2::new(3.0 * index as f32, 0.0);
                GatheredCollider {
                    entry: ColliderEntry {
                        entity: Entity::from_raw_u32(index).unwrap(),
                        shape: WorldShape::from(WorldRect {
                            center,
                            half_size: Vec2::ONE,
                        }),
                    },
                    aabb: Aabb2d::new(center, Vec2::ONE),
                }
            })
            .collect();
    }

    #[test]
    fn a_build_not_begun_is_dropped_and_the_next_taken_is_the_last_started() {
        AsyncComputeTaskPool::get_or_init(TaskPool::default);
        let thread = BuildThread::start("test grid build", run_job_when_released).unwrap();
        let mut background = BackgroundBuild {
            thread: BuildThreadState::Running(thread),
            ..BackgroundBuild::default()
        };
        // The first build begins and is held; an update dropped it (as if it had not begun in time).
        background.start(false, |build| fill_squares(build, 1));
        let BuildThreadState::Running(thread) = &background.thread else {
            unreachable!("the thread was started");
        };
        while !thread.has_begun(1) {
            std::thread::yield_now();
        }
        background.running = false;
        // The second waits behind it: not begun, it is dropped, and its buffers are with the thread.
        background.start(false, |build| fill_squares(build, 2));
        assert_eq!(background.started, 2);
        assert!(
            background.finish().is_none(),
            "a build not begun is dropped"
        );
        assert!(!background.running && background.idle.is_none());
        assert!(background.finish().is_none(), "nothing runs");
        // Released, the thread runs both dropped builds and then the next started: whichever the
        // update finds, it takes in only the last one started.
        HOLD.store(false, Ordering::SeqCst);
        let mut taken = None;
        for count in 3..200 {
            background.start(false, |build| fill_squares(build, count));
            std::thread::sleep(std::time::Duration::from_millis(1));
            if let Some(build) = background.finish() {
                taken = Some((count, build.entries.len()));
                break;
            }
        }
        let (count, entries) = taken.expect("a build was taken in");
        assert_eq!(
            entries, count as usize,
            "the build taken in is the last one started"
        );
        // One that has begun is waited for.
        background.start(false, |build| fill_squares(build, 7));
        let BuildThreadState::Running(thread) = &background.thread else {
            unreachable!("the thread runs");
        };
        while !thread.has_begun(background.started) {
            std::thread::yield_now();
        }
        let build = background
            .finish()
            .expect("a build that began is waited for");
        assert_eq!(build.entries.len(), 7);
    }

    #[test]
    fn a_build_goes_over_at_the_pipelines_end_where_the_next_update_leaves_it_twice_its_time() {
        let ms = Duration::from_millis;
        assert!(
            hands_over_at_the_end(ms(16), ms(3)),
            "a game at 60 frames a second"
        );
        assert!(hands_over_at_the_end(ms(6), ms(3)));
        assert!(!hands_over_at_the_end(ms(5), ms(3)));
        // The runner's back-to-back updates on W2.
        let us = Duration::from_micros;
        assert!(!hands_over_at_the_end(us(600), us(1_100)));
        assert!(
            !hands_over_at_the_end(ms(16), Duration::ZERO),
            "no build timed yet"
        );
    }

    #[test]
    fn a_build_kept_for_the_pipelines_end_goes_then_or_is_dropped_if_the_end_never_came() {
        AsyncComputeTaskPool::get_or_init(TaskPool::default);
        // Updates that leave a build four times what it took.
        let mut background = BackgroundBuild {
            between_updates: Duration::from_millis(4),
            last_build: Duration::from_millis(1),
            ..BackgroundBuild::default()
        };
        background.start(false, |build| fill_squares(build, 3));
        assert!(background.pending.is_some() && background.running);
        // The pipeline did not end (no events stage): the next update drops the build.
        assert!(background.finish().is_none());
        assert!(!background.running && background.pending.is_none());
        assert!(background.idle.is_some(), "its buffers stay for the next");
        background.start(false, |build| fill_squares(build, 5));
        background.hand_over();
        assert!(background.pending.is_none() && background.running);
        let BuildThreadState::Running(thread) = &background.thread else {
            unreachable!("the thread was started with the first build");
        };
        while !thread.has_begun(background.started) {
            std::thread::yield_now();
        }
        let build = background.finish().expect("handed over, begun, waited for");
        assert_eq!(build.entries.len(), 5);
        assert!(!background.last_build.is_zero(), "timed on the thread");
        assert_ne!(
            background.between_updates,
            Duration::from_millis(4),
            "timed anew from the pipeline's end"
        );
    }

    #[test]
    fn a_build_starts_at_the_last_ones_age_or_when_a_sixty_fourth_of_the_room_is_taken_and_16_left()
    {
        // Whether a sample shows colliders about to leave their boxes: here, they are.
        let soon = || true;
        // Below SIZES, never.
        assert!(!should_start(100, 100, 0, 9, 5, soon));
        assert!(!should_start(511, 511, 0, 9, 5, soon));
        assert!(should_start(512, 0, 0, 9, 5, soon));
        assert!(should_start(1_000_000, 0, 0, 9, 5, soon));
        // 1,000 entries leave room for 125 moves, a sixty-fourth of which is 2 colliders: the first
        // sign of a wave waits for 16.
        assert!(!should_start(1_000, 15, 0, 1, 0, soon));
        assert!(should_start(1_000, 16, 0, 1, 0, soon));
        // 25,600 entries leave room for 3,200 moves: the build starts from the 51st.
        assert!(!should_start(25_600, 0, 0, 3, 0, soon));
        assert!(!should_start(25_600, 50, 0, 3, 0, soon));
        assert!(should_start(25_600, 51, 0, 3, 0, soon));
        assert!(should_start(25_600, 3_200, 0, 3, 0, soon));
        // The last build was kept by 5 updates and not by the sixth: this one starts the next build on
        // its fifth update (four kept it before), whatever moved, for the sixth to take in.
        assert!(!should_start(25_600, 0, 0, 3, 5, soon));
        assert!(should_start(25_600, 0, 0, 4, 5, soon));
        assert!(should_start(25_600, 0, 0, 9, 5, soon));
        // As old as the last, but no sampled collider about to leave: the colliders slowed, and the
        // build waits for the first sign of escapes. Those start it whatever the sample.
        let not_soon = || false;
        assert!(!should_start(25_600, 0, 0, 4, 5, not_soon));
        assert!(!should_start(25_600, 50, 0, 9, 5, not_soon));
        assert!(should_start(25_600, 51, 0, 9, 5, not_soon));
        // 100 colliders come or go an update, with room for 3,200. On the 29th update, 2,900 came or
        // went, and 3 updates more take the 300 left; on the 30th, 3,000, and 3 more take more.
        assert!(!should_start(25_600, 0, 2_900, 28, 0, not_soon));
        assert!(should_start(25_600, 0, 3_000, 29, 0, not_soon));
        // Those that came or went do not count as escaped: 50 escaped are too few to start it.
        assert!(!should_start(25_600, 50, 1_000, 9, 0, not_soon));
    }

    /// The packed box of the square of half side `half` around `center`.
    fn square(center: Vec2, half: f32) -> Bounds {
        Bounds::of(&Aabb2d::new(center, Vec2::splat(half)))
    }

    #[test]
    fn the_sample_shows_a_collider_leaving_within_the_lead_at_the_pace_it_went() {
        // Boxes of half side 1 grown by 0.1, each having gone `went` to the right in 2 updates.
        let margin = 0.1;
        let boxes = |went: f32| {
            let grown: Vec<Bounds> = (0..200)
                .map(|k| square(Vec2::new(k as f32 * 5.0, 0.0), 1.0 + margin))
                .collect();
            let now: Vec<Bounds> = (0..200)
                .map(|k| square(Vec2::new(k as f32 * 5.0 + went, 0.0), 1.0))
                .collect();
            (grown, now)
        };
        let leaving = |went: f32, age: usize| {
            let (grown, now) = boxes(went);
            sample_shows_leaving_soon(&now, |slot| Some(grown[slot]), margin, age)
        };
        // Gone 0.05 in 2 updates: 0.05 left, 2 updates at 0.025 an update.
        assert!(leaving(0.05, 2));
        // Gone 0.03 in 2 updates: 0.07 left, 4.7 updates at 0.015 an update.
        assert!(!leaving(0.03, 2));
        assert!(leaving(0.03, 1), "0.07 left at 0.03 an update: 2.3 updates");
        assert!(
            !leaving(0.01, 2),
            "0.09 left at 0.005 an update: 18 updates"
        );
        assert!(!leaving(0.0, 2), "still");
        assert!(leaving(-0.05, 2), "going left, by its left side");
        // A sampled collider that left (its box nowhere, as the moved ones) shows it: the sample takes
        // every third of 200 slots from the first, slot 3 among them.
        let (grown, mut now) = boxes(0.0);
        now[3] = Bounds::NOWHERE;
        assert!(sample_shows_leaving_soon(
            &now,
            |slot| Some(grown[slot]),
            margin,
            2
        ));
        // Unless it is gone.
        assert!(!sample_shows_leaving_soon(
            &now,
            |slot| (slot != 3).then(|| grown[slot]),
            margin,
            2
        ));
        assert!(!sample_shows_leaving_soon(
            &[],
            |slot| Some(grown[slot]),
            margin,
            2
        ));
    }

    #[test]
    fn a_build_started_with_more_than_an_eighth_of_the_room_taken_came_late() {
        // 25,600 entries leave room for 3,200 moves: an eighth of it is 400.
        assert!(!started_late(25_600, 0));
        assert!(!started_late(25_600, 400));
        assert!(started_late(25_600, 401));
        assert!(started_late(25_600, 3_200));
        // 1,000 entries leave room for 125 moves: the fewest escapes that start a build at the first
        // sign of a wave, 16, take more than an eighth of it.
        assert!(!started_late(1_000, 15));
        assert!(started_late(1_000, START_FLOOR));
    }
}
