//! The machine's own noise: the median and p99 of a computation that does the same work every frame,
//! timed as the workload runner times the collision pipeline. Whatever spread it shows, no code can
//! remove from the pipeline's figures on the same machine: it is the floor under the aim that the p99
//! stay within 1.5 times the median.
//!
//! ```text
//! cargo run --release -p bevy_rect_collision_benches --bin machine_noise
//! cargo run --release -p bevy_rect_collision_benches --bin machine_noise -- --frames 200 --rounds 5
//! cargo run --release -p bevy_rect_collision_benches --bin machine_noise -- --frames 600 --fps 60
//! cargo run --release -p bevy_rect_collision_benches --bin machine_noise -- --work-us 17,176
//! ```
//!
//! The work is a chain of integer steps, each waiting on the one before, with nothing read from or
//! written to memory: its time does not depend on caches, branches or data, only on the processor
//! being left to run it. It is sized by [`FRAME_SIZES`] or `--work-us`, to take as long as the
//! pipeline does on the workloads it stands for, and timed two ways:
//! - **alone**: the work back to back on one thread, the clock read around each frame's work;
//! - **in four systems**: an app of `MinimalPlugins` whose four systems, chained in `PostUpdate` as the
//!   plugin's stages are, each do a quarter of the work and time themselves; a frame's figure is the
//!   sum of the four, as the pipeline's is the sum of its stages' own times.
//!
//! Each setting runs `--frames F` frames (200 unless told) after a warm-up, `--rounds R` times (5
//! unless told), one run of each size and setting a round; the runner prints each run and then the
//! medians over the rounds, as `collision_bench --rounds` takes them. Beside the p99 it gives the share of
//! frames past 1.5 times the median: the p99 meets the aim while that share stays at or below 1%, and
//! what the machine takes of that 1% is not left to the pipeline. `--compute-threads N` gives Bevy's
//! compute task pool N threads. `--fps N` starts each frame 1/N s after the one before, sleeping in
//! between, as the workload runner's `--fps` paces its updates: the floor under the p99 at a game's
//! pace, where the cores idle between frames. `--work-us A,B,...` sizes the work in microseconds
//! instead, for instance to the pipeline's own medians on the machine at hand.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy_rect_collision_benches::{
    FramePacer, compute_threads_flag, count_or_exit, flag_value, frame_interval_flag, median_of,
    median_p99, share_past_bound, task_pool_plugin,
};

/// The frame sizes the work is made to take by default, in microseconds, with the workload they stand
/// for: sizes of the pipeline's medians on W1 on a slower machine (`--work-us` sets others).
const FRAME_SIZES: [(f64, &str); 3] = [
    (36.0, "W1 at 1,000"),
    (311.0, "W1 at 10,000"),
    (5330.0, "W1 at 100,000"),
];

/// The frame sizes `--work-us A,B,...` asks for on the command line `args`, in microseconds, or
/// [`FRAME_SIZES`] without the flag; an empty list, or a size that is not a positive number, is an
/// error with a message.
fn frame_sizes(args: &[String]) -> Result<Vec<(f64, &'static str)>, String> {
    if !args.iter().any(|arg| arg == "--work-us") {
        return Ok(FRAME_SIZES.to_vec());
    }
    let list = flag_value(args, "--work-us").unwrap_or_default();
    list.split(',')
        .map(|size| match size.trim().parse::<f64>() {
            Ok(micros) if micros.is_finite() && micros > 0.0 => Ok((micros, "--work-us")),
            _ => Err(format!(
                "--work-us takes sizes in microseconds above 0, separated by commas, not {size:?}"
            )),
        })
        .collect()
}

/// The systems the work is split over in the app, one for each of the pipeline's stages.
const SYSTEMS: u64 = 4;

const WARMUP_FRAMES: usize = 10;

/// Runs `steps` steps of a chain in which each step waits on the one before and no step touches memory:
/// the time it takes varies only with the machine, never with the data.
fn fixed_work(steps: u64) -> u64 {
    let mut state = black_box(0x9e37_79b9_7f4a_7c15_u64);
    for _ in 0..black_box(steps) {
        state = state
            .wrapping_mul(0x5851_f42d_4c95_7f2d)
            .wrapping_add(0x1405_7b7e_f767_814f);
        state ^= state >> 29;
    }
    black_box(state)
}

/// How many steps of [`fixed_work`] take a microsecond here: the median of 21 timed runs of a million
/// steps, so that a slow moment during the measure does not size the work.
fn steps_per_microsecond() -> f64 {
    const STEPS: u64 = 1_000_000;
    let mut samples: Vec<Duration> = (0..21)
        .map(|_| {
            let start = Instant::now();
            fixed_work(STEPS);
            start.elapsed()
        })
        .collect();
    let (median_ms, _) = median_p99(&mut samples);
    STEPS as f64 / (median_ms * 1e3)
}

/// The steps each of the app's systems runs a frame, and what the systems that ran in the last frame
/// took and how many they were.
#[derive(Resource)]
struct FrameWork {
    steps_per_system: u64,
    took: Duration,
    systems_run: u64,
}

/// One of the app's four systems: a quarter of the frame's work, timed inside the system as the
/// plugin's stages time themselves.
fn work_a_quarter(mut work: ResMut<FrameWork>) {
    let start = Instant::now();
    fixed_work(work.steps_per_system);
    work.took += start.elapsed();
    work.systems_run += 1;
}

/// The frame's figures of `frames` frames of `steps` steps, the work done on this thread, each frame
/// `interval` after the one before or back to back.
fn run_alone(steps: u64, frames: usize, interval: Option<Duration>) -> Vec<Duration> {
    let mut pacer = FramePacer::new(interval);
    for _ in 0..WARMUP_FRAMES {
        pacer.wait_for_next_frame();
        fixed_work(steps);
    }
    (0..frames)
        .map(|_| {
            pacer.wait_for_next_frame();
            let start = Instant::now();
            fixed_work(steps);
            start.elapsed()
        })
        .collect()
}

/// The frame's figures of `frames` updates of an app whose four chained systems share `steps` steps,
/// each update `interval` after the one before or back to back.
fn run_in_systems(
    steps: u64,
    frames: usize,
    interval: Option<Duration>,
    compute_threads: Option<usize>,
) -> Vec<Duration> {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins.set(task_pool_plugin(compute_threads)))
        .insert_resource(FrameWork {
            steps_per_system: steps / SYSTEMS,
            took: Duration::ZERO,
            systems_run: 0,
        })
        .add_systems(
            PostUpdate,
            (
                work_a_quarter,
                work_a_quarter,
                work_a_quarter,
                work_a_quarter,
            )
                .chain(),
        );
    app.finish();
    app.cleanup();
    let mut pacer = FramePacer::new(interval);
    let mut frame = |app: &mut App| {
        pacer.wait_for_next_frame();
        let mut work = app.world_mut().resource_mut::<FrameWork>();
        work.took = Duration::ZERO;
        work.systems_run = 0;
        app.update();
        let work = app.world().resource::<FrameWork>();
        assert_eq!(work.systems_run, SYSTEMS, "every system runs once a frame");
        work.took
    };
    for _ in 0..WARMUP_FRAMES {
        frame(&mut app);
    }
    (0..frames).map(|_| frame(&mut app)).collect()
}

/// How the work is timed.
#[derive(Clone, Copy)]
enum Timing {
    /// Back to back on this thread ([`run_alone`]).
    Alone,
    /// In an app's four chained systems ([`run_in_systems`]).
    InFourSystems,
}

impl Timing {
    const ALL: [Self; 2] = [Self::Alone, Self::InFourSystems];

    fn name(self) -> &'static str {
        match self {
            Self::Alone => "alone",
            Self::InFourSystems => "in four systems",
        }
    }
}

/// A run's median and p99 in milliseconds, and the share of its frames past the aim's bound.
#[derive(Clone, Copy)]
struct Spread {
    median: f64,
    p99: f64,
    /// The share of frames over 1.5 times the median ([`share_past_bound`]): the p99 meets the aim
    /// while it stays at or below 1%.
    past: f64,
}

impl Spread {
    fn of(mut samples: Vec<Duration>) -> Self {
        let (median, p99) = median_p99(&mut samples);
        let past = share_past_bound(&samples, median);
        Self { median, p99, past }
    }

    fn ratio(self) -> f64 {
        self.p99 / self.median
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let count = |flag: &str, default: usize, least: usize| {
        count_or_exit("machine_noise", &args, flag, default, least)
    };
    let frames = count("--frames", 200, 1);
    let rounds = count("--rounds", 5, 1);
    let compute_threads = compute_threads_flag("machine_noise", &args);
    let interval = frame_interval_flag("machine_noise", &args);
    let frame_sizes = frame_sizes(&args).unwrap_or_else(|error| {
        eprintln!("machine_noise: {error}");
        std::process::exit(2);
    });

    let per_microsecond = steps_per_microsecond();
    println!(
        "fixed work: {per_microsecond:.0} steps a microsecond here; {frames} frames a run, {rounds} \
         rounds"
    );
    if let Some(interval) = interval {
        println!(
            "each frame starts {:.2} ms after the one before (--fps), as in a game",
            interval.as_secs_f64() * 1e3
        );
    }
    // runs[size][timing]: one spread a round.
    let mut runs = vec![vec![Vec::<Spread>::new(); Timing::ALL.len()]; frame_sizes.len()];
    for round in 1..=rounds {
        for (&(micros, workload), runs) in frame_sizes.iter().zip(&mut runs) {
            let steps = (micros * per_microsecond).round() as u64;
            for (timing, runs) in Timing::ALL.into_iter().zip(runs) {
                let samples = match timing {
                    Timing::Alone => run_alone(steps, frames, interval),
                    Timing::InFourSystems => {
                        run_in_systems(steps, frames, interval, compute_threads)
                    }
                };
                let spread = Spread::of(samples);
                println!(
                    "  round {round}: {micros:>6} µs of work ({workload}), {:<15} median \
                     {:8.4} ms   p99 {:8.4} ms   p99 / median {:.2}   past 1.5 times {:4.2}%",
                    timing.name(),
                    spread.median,
                    spread.p99,
                    spread.ratio(),
                    100.0 * spread.past,
                );
                runs.push(spread);
            }
        }
    }
    println!(
        "\nmedians over {rounds} rounds (the p99 / median's lowest and highest run in brackets):"
    );
    println!(
        "| work | stands for | timed | median | p99 | p99 / median | past 1.5 times the median |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (&(micros, workload), runs) in frame_sizes.iter().zip(&runs) {
        for (timing, spreads) in Timing::ALL.into_iter().zip(runs) {
            let medians: Vec<f64> = spreads.iter().map(|s| s.median).collect();
            let p99s: Vec<f64> = spreads.iter().map(|s| s.p99).collect();
            let ratios: Vec<f64> = spreads.iter().map(|s| s.ratio()).collect();
            let pasts: Vec<f64> = spreads.iter().map(|s| 100.0 * s.past).collect();
            let (lowest, highest) = ratios
                .iter()
                .fold((f64::INFINITY, 0.0_f64), |(low, high), &r| {
                    (low.min(r), high.max(r))
                });
            println!(
                "| {micros} µs | {workload} | {} | {:.4} ms | {:.4} ms | {:.2} ({lowest:.2} to \
                 {highest:.2}) | {:.2}% |",
                timing.name(),
                median_of(medians),
                median_of(p99s),
                median_of(ratios),
                median_of(pasts),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_work_depends_only_on_its_step_count() {
        assert_eq!(fixed_work(1000), fixed_work(1000));
        assert_ne!(fixed_work(1000), fixed_work(1001));
    }

    #[test]
    fn work_sizes_come_from_the_flag_or_the_defaults() {
        let args = |line: &str| line.split(' ').map(String::from).collect::<Vec<_>>();
        let sizes = |line: &str| frame_sizes(&args(line));
        assert_eq!(sizes("noise").unwrap(), FRAME_SIZES.to_vec());
        let asked = sizes("noise --work-us 17,176.5").unwrap();
        assert_eq!(asked.iter().map(|s| s.0).collect::<Vec<_>>(), [17.0, 176.5]);
        assert!(sizes("noise --work-us 17,0").is_err());
        assert!(sizes("noise --work-us 17,,3").is_err());
        assert!(sizes("noise --work-us NaN").is_err());
        assert!(sizes("noise --work-us").is_err());
    }

    #[test]
    fn the_app_times_its_four_systems_every_frame() {
        // `run_in_systems` asserts that each frame ran the four systems once each.
        let samples = run_in_systems(4_000, 3, None, None);
        assert_eq!(samples.len(), 3);
        assert!(samples.iter().all(|took| *took > Duration::ZERO));
    }
}
