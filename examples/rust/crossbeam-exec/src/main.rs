//! Runs a workload on the crossbeam-deque work-stealing executor and writes
//! its trace (format v1.1, order "intervals") for `verify check`.
//!
//!     crossbeam-exec [--workers N] [--tasks N] [--steps N] [--fanout K] [--seed N] [--bug] [--fifo] [--steal-batch] [--streaming] [--out FILE]
//!
//! The recorder is buffered (binary records on the one shared clock that
//! `order: intervals` needs, the lines written at the end);
//! `--streaming` merges and writes them as the run goes.
//!
//! The workload: root tasks spawned from outside; each step of a root either
//! yields (woken during its own poll: NOTIFIED, re-queued), spawns a child
//! from the task and awaits it (the child yields a few times and fires a
//! signal: a wake from a worker thread), or awaits a signal fired by a thread
//! outside the executor (a wake from outside, sometimes twice: coalesced or
//! late wakes). With --bug the executor's wake has no queued flag.
//! `--fanout K` spawns K children per spawning step (default 1), `--fifo`
//! makes the local queues FIFO at the owner's end, `--steal-batch` steals
//! with `steal_batch_and_pop` (header `steal-half`).
//!
//! With `--steal-batch` from LIFO deques the header says `steal-last`:
//! crossbeam-deque 0.8.1 steals such a batch one task at a time and runs
//! the last it took. With `--fifo` it takes the batch with one CAS (its
//! size, half the victim's tasks rounded up and at most 32, from a length
//! read before it) and runs the first; the checker leaves that size open
//! until later takes show it (the thief's, or a take behind the batch
//! from the victim's deque). Measured (`--workers 4 --tasks 100 --steps
//! 10 --fanout 6`, `ROWS=batch RUNS=100 bash examples/rust/run.sh`): LIFO
//! and FIFO 0 of 100 flagged, `--bug` caught 100 of 100 both ways.
//!

mod exec;

use common::{yield_now, Args, Rng, Signal, Wait};
use exec::{Exec, Shape, Shared};
use execspec_trace::{Header, Order, Recorder};
use std::io;
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Instant;

async fn child(yields: u64, done: Arc<Signal>) {
    for _ in 0..yields {
        yield_now().await;
    }
    done.fire(false);
}

async fn root(ex: Arc<Shared>, outside: mpsc::Sender<(Arc<Signal>, bool)>, steps: u64, fanout: u64, seed: u64) {
    let mut rng = Rng::new(seed);
    for _ in 0..steps {
        match rng.next() % 3 {
            0 => yield_now().await,
            1 => {
                // fanout children at once (more than one fills local queues).
                let mut ss = Vec::new();
                for _ in 0..fanout {
                    let s = Arc::new(Signal::default());
                    let yields = rng.next() % 3;
                    ex.spawn(child(yields, Arc::clone(&s)));
                    ss.push(s);
                }
                for s in ss {
                    Wait(s).await;
                }
            }
            _ => {
                let s = Arc::new(Signal::default());
                let twice = rng.next() % 4 == 0;
                outside.send((Arc::clone(&s), twice)).unwrap();
                Wait(s).await;
            }
        }
    }
}

fn main() {
    common::run("crossbeam-exec", run_main);
}

fn run_main() -> io::Result<()> {
    let args = Args::from_env("crossbeam-exec");
    let workers = args.num("--workers", 4) as u32;
    let tasks = args.num("--tasks", 20);
    let steps = args.num("--steps", 40);
    let seed = args.seed();
    let bug = args.flag("--bug");
    let fanout = args.num("--fanout", 1).max(1);
    let shape = Shape { workers, fifo: args.flag("--fifo"), batch: args.flag("--steal-batch") };
    let out = args.out()?;
    let name = if bug { "crossbeam-worksteal/no-queued-flag" } else { "crossbeam-worksteal" };
    let mut header = Header::new(name, workers, "worksteal")
        .order(Order::Intervals)
        .config("owner-lifo", if shape.fifo { 0 } else { 1 })
        .config("steal-half", if shape.batch { 1 } else { 0 })
        // From a LIFO deque crossbeam's batch steal runs the last task it took.
        .config("steal-last", if shape.batch && !shape.fifo { 1 } else { 0 });
    if shape.batch {
        // crossbeam-deque's MAX_BATCH: a batch takes at most 32 tasks.
        header = header.config("steal-max", 32);
    }
    let rec = Recorder::with_options(header, out, args.recorder_options());
    let start = Instant::now();
    let ex = Exec::new(shape, rec.clone(), bug);

    // The thread outside the executor that fires signals.
    let (tx, rx) = mpsc::channel::<(Arc<Signal>, bool)>();
    let firer = thread::spawn(move || {
        for (s, twice) in rx {
            s.fire(twice);
        }
    });
    for r in 0..tasks {
        ex.shared.spawn(root(Arc::clone(&ex.shared), tx.clone(), steps, fanout, seed.wrapping_add(r * 7919)));
    }
    drop(tx);
    // The firer ends when the last task has dropped its sender, so after
    // every task is done; it may still wake tasks then (late wakes). The
    // executor's stop is recorded after that: nothing follows a stop.
    firer.join().unwrap();
    let polls = ex.join();
    let sum = rec.finish()?;
    eprintln!(
        "crossbeam-exec: {} workers, {} root tasks x {} steps, seed {}{}: {} polls, {} events in {:.3}s (merge window up to {} events)",
        workers,
        tasks,
        steps,
        seed,
        if bug { ", bug no-queued-flag" } else { "" },
        polls,
        sum.events,
        start.elapsed().as_secs_f64(),
        sum.max_pending
    );
    Ok(())
}
