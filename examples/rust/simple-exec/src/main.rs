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
//!     simple-exec busy|slice [--workers N] [--tasks N] [--steps N] [--slice-us N] [--seed N] [--forbid-spurious] [--out FILE]
//!
//! The queue is a Mutex<VecDeque>: seq is drawn inside its critical section
//! (order "seq"). Task state is the crossbeam example's versioned state word:
//! load, tick, CAS, the tick redrawn when the CAS fails. A re-poll in place
//! records its poll-end and the next poll-begin with two consecutive ticks
//! drawn before one CAS, so no wake falls between them.

use execspec_trace::{now_ns, Event, Header, Outcome, PollResult, Queue, Recorder, Source};
use std::collections::VecDeque;
use std::future::Future;
use std::io::{self, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

const WAITING: u64 = 0;
const QUEUED: u64 = 1;
const RUNNING: u64 = 2;
const NOTIFIED: u64 = 3;
const DONE: u64 = 4;
const VERSION: u64 = 1 << 8;

fn st(word: u64) -> u64 {
    word & 0xff
}
fn to(word: u64, s: u64) -> u64 {
    ((word & !0xff) + VERSION) | s
}

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Busy,
    Slice,
}

struct Task {
    id: u64,
    state: AtomicU64,
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
        let t = Arc::new(Task { id, state: AtomicU64::new(QUEUED), fut: Mutex::new(Some(Box::pin(fut))), ex: Arc::clone(self) });
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
        loop {
            let cur = self.state.load(SeqCst);
            let tick = op.tick();
            let (next, outcome) = match st(cur) {
                WAITING => (to(cur, QUEUED), Outcome::Scheduled),
                RUNNING => (to(cur, NOTIFIED), Outcome::Notified),
                QUEUED | NOTIFIED => (to(cur, st(cur)), Outcome::Coalesced),
                _ => (to(cur, st(cur)), Outcome::Late),
            };
            if self.state.compare_exchange(cur, next, SeqCst, SeqCst).is_err() {
                continue;
            }
            let mut e = Event { seq: tick, ..Event::wake(self.id, w, Some(outcome)) };
            if outcome == Outcome::Scheduled {
                q.push_back(Arc::clone(self));
                e.queue = Some(Queue::Global);
            }
            op.emit(e);
            break;
        }
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
    rec.record(Event { time, ..Event::poll_begin(t.id, Some(w)) });
    let waker = Waker::from(Arc::clone(&t));
    let mut in_place = 0u32;
    loop {
        ex.polls.fetch_add(1, SeqCst);
        let ready = slot.as_mut().unwrap().as_mut().poll(&mut Context::from_waker(&waker)).is_ready();
        if ready {
            *slot = None;
            let mut op = rec.op();
            loop {
                let cur = t.state.load(SeqCst);
                let tick = op.tick();
                let time = ex.time();
                if t.state.compare_exchange(cur, to(cur, DONE), SeqCst, SeqCst).is_ok() {
                    op.emit(Event { seq: tick, time, ..Event::poll_end(t.id, Some(w), PollResult::Ready) });
                    break;
                }
            }
            drop(op);
            if ex.live.fetch_sub(1, SeqCst) == 1 {
                ex.cv.notify_all();
            }
            return;
        }
        // Pending: decide, with the state word, what comes next.
        let mut q = ex.queue.lock().unwrap();
        let mut op = rec.op();
        let again = loop {
            let cur = t.state.load(SeqCst);
            let time = ex.time();
            let woken = st(cur) == NOTIFIED;
            let repoll = match ex.kind {
                Kind::Busy => !woken && in_place == 0,
                Kind::Slice => time.unwrap() < slice_start + ex.slice_ns,
            };
            let tick = op.ticks(2);
            let end = Event { seq: tick, time, ..Event::poll_end(t.id, Some(w), PollResult::Pending) };
            if repoll {
                // In place: poll-end and the next poll-begin in one step.
                if t.state.compare_exchange(cur, to(cur, RUNNING), SeqCst, SeqCst).is_err() {
                    continue;
                }
                op.emit(end);
                op.emit(Event { seq: tick + 1, time: ex.time(), ..Event::poll_begin(t.id, Some(w)) });
                if !woken {
                    ex.spurious.fetch_add(1, SeqCst);
                }
                break true;
            }
            let requeue = woken || ex.kind == Kind::Busy;
            let next = if requeue { to(cur, QUEUED) } else { to(cur, WAITING) };
            if t.state.compare_exchange(cur, next, SeqCst, SeqCst).is_err() {
                continue;
            }
            op.emit(end);
            if requeue {
                if !woken {
                    ex.spurious.fetch_add(1, SeqCst);
                }
                q.push_back(Arc::clone(&t));
                op.emit(Event { seq: tick + 1, ..Event::requeue(t.id, w, Queue::Global) });
            }
            break false;
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
    WORKER.with(|c| c.set(Some(w)));
    loop {
        let mut q = ex.queue.lock().unwrap();
        let t = loop {
            if let Some(t) = q.pop_front() {
                // QUEUED → RUNNING belongs to the take (the model's take is
                // that transition): a wake after it finds the task RUNNING.
                let mut op = ex.rec.op();
                loop {
                    let cur = t.state.load(SeqCst);
                    assert_eq!(st(cur), QUEUED, "task {} taken in state {}", t.id, st(cur));
                    let tick = op.tick();
                    if t.state.compare_exchange(cur, to(cur, RUNNING), SeqCst, SeqCst).is_ok() {
                        op.emit(Event { seq: tick, ..Event::take(t.id, w, Source::Global, None) });
                        break;
                    }
                }
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
    ex.rec.stop(Some(w));
}

// The workload: yields, children awaited through a signal, signals fired
// by a thread outside the executor.

#[derive(Default)]
struct Signal {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Signal {
    fn fire(&self) {
        self.fired.store(true, SeqCst);
        if let Some(w) = self.waker.lock().unwrap().take() {
            w.wake();
        }
    }
}

struct Wait(Arc<Signal>);

impl Future for Wait {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.fired.load(SeqCst) {
            return Poll::Ready(());
        }
        *self.0.waker.lock().unwrap() = Some(cx.waker().clone());
        if self.0.fired.load(SeqCst) {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

async fn root(ex: Arc<Shared>, outside: mpsc::Sender<Arc<Signal>>, steps: u64, mut seed: u64) {
    for _ in 0..steps {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        match (seed >> 33) % 3 {
            0 => YieldNow(false).await,
            1 => {
                let s = Arc::new(Signal::default());
                let s2 = Arc::clone(&s);
                ex.spawn(async move {
                    YieldNow(false).await;
                    s2.fire();
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

fn arg(args: &[String], name: &str, def: u64) -> u64 {
    match args.iter().position(|a| a == name) {
        Some(i) => args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or_else(|| {
            eprintln!("simple-exec: {} wants a number", name);
            std::process::exit(2)
        }),
        None => def,
    }
}

/// Errors (a bad output path, a failed write) as one line, exit status 1.
fn main() {
    if let Err(e) = run_main() {
        eprintln!("simple-exec: {}", e);
        std::process::exit(1);
    }
}

fn run_main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let kind = match args.get(1).map(String::as_str) {
        Some("busy") => Kind::Busy,
        Some("slice") => Kind::Slice,
        _ => {
            eprintln!("usage: simple-exec busy|slice [--workers N] [--tasks N] [--steps N] [--slice-us N] [--seed N] [--forbid-spurious] [--out FILE]");
            std::process::exit(2)
        }
    };
    let workers = arg(&args, "--workers", 2) as u32;
    let tasks = arg(&args, "--tasks", 10);
    let steps = arg(&args, "--steps", 20);
    let slice_us = arg(&args, "--slice-us", 50).max(1);
    let clock_seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    let seed = arg(&args, "--seed", clock_seed ^ u64::from(std::process::id()));
    let forbid = args.iter().any(|a| a == "--forbid-spurious");
    let out: Box<dyn Write + Send> = match args.iter().position(|a| a == "--out") {
        Some(i) => Box::new(execspec_trace::create_file(&args[i + 1])?),
        None => Box::new(io::stdout()),
    };
    let spurious = if forbid { 0 } else { 1 };
    let header = match kind {
        Kind::Busy => Header::new("busy-fifo", workers, "fifo").config("spurious-polls", spurious),
        Kind::Slice => Header::new("timeslice", workers, "timeslice").config("slice-us", slice_us as i64).config("spurious-polls", spurious),
    };
    let rec = Recorder::new(header, out);
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
            s.fire();
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
