//! Two executors that poll tasks nobody woke, legally when they say so:
//!
//! * `busy`: a FIFO queue shared by the workers. A task whose poll returns
//!   Pending is polled again at once, in place, the first time, and then
//!   put back at the tail of the queue (a busy re-queue), whether or not
//!   anything woke it. Header: policy fifo, `spurious-polls: 1`.
//! * `slice`: a time-slice executor. A worker keeps polling the task it
//!   took, in place, while its slice (`--slice-us`, default 50) lasts; when
//!   it expires a task woken meanwhile is re-queued and one that was not is
//!   left waiting for its wake. Header: policy timeslice, `slice-us`,
//!   `spurious-polls: 1`, `time` on every poll.
//!
//! With `--forbid-spurious` the header declares `spurious-polls: 0` (the
//! executor is unchanged): `verify check` must flag the first spurious poll.
//!
//!     simple-exec busy|slice [--workers N] [--tasks N] [--steps N] [--slice-us N] [--seed N] [--forbid-spurious] [--streaming] [--out FILE]
//!
//! The recorder is deferred (binary records, the lines written at the end;
//! the seq of an event drawn under the queue's lock is above every tick
//! of an event that happened before it);
//! `--streaming` merges and writes them as the run goes.
//!
//! The queue is a Mutex<VecDeque>: seq is drawn inside its critical section
//! (order "seq"). Task state is the recorder's versioned `StateWord`:
//! load, tick, CAS, the tick redrawn when the CAS fails. A re-poll in place
//! records its poll-end and the next poll-begin with two consecutive ticks
//! drawn before one CAS, so no wake falls between them.

use common::{yield_now, Args, Signal, Wait};
use execspec_trace::state::{StateWord, DONE, NOTIFIED, QUEUED, RUNNING, WAITING};
use execspec_trace::{now_ns, Event, Header, Outcome, PollResult, Queue, Recorder, Source};
use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::task::{Context, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Busy,
    Slice,
}

struct Task {
    id: u64,
    state: StateWord,
    fut: Mutex<Option<BoxFuture>>,
    ex: Arc<Shared>,
}

struct Shared {
    kind: Kind,
    slice_ns: u64,
    queue: Mutex<VecDeque<Arc<Task>>>,
    cv: Condvar,
    rec: Recorder,
    live: AtomicUsize,
    closed: AtomicBool,
    polls: AtomicU64,
    spurious: AtomicU64,
}

thread_local! {
    static WORKER: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

impl Shared {
    fn time(&self) -> Option<u64> {
        (self.kind == Kind::Slice).then(now_ns)
    }

    fn spawn(self: &Arc<Self>, fut: impl Future<Output = ()> + Send + 'static) {
        let id = self.rec.new_task_id();
        let t = Arc::new(Task { id, state: StateWord::new(QUEUED), fut: Mutex::new(Some(Box::pin(fut))), ex: Arc::clone(self) });
        self.live.fetch_add(1, SeqCst);
        let w = WORKER.with(|w| w.get());
        let mut q = self.queue.lock().unwrap();
        q.push_back(t);
        self.rec.record(Event::spawn(id, w, Some(Queue::Global)));
        drop(q);
        self.cv.notify_one();
    }
}

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }
    fn wake_by_ref(self: &Arc<Self>) {
        let ex = &self.ex;
        let w = WORKER.with(|w| w.get());
        // The queue's lock first: a scheduled wake pushes inside it.
        let mut q = ex.queue.lock().unwrap();
        let mut op = ex.rec.op();
        let (tick, outcome) = self.state.wake(&mut op);
        let mut e = Event { seq: tick, ..Event::wake(self.id, w, Some(outcome)) };
        if outcome == Outcome::Scheduled {
            q.push_back(Arc::clone(self));
            e = e.with_queue(Queue::Global);
        }
        op.emit(e);
        drop(op);
        drop(q);
        ex.cv.notify_one();
    }
}

/// Polls t (taken by worker w) until it is done, re-queued or left waiting.
fn run(ex: &Arc<Shared>, w: u32, t: Arc<Task>) {
    let rec = &ex.rec;
    let mut slot = t.fut.lock().unwrap();
    let time = ex.time();
    let slice_start = time.unwrap_or(0);
    rec.record(Event { time, ..Event::poll_begin(t.id, w) });
    let waker = Waker::from(Arc::clone(&t));
    let mut in_place = 0u32;
    loop {
        ex.polls.fetch_add(1, SeqCst);
        let ready = slot.as_mut().unwrap().as_mut().poll(&mut Context::from_waker(&waker)).is_ready();
        if ready {
            *slot = None;
            let mut op = rec.op();
            let (tick, _, ()) = t.state.transition(&mut op, |_| (DONE, 1, ()));
            op.emit(Event { seq: tick, time: ex.time(), ..Event::poll_end(t.id, w, PollResult::Ready) });
            drop(op);
            if ex.live.fetch_sub(1, SeqCst) == 1 {
                ex.cv.notify_all();
            }
            return;
        }
        // Pending: decide, with the state word, what comes next.
        let mut q = ex.queue.lock().unwrap();
        let mut op = rec.op();
        // Re-polled in place (RUNNING: poll-end and the next poll-begin),
        // re-queued (QUEUED: poll-end and its requeue) or left waiting: two
        // ticks drawn before one CAS, so no wake falls between them.
        let mut time = None;
        let (tick, from, repoll) = t.state.transition(&mut op, |s| {
            time = ex.time();
            let woken = s == NOTIFIED;
            let repoll = match ex.kind {
                Kind::Busy => !woken && in_place == 0,
                Kind::Slice => time.unwrap() < slice_start + ex.slice_ns,
            };
            let next = if repoll {
                RUNNING
            } else if woken || ex.kind == Kind::Busy {
                QUEUED
            } else {
                WAITING
            };
            (next, 2, repoll)
        });
        let woken = from == NOTIFIED;
        op.emit(Event { seq: tick, time, ..Event::poll_end(t.id, w, PollResult::Pending) });
        let again = if repoll {
            op.emit(Event { seq: tick + 1, time: ex.time(), ..Event::poll_begin(t.id, w) });
            if !woken {
                ex.spurious.fetch_add(1, SeqCst);
            }
            true
        } else {
            if woken || ex.kind == Kind::Busy {
                if !woken {
                    ex.spurious.fetch_add(1, SeqCst);
                }
                q.push_back(Arc::clone(&t));
                op.emit(Event { seq: tick + 1, ..Event::requeue(t.id, w, Queue::Global) });
            }
            false
        };
        drop(op);
        drop(q);
        if !again {
            ex.cv.notify_one();
            return;
        }
        in_place += 1;
    }
}

fn work(ex: Arc<Shared>, w: u32) {
    // The worker's stop, at the end or while a panic unwinds the thread.
    let _stop = common::StopGuard { rec: ex.rec.clone(), worker: w };
    WORKER.with(|c| c.set(Some(w)));
    loop {
        let mut q = ex.queue.lock().unwrap();
        let t = loop {
            if let Some(t) = q.pop_front() {
                // QUEUED → RUNNING belongs to the take (the model's take is
                // that transition): a wake after it finds the task RUNNING.
                let mut op = ex.rec.op();
                let (tick, found) = t.state.take(&mut op);
                assert_eq!(found, QUEUED, "task {} taken in state {}", t.id, found);
                op.emit(Event { seq: tick, ..Event::take(t.id, w, Source::Global, None) });
                drop(op);
                break Some(t);
            }
            if ex.live.load(SeqCst) == 0 && ex.closed.load(SeqCst) {
                break None;
            }
            q = ex.cv.wait_timeout(q, Duration::from_millis(1)).unwrap().0;
        };
        drop(q);
        match t {
            Some(t) => run(&ex, w, t),
            None => break,
        }
    }
}

// The workload: yields, children awaited through a signal, signals fired
// by a thread outside the executor.

async fn root(ex: Arc<Shared>, outside: mpsc::Sender<Arc<Signal>>, steps: u64, mut seed: u64) {
    for _ in 0..steps {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        match (seed >> 33) % 3 {
            0 => yield_now().await,
            1 => {
                let s = Arc::new(Signal::default());
                let s2 = Arc::clone(&s);
                ex.spawn(async move {
                    yield_now().await;
                    s2.fire(false);
                });
                Wait(s).await;
            }
            _ => {
                let s = Arc::new(Signal::default());
                outside.send(Arc::clone(&s)).unwrap();
                Wait(s).await;
            }
        }
    }
}

fn main() {
    common::run("simple-exec", run_main);
}

fn run_main() -> io::Result<()> {
    let args = Args::from_env("simple-exec");
    let kind = match args.command() {
        Some("busy") => Kind::Busy,
        Some("slice") => Kind::Slice,
        _ => args.usage("usage: simple-exec busy|slice [--workers N] [--tasks N] [--steps N] [--slice-us N] [--seed N] [--forbid-spurious] [--out FILE]"),
    };
    let workers = args.num("--workers", 2) as u32;
    let tasks = args.num("--tasks", 10);
    let steps = args.num("--steps", 20);
    let slice_us = args.num("--slice-us", 50).max(1);
    let seed = args.seed();
    let forbid = args.flag("--forbid-spurious");
    let out = args.out()?;
    let spurious = if forbid { 0 } else { 1 };
    let header = match kind {
        Kind::Busy => Header::new("busy-fifo", workers, "fifo").config("spurious-polls", spurious),
        Kind::Slice => Header::new("timeslice", workers, "timeslice").config("slice-us", slice_us as i64).config("spurious-polls", spurious),
    };
    let rec = Recorder::with_options(header, out, args.recorder_options());
    let start = Instant::now();
    let ex = Arc::new(Shared {
        kind,
        slice_ns: slice_us * 1000,
        queue: Mutex::new(VecDeque::new()),
        cv: Condvar::new(),
        rec: rec.clone(),
        live: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
        polls: AtomicU64::new(0),
        spurious: AtomicU64::new(0),
    });
    let threads: Vec<_> = (0..workers)
        .map(|w| {
            let ex = Arc::clone(&ex);
            thread::spawn(move || work(ex, w))
        })
        .collect();
    let (tx, rx) = mpsc::channel::<Arc<Signal>>();
    let firer = thread::spawn(move || {
        for s in rx {
            thread::sleep(Duration::from_micros(20));
            s.fire(false);
        }
    });
    for r in 0..tasks {
        ex.spawn(root(Arc::clone(&ex), tx.clone(), steps, seed.wrapping_add(r * 7919)));
    }
    drop(tx);
    ex.closed.store(true, SeqCst);
    for h in threads {
        h.join().unwrap();
    }
    firer.join().unwrap();
    rec.stop(None);
    let sum = rec.finish()?;
    eprintln!(
        "simple-exec {}: {} workers, {} tasks x {} steps, seed {}: {} polls ({} spurious), {} events in {:.3}s",
        if kind == Kind::Busy { "busy" } else { "slice" },
        workers,
        tasks,
        steps,
        seed,
        ex.polls.load(SeqCst),
        ex.spurious.load(SeqCst),
        sum.events,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
