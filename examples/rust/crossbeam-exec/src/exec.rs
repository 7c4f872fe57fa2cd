//! A work-stealing executor on crossbeam-deque, recorded without any global
//! lock (trace order "intervals").
//!
//! Queues: one `Injector` (global), one `Worker` per worker thread (local,
//! owner end LIFO), the other workers' `Stealer`s. A worker takes from its
//! own local queue, then the global queue, then steals one task from another
//! worker (the model's POLL-LOCAL, GLOBAL-STEAL, WORKER-STEAL). A spawn or
//! wake from a worker thread pushes onto that worker's local queue; from
//! outside, onto the global queue; a task woken during its poll (NOTIFIED)
//! goes back onto the local queue when the poll returns.
//!
//! Task state: the recorder's `StateWord` (the model's state in the low
//! byte and a version above it, bumped by every transition, so a
//! compare-and-swap that succeeds proves nothing changed since the load).
//! Every transition is a load, a tick, a CAS (the tick redrawn when the
//! CAS fails); a wake that changes nothing (coalesced, late) still bumps
//! the version, so its tick too is ordered with every transition of the
//! task: of two successful CASes, the later one loaded after the earlier
//! one's CAS, so drew its tick later.
//!
//! Recording (the v1.1 interval contract): a take's `call` is drawn before
//! the search starts (before the local pop, so the premises "local empty",
//! "global empty" that the search observed lie inside its interval) and its
//! `ret` after the task is in hand, between the load and the CAS that makes
//! it RUNNING (the model's take is that transition: a wake after it must
//! find the task RUNNING); seq = ret. A push's `call` is drawn after
//! the state load and before the CAS that makes the task QUEUED, its `ret`
//! after the push; seq = call.
//!
//! The bug (`Exec::new(.., bug: true)`): the wake has no queued flag: it
//! pushes the task whatever its state, like an executor that sends the task
//! down a channel on every wake.

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use execspec_trace::state::{StateWord, DONE, NOTIFIED, QUEUED, RUNNING, WAITING};
use execspec_trace::{Event, Outcome, PollResult, Queue, Recorder, Source};
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Wake, Waker};
use std::thread;
use std::time::Duration;

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

pub struct Task {
    id: u64,
    state: StateWord,
    fut: Mutex<Option<BoxFuture>>,
    ex: Arc<Shared>,
}

pub struct Shared {
    injector: Injector<Arc<Task>>,
    stealers: Vec<Stealer<Arc<Task>>>,
    rec: Recorder,
    live: AtomicUsize,
    sleepers: AtomicUsize,
    sleep: Mutex<()>,
    cv: Condvar,
    bug: bool,
    /// Steal with `steal_batch_and_pop` (half the victim's queue).
    batch: bool,
    polls: AtomicU64,
    closed: AtomicBool,
}

/// How an executor is built: its number of workers, whether its local
/// queues are FIFO at the owner's end (`Worker::new_fifo`, else LIFO), and
/// whether a thief steals half of the victim's queue at once
/// (`Stealer::steal_batch_and_pop`, header `steal-half`) instead of one
/// task.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shape {
    pub workers: u32,
    pub fifo: bool,
    pub batch: bool,
}

thread_local! {
    // The worker this thread is, with its local queue.
    static LOCAL: RefCell<Option<(u32, Worker<Arc<Task>>)>> = const { RefCell::new(None) };
}

/// Pushes t onto the current worker's local queue (if this thread is a
/// worker) or the global queue; returns the queue.
fn push_here(ex: &Shared, t: Arc<Task>) -> Queue {
    let t = LOCAL.with(|l| match &*l.borrow() {
        Some((w, q)) => {
            q.push(t);
            Err(*w)
        }
        None => Ok(t),
    });
    match t {
        Ok(t) => {
            ex.injector.push(t);
            Queue::Global
        }
        Err(w) => Queue::Local(w),
    }
}

fn current_worker() -> Option<u32> {
    LOCAL.with(|l| l.borrow().as_ref().map(|(w, _)| *w))
}

impl Shared {
    fn notify(&self) {
        if self.sleepers.load(SeqCst) > 0 {
            self.cv.notify_one();
        }
    }

    /// Spawns fut: from a worker thread onto its local queue, else global.
    pub fn spawn(self: &Arc<Self>, fut: impl Future<Output = ()> + Send + 'static) {
        let id = self.rec.new_task_id();
        let t = Arc::new(Task { id, state: StateWord::new(QUEUED), fut: Mutex::new(Some(Box::pin(fut))), ex: Arc::clone(self) });
        self.live.fetch_add(1, SeqCst);
        let w = current_worker();
        // The queue is known only once pushed: the event is made after.
        let mut op = self.rec.op();
        let call = op.tick();
        let q = push_here(self, t);
        let ret = op.tick();
        op.emit(Event { seq: call, call: Some(call), ret: Some(ret), ..Event::spawn(id, w, Some(q)) });
        drop(op);
        self.notify();
    }
}

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let ex = &self.ex;
        let w = current_worker();
        let mut op = ex.rec.op();
        if ex.bug {
            // No queued flag: push, whatever the state.
            let call = op.tick();
            let q = push_here(ex, Arc::clone(self));
            let ret = op.tick();
            op.emit(Event { seq: call, call: Some(call), ret: Some(ret), ..Event::wake(self.id, w, Some(Outcome::Scheduled)).with_queue(q) });
            drop(op);
            ex.notify();
            return;
        }
        let (tick, outcome) = self.state.wake(&mut op);
        if outcome == Outcome::Scheduled {
            let q = push_here(ex, Arc::clone(self));
            let ret = op.tick();
            op.emit(Event { seq: tick, call: Some(tick), ret: Some(ret), ..Event::wake(self.id, w, Some(outcome)).with_queue(q) });
            drop(op);
            ex.notify();
        } else {
            op.emit(Event { seq: tick, ..Event::wake(self.id, w, Some(outcome)) });
        }
    }
}

/// Finds worker w's next task: local, then global, then steal.
fn find(ex: &Shared, w: u32, local: &Worker<Arc<Task>>) -> Option<(Arc<Task>, u64, Source, Option<u32>)> {
    if let Some(t) = local.pop() {
        let id = t.id;
        return Some((t, id, Source::Local, None));
    }
    loop {
        match ex.injector.steal() {
            Steal::Success(t) => {
                let id = t.id;
                return Some((t, id, Source::Global, None));
            }
            Steal::Empty => break,
            Steal::Retry => continue,
        }
    }
    let n = ex.stealers.len() as u32;
    for k in 1..n {
        let v = (w + k) % n;
        loop {
            let got = if ex.batch { ex.stealers[v as usize].steal_batch_and_pop(local) } else { ex.stealers[v as usize].steal() };
            match got {
                Steal::Success(t) => {
                    let id = t.id;
                    return Some((t, id, Source::Steal, Some(v)));
                }
                Steal::Empty => break,
                Steal::Retry => continue,
            }
        }
    }
    None
}

fn run(ex: &Arc<Shared>, w: u32, t: Arc<Task>) {
    let rec = &ex.rec;
    let mut slot = t.fut.lock().unwrap();
    if slot.is_none() {
        return; // (the bug only) a duplicate of a finished task
    }
    rec.record(Event::poll_begin(t.id, w));
    ex.polls.fetch_add(1, SeqCst);
    let waker = Waker::from(Arc::clone(&t));
    let ready = slot.as_mut().unwrap().as_mut().poll(&mut Context::from_waker(&waker)).is_ready();
    if ready {
        *slot = None;
    }
    drop(slot);
    let mut op = rec.op();
    // Ready: DONE. Woken during the poll: poll-end pending and its requeue
    // take effect in one step (two ticks). Else WAITING (with the bug, a
    // task a wake already re-queued keeps its state).
    let (tick, from, ()) = t.state.transition(&mut op, |s| match s {
        _ if ready => (DONE, 1, ()),
        NOTIFIED if !ex.bug => (QUEUED, 2, ()),
        s if ex.bug && s != RUNNING => (s, 1, ()),
        _ => (WAITING, 1, ()),
    });
    let result = if ready { PollResult::Ready } else { PollResult::Pending };
    op.emit(Event { seq: tick, ..Event::poll_end(t.id, w, result) });
    if ready {
        drop(op);
        if ex.live.fetch_sub(1, SeqCst) == 1 {
            ex.cv.notify_all();
        }
    } else if from == NOTIFIED && !ex.bug {
        let q = push_here(ex, Arc::clone(&t));
        let ret = op.tick();
        op.emit(Event { seq: tick + 1, call: Some(tick + 1), ret: Some(ret), ..Event::requeue(t.id, w, q) });
    }
}

fn work(ex: Arc<Shared>, w: u32, local: Worker<Arc<Task>>) {
    // The worker's stop, at the end or while a panic unwinds the thread.
    let _stop = common::StopGuard { rec: ex.rec.clone(), worker: w };
    LOCAL.with(|l| *l.borrow_mut() = Some((w, local)));
    loop {
        let t = LOCAL.with(|l| {
            let l = l.borrow();
            let (_, local) = l.as_ref().unwrap();
            let mut op = ex.rec.op();
            let call = op.tick();
            let (t, id, src, victim) = find(&ex, w, local)?;
            // QUEUED → RUNNING belongs to the take: its ret is the
            // transition's tick, so a wake after it finds the task RUNNING.
            let (ret, found) = t.state.take(&mut op);
            if !ex.bug {
                assert_eq!(found, QUEUED, "task {} taken in state {}", id, found);
            }
            op.emit(Event { seq: ret, call: Some(call), ret: Some(ret), ..Event::take(id, w, src, victim) });
            Some(t)
        });
        match t {
            Some(t) => run(&ex, w, t),
            None => {
                if ex.live.load(SeqCst) == 0 && ex.closed.load(SeqCst) {
                    break;
                }
                ex.sleepers.fetch_add(1, SeqCst);
                let g = ex.sleep.lock().unwrap();
                // Bounded: a notify that raced with the check costs at most this.
                let _ = ex.cv.wait_timeout(g, Duration::from_micros(500)).unwrap();
                ex.sleepers.fetch_sub(1, SeqCst);
            }
        }
    }
    LOCAL.with(|l| *l.borrow_mut() = None);
}

/// A running executor.
pub struct Exec {
    pub shared: Arc<Shared>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Exec {
    /// Starts workers threads recording into rec.
    pub fn new(shape: Shape, rec: Recorder, bug: bool) -> Exec {
        let new = if shape.fifo { Worker::new_fifo } else { Worker::new_lifo };
        let locals: Vec<Worker<Arc<Task>>> = (0..shape.workers).map(|_| new()).collect();
        let shared = Arc::new(Shared {
            injector: Injector::new(),
            stealers: locals.iter().map(|l| l.stealer()).collect(),
            rec,
            live: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            sleep: Mutex::new(()),
            cv: Condvar::new(),
            bug,
            batch: shape.batch,
            polls: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        });
        let threads = locals
            .into_iter()
            .enumerate()
            .map(|(w, local)| {
                let ex = Arc::clone(&shared);
                thread::Builder::new().name(format!("worker-{}", w)).spawn(move || work(ex, w as u32, local)).unwrap()
            })
            .collect();
        Exec { shared, threads }
    }

    /// Waits until every task is done, stops the workers, records the stop.
    pub fn join(self) -> u64 {
        self.shared.closed.store(true, SeqCst);
        for h in self.threads {
            h.join().unwrap();
        }
        self.shared.rec.stop(None);
        self.shared.polls.load(SeqCst)
    }
}
