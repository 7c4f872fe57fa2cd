//! The black-box level: a future wrapper for executors you cannot change.
//!
//! [`Recorder::trace`] wraps a future before it is spawned and records its
//! spawn; [`Traced`] records poll-begin and poll-end on the polling thread
//! (the worker is the one [`crate::set_worker`] declared there, e.g. from
//! tokio's `on_thread_start`) and hands the inner future a waker of its own
//! (a `RawWaker` around the executor's waker) that records every `wake` and
//! `wake_by_ref` as a `wake` event before forwarding it, and counts every
//! clone and drop. Takes, queues and wake outcomes are invisible from here:
//! the header must say `"unobserved":["take","queue","outcome"]`
//! ([`Header::black_box`](crate::Header::black_box)).
//!
//! Ordering: a wake's tick is drawn before the executor's waker is called,
//! so a poll that the wake causes always comes after it in the trace; a
//! poll-end's tick is drawn after the inner poll returned, before the
//! executor sees the result.
//!
//! With a deferred recorder ([`Options::deferred`](crate::Options)) a poll
//! is one binary record and the ticks come from the thread's clock joined
//! with the task's (see [`crate::deferred`]); the events written are the
//! same.

use crate::deferred::{self, Rec, TaskClock};
use crate::event::{Event, PollResult};
use crate::recorder::{current_worker, now_ns, Buf, Recorder, WAKERS_MADE, WAKER_CLONES, WAKER_DROPS, WAKES};
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::sync::Arc;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

/// A future that records its polls and its waker's wakes. Made by
/// [`Recorder::trace`].
pub struct Traced<F> {
    fut: F,
    task: u64,
    rec: Recorder,
    time: bool,
    done: bool,
    // Deferred mode: the task's first waker data, which holds its clock
    // words (one allocation touched per wake, not two). Dropped at the end.
    home: Option<Arc<WakeData>>,
    // The executor's waker last seen, and ours around it: executors hand
    // the same waker to every poll of a task, so it is wrapped once.
    cached: Option<(Waker, Waker)>,
}

/// This thread's buffer of rec. Valid while rec lives.
#[inline]
fn buf(rec: &Recorder) -> &Buf {
    // SAFETY: the buffer lives as long as the recorder (Recorder::local_buf).
    unsafe { &*rec.local_buf() }
}

fn worker_code(w: Option<u32>) -> u32 {
    w.unwrap_or(deferred::NO_WORKER)
}

impl<F> Traced<F> {
    /// The task id the wrapper records.
    pub fn task(&self) -> u64 {
        self.task
    }
}

impl Recorder {
    /// Wraps fut as a new task (a fresh id) and records its spawn, from the
    /// current worker or outside; spawn the result on the executor at once.
    /// With time, the spawn, poll-begin and poll-end carry `time` (v1.1).
    pub fn trace<F: Future>(&self, fut: F, time: bool) -> Traced<F> {
        let task = self.new_task_id();
        let mut home = None;
        if self.inner.deferred {
            let b = buf(self);
            let t0 = if time { b.stamp() } else { 0 };
            // The stamp, when read, keeps ticks near real time (module doc).
            let tick = b.advance(t0);
            b.recs.push(Rec { tick, end: 0, task, t0, t1: 0, worker: worker_code(current_worker()), kind: deferred::SPAWN, result: 0 });
            home = Some(new_home(self, task, tick));
        } else {
            let mut e = Event::spawn(task, current_worker(), None);
            if time {
                e.time = Some(now_ns());
            }
            self.record(e);
        }
        Traced { fut, task, rec: self.clone(), time, done: false, home, cached: None }
    }
}

impl<F: Future> Future for Traced<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: fut is structurally pinned (never moved out of self); the
        // other fields are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        let w = current_worker();
        // Deferred: the begin's tick and time, kept for the poll's record,
        // and this thread's buffer.
        let mut begin = (0, 0);
        let mut local: *const Buf = std::ptr::null();
        if this.rec.inner.deferred && this.home.is_none() {
            // Polled after its end (which the checker reports): a new clock.
            this.home = Some(new_home(&this.rec, this.task, 0));
        }
        if let Some(home) = &this.home {
            let clock = &home.clock;
            local = this.rec.local_buf();
            // SAFETY: the buffer lives as long as the recorder.
            let b = unsafe { &*local };
            if this.time {
                begin.1 = b.stamp();
            }
            begin.0 = b.advance(clock.last.load(Acquire).max(clock.woken.load(Acquire)).max(begin.1));
            // A wake that loads this comes after the begin.
            clock.last.store(begin.0, Release);
        } else {
            let mut e = Event::poll_begin(this.task, w).with_future(1);
            if this.time {
                e.time = Some(now_ns());
            }
            this.rec.record(e);
        }
        let fresh = match &this.cached {
            Some((inner, _)) => !inner.will_wake(cx.waker()),
            None => true,
        };
        if fresh {
            let ours = match &mut this.home {
                Some(h) if h.inner.is_none() => {
                    // No waker of ours was handed out yet: the home is ours alone.
                    Arc::get_mut(h).expect("a home no waker shares").inner = Some(cx.waker().clone());
                    buf(&this.rec).count(WAKERS_MADE);
                    // SAFETY: the vtable's functions treat the pointer as an Arc<WakeData>.
                    unsafe { Waker::from_raw(RawWaker::new(Arc::into_raw(Arc::clone(h)) as *const (), &VTABLE)) }
                }
                h => wrap_waker(&this.rec, this.task, h.clone(), cx.waker().clone()),
            };
            this.cached = Some((cx.waker().clone(), ours));
        }
        let waker = &this.cached.as_ref().expect("a waker").1;
        let mut cx2 = Context::from_waker(waker);
        let fut = unsafe { Pin::new_unchecked(&mut this.fut) };
        let r = catch_unwind(AssertUnwindSafe(|| fut.poll(&mut cx2)));
        let result = match &r {
            Ok(Poll::Pending) => PollResult::Pending,
            Ok(Poll::Ready(_)) => PollResult::Ready,
            Err(_) => PollResult::Panic,
        };
        if let Some(home) = &this.home {
            let clock = &home.clock;
            // SAFETY: as above; the poll ran on this thread.
            let b = unsafe { &*local };
            let t1 = if this.time { b.stamp() } else { 0 };
            let end = b.advance(clock.woken.load(Acquire).max(t1));
            clock.last.store(end, Release);
            b.recs.push(Rec {
                tick: begin.0,
                end,
                task: this.task,
                t0: begin.1,
                t1,
                worker: worker_code(w),
                kind: deferred::POLL,
                result: deferred::result_code(result),
            });
        } else {
            let mut e = Event::poll_end(this.task, w, result).with_future(1);
            if this.time {
                e.time = Some(now_ns());
            }
            this.rec.record(e);
        }
        if result != PollResult::Pending {
            this.done = true;
            // The executor's waker is not kept past the end.
            this.cached = None;
            this.home = None;
        }
        match r {
            Ok(p) => p,
            Err(payload) => resume_unwind(payload),
        }
    }
}

/// What our waker points to. In deferred mode a task's first one (its
/// home, made at spawn) holds the task's clock words; a later one (made if
/// the executor's waker changes) points to the home.
struct WakeData {
    clock: TaskClock,
    task: u64,
    home: Option<Arc<WakeData>>,
    rec: Recorder,
    /// The executor's waker; None only in a home before its first poll.
    inner: Option<Waker>,
}

impl WakeData {
    fn clock(&self) -> &TaskClock {
        self.home.as_deref().map_or(&self.clock, |h| &h.clock)
    }
}

fn new_home(rec: &Recorder, task: u64, tick: u64) -> Arc<WakeData> {
    let clock = TaskClock { last: tick.into(), woken: 0.into() };
    Arc::new(WakeData { clock, task, home: None, rec: rec.clone(), inner: None })
}

fn wrap_waker(rec: &Recorder, task: u64, home: Option<Arc<WakeData>>, inner: Waker) -> Waker {
    buf(rec).count(WAKERS_MADE);
    let data = Arc::new(WakeData { clock: TaskClock::default(), task, home, rec: rec.clone(), inner: Some(inner) });
    // SAFETY: the vtable's functions treat the pointer as an Arc<WakeData>.
    unsafe { Waker::from_raw(RawWaker::new(Arc::into_raw(data) as *const (), &VTABLE)) }
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone_raw, wake_raw, wake_by_ref_raw, drop_raw);

unsafe fn clone_raw(p: *const ()) -> RawWaker {
    let d = &*(p as *const WakeData);
    buf(&d.rec).count(WAKER_CLONES);
    Arc::increment_strong_count(p as *const WakeData);
    RawWaker::new(p, &VTABLE)
}

fn record_wake(d: &WakeData) {
    let b = buf(&d.rec);
    // The tick before the executor's waker runs: the poll it leads to comes later.
    if d.rec.inner.deferred {
        // (Wakes are counted at finish, from the records.)
        let clock = d.clock();
        let tick = b.advance(clock.last.load(Acquire));
        clock.woken.fetch_max(tick, AcqRel);
        b.recs.push(Rec { tick, end: 0, task: d.task, t0: 0, t1: 0, worker: worker_code(current_worker()), kind: deferred::WAKE, result: 0 });
    } else {
        b.count(WAKES);
        d.rec.record(Event::wake(d.task, current_worker(), None));
    }
    if let Some(inner) = &d.inner {
        inner.wake_by_ref();
    }
}

unsafe fn wake_raw(p: *const ()) {
    let d = Arc::from_raw(p as *const WakeData);
    buf(&d.rec).count(WAKER_DROPS); // wake consumes the waker
    record_wake(&d);
}

unsafe fn wake_by_ref_raw(p: *const ()) {
    record_wake(&*(p as *const WakeData));
}

unsafe fn drop_raw(p: *const ()) {
    let d = Arc::from_raw(p as *const WakeData);
    buf(&d.rec).count(WAKER_DROPS);
    drop(d);
}
