//! The plugin's own thread for the builds in the background (`background.rs`), which gives way to the
//! game's threads.
//!
//! A build handed to a thread that sleeps wakes it, and on a machine with few cores the scheduler may
//! run the woken thread at once on the core of the update that woke it, which then waits for the whole
//! build: on workload W1 at 1,000 colliders with updates 1/60 s apart (`collision_bench --fps 60`),
//! handing the build to Bevy's async compute pool took 7 to 16 µs at the median but 92 to 94 µs at the
//! 90th percentile, and the p99 of the pipeline was 3.4 to 4.5 times its median. This thread is the
//! plugin's own so that, on Linux, it can run as a batch thread (`SCHED_BATCH`), which the scheduler
//! never lets preempt the thread that woke it: it runs the build on the other core, or once the update
//! is done. The hand-over then took 4 to 5 µs at the median and 6 to 7 µs at the 90th percentile (three
//! alternating runs of 800 updates each), and the pipeline's p99 fell by half. The thread also leaves
//! Bevy's async compute pool to the game's tasks, and a pool busy with them no longer holds the builds
//! back.
//!
//! The thread ends when its [`BuildThread`] is dropped, once it has finished the build it runs.

use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};

/// How many jobs wait for the thread at most, and how many finished ones wait for their owner: the
/// running build and one its owner dropped unbegun. Bounded channels allocate only when made.
const QUEUE: usize = 2;

/// A thread that runs `work` on each job it is sent, numbered by the sender, and sends the job back
/// when done.
pub(super) struct BuildThread<T> {
    jobs: SyncSender<(u64, T)>,
    /// In a mutex only so that the owner can be shared between threads (a Bevy resource); taken
    /// through `&mut`, it is never locked.
    done: Mutex<Receiver<(u64, T)>>,
    /// The greatest number of the jobs that began, which each sets when it begins.
    begun: Arc<AtomicU64>,
}

/// What [`BuildThread::try_take`] found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Taken<T> {
    /// A finished job and its number.
    Done(u64, T),
    /// No job has finished since the last taken.
    NoneYet,
    /// The thread has ended: it panicked.
    Ended,
}

impl<T: Send + 'static> BuildThread<T> {
    /// Starts the thread, named `name`, which runs `work` on each job; fails where the system cannot
    /// start a thread.
    pub(super) fn start(name: &str, work: fn(&mut T)) -> std::io::Result<Self> {
        let (jobs, to_run) = mpsc::sync_channel::<(u64, T)>(QUEUE);
        let (send_done, done) = mpsc::sync_channel(QUEUE);
        let begun = Arc::new(AtomicU64::new(0));
        let thread_begun = Arc::clone(&begun);
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                give_way_to_the_game();
                // Ends when the owner has dropped the sender, or the receiver of finished jobs.
                while let Ok((number, mut job)) = to_run.recv() {
                    thread_begun.fetch_max(number, Ordering::AcqRel);
                    work(&mut job);
                    if send_done.send((number, job)).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Self {
            jobs,
            done: Mutex::new(done),
            begun,
        })
    }

    /// Hands `job` to the thread as number `number`, greater than every number before; gives it back
    /// where the queue is full or the thread has ended.
    pub(super) fn send(&self, number: u64, job: T) -> Result<(), T> {
        self.jobs
            .try_send((number, job))
            .map_err(|error| match error {
                TrySendError::Full((_, job)) | TrySendError::Disconnected((_, job)) => job,
            })
    }

    /// Whether the job of number `number` has begun (or a later one).
    pub(super) fn has_begun(&self, number: u64) -> bool {
        self.begun.load(Ordering::Acquire) >= number
    }

    /// The next finished job, without waiting.
    pub(super) fn try_take(&mut self) -> Taken<T> {
        match self.done_receiver().try_recv() {
            Ok((number, job)) => Taken::Done(number, job),
            Err(TryRecvError::Empty) => Taken::NoneYet,
            Err(TryRecvError::Disconnected) => Taken::Ended,
        }
    }

    /// The next finished job, waiting for it; `None` where the thread has ended (it panicked).
    pub(super) fn take(&mut self) -> Option<(u64, T)> {
        self.done_receiver().recv().ok()
    }

    fn done_receiver(&mut self) -> &mut Receiver<(u64, T)> {
        self.done.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> core::fmt::Debug for BuildThread<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BuildThread")
            .field("begun", &self.begun.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Makes this thread a batch thread on Linux (`SCHED_BATCH`): it still gets its fair share of the
/// processor, but waking it never preempts the thread that woke it. Elsewhere it does nothing.
fn give_way_to_the_game() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: 0 names the calling thread, and `param` outlives the call. Should the call fail,
        // the thread keeps the normal policy, which only costs the updates time.
        unsafe {
            libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
        }
    }
}

#[cfg(test)]
mod tests {
    use core::sync::atomic::AtomicBool;

    use super::*;

    /// Adds one, and records the thread's scheduling policy.
    fn add_one(job: &mut (u32, i32)) {
        job.0 += 1;
        #[cfg(target_os = "linux")]
        {
            // SAFETY: asks for the calling thread's policy.
            job.1 = unsafe { libc::sched_getscheduler(0) };
        }
    }

    #[test]
    fn jobs_come_back_done_in_order_and_the_thread_gives_way_on_linux() {
        let mut thread = BuildThread::start("test build", add_one).unwrap();
        assert_eq!(thread.try_take(), Taken::NoneYet);
        assert_eq!(thread.send(1, (10, -1)), Ok(()));
        assert_eq!(thread.send(2, (20, -1)), Ok(()));
        let (first, second) = (thread.take().unwrap(), thread.take().unwrap());
        assert_eq!((first.0, first.1.0), (1, 11));
        assert_eq!((second.0, second.1.0), (2, 21));
        assert!(thread.has_begun(2) && thread.has_begun(1));
        assert!(!thread.has_begun(3));
        #[cfg(target_os = "linux")]
        assert_eq!(second.1.1, libc::SCHED_BATCH);
        assert_eq!(thread.try_take(), Taken::NoneYet);
    }

    static HOLD: AtomicBool = AtomicBool::new(true);

    /// Waits while [`HOLD`] is set, then adds one.
    fn held_add_one(job: &mut u32) {
        while HOLD.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        *job += 1;
    }

    #[test]
    fn a_full_queue_gives_the_job_back_and_a_held_job_has_begun_the_next_not() {
        let mut thread = BuildThread::start("test held", held_add_one).unwrap();
        assert_eq!(thread.send(1, 10), Ok(()));
        while !thread.has_begun(1) {
            std::thread::yield_now();
        }
        // One runs, held; two wait; the fourth finds the queue full.
        assert_eq!(thread.send(2, 20), Ok(()));
        assert_eq!(thread.send(3, 30), Ok(()));
        assert_eq!(thread.send(4, 40), Err(40));
        assert!(!thread.has_begun(2));
        assert_eq!(thread.try_take(), Taken::NoneYet);
        HOLD.store(false, Ordering::SeqCst);
        assert_eq!(thread.take(), Some((1, 11)));
        assert_eq!(thread.take(), Some((2, 21)));
        assert_eq!(thread.take(), Some((3, 31)));
    }

    fn panics(_: &mut u32) {
        panic!("a build that fails");
    }

    #[test]
    fn a_thread_that_panicked_has_ended() {
        let mut thread = BuildThread::start("test panics", panics).unwrap();
        assert_eq!(thread.send(1, 10), Ok(()));
        assert_eq!(thread.take(), None);
        assert_eq!(thread.try_take(), Taken::Ended);
        assert_eq!(thread.send(2, 20), Err(20));
    }
}
