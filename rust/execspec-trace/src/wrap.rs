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

use crate::deferred::{self, Full, TaskClock};
use crate::event::{Event, PollResult};
use crate::recorder::{current_worker, now_ns, Buf, Recorder, WAKERS_MADE, WAKER_CLONES, WAKER_DROPS, WAKES};
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{fence, AtomicUsize};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

/// Which of a traced task's events carry `time` (v1.1): the second
/// argument of [`Recorder::trace`] (`true` is [`Stamps::All`], `false`
/// [`Stamps::Off`]). In deferred mode a stamp is an `rdtsc`, which costs
/// as much as a locked operation or more (20–23 ns of CPU on the Intel
/// Xeon virtual machine of bench/results/rust.md, a locked add 8–9), so a
/// poll with both stamps pays two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stamps {
    /// No event carries time; in deferred mode the ticks are purely
    /// logical (unrelated events of different threads in no real order).
    Off,
    /// The spawn and each poll's begin: every time `verify check` measures
    /// with (the wait from a spawn to the first poll, in ns), and one clock
    /// read per poll, which keeps the ticks near real time. A poll's end
    /// has no time.
    Begins,
    /// The spawn, each poll's begin and each poll's end (a poll's duration).
    All,
}

impl From<bool> for Stamps {
    fn from(time: bool) -> Stamps {
        if time {
            Stamps::All
        } else {
            Stamps::Off
        }
    }
}

/// A future that records its polls and its waker's wakes. Made by
/// [`Recorder::trace`].
pub struct Traced<F> {
    fut: F,
    task: u64,
    rec: Recorder,
    stamps: Stamps,
    done: bool,
    // Deferred mode: the task's first waker data, which holds its clock
    // words (one allocation touched per wake, not two). Dropped at the end.
    home: Option<DataRef>,
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
    /// `stamps` says which events carry `time` (v1.1): `true` the spawn,
    /// each poll-begin and poll-end, [`Stamps::Begins`] the spawn and each
    /// poll-begin (one clock read per poll instead of two), `false` none.
    pub fn trace<F: Future>(&self, fut: F, stamps: impl Into<Stamps>) -> Traced<F> {
        let stamps = stamps.into();
        let time = stamps != Stamps::Off;
        let task = self.new_task_id();
        if self.inner.v1_0 {
            // Its polls carry `future` (v1.1).
            self.inner.undeclared.fetch_add(1, Relaxed);
        }
        let mut home = None;
        if self.inner.deferred {
            let b = buf(self);
            let t0 = if time { b.stamp() } else { 0 };
            // The stamp, when read, keeps ticks near real time (module doc).
            let tick = b.advance(t0);
            b.recs.push(Full { tick, end: 0, task, t0, t1: 0, worker: worker_code(current_worker()), kind: deferred::SPAWN, result: 0 });
            home = Some(new_home(self, task, tick));
        } else {
            let mut e = Event::spawn(task, current_worker(), None);
            if time {
                e.time = Some(now_ns());
            }
            self.record(e);
        }
        Traced { fut, task, rec: self.clone(), stamps, done: false, home, cached: None }
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
            if this.stamps != Stamps::Off {
                begin.1 = b.stamp();
            }
            begin.0 = b.advance(clock.last.load(Acquire).max(clock.woken.load(Acquire)).max(begin.1));
            // A wake that loads this comes after the begin.
            clock.last.store(begin.0, Release);
        } else {
            let mut e = Event::poll_begin(this.task, w).with_future(1);
            if this.stamps != Stamps::Off {
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
                    h.get_mut().expect("a home no waker shares").inner = Some(cx.waker().clone());
                    buf(&this.rec).count(WAKERS_MADE);
                    h.clone().into_waker()
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
            let t1 = if this.stamps == Stamps::All { b.stamp() } else { 0 };
            let end = b.advance(clock.woken.load(Acquire).max(t1));
            clock.last.store(end, Release);
            b.recs.push(Full {
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
            if this.stamps == Stamps::All {
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
///
/// One cache line, aligned, with its reference count in it: the count and
/// the clock words are written on every yield, and two tasks' data on one
/// line (as adjacent `Arc`s are) made the two workers polling them fight
/// for it (recording cost ×2.0 → ×1.3 on the spawn/yield benchmark).
#[repr(C, align(64))]
struct WakeData {
    rc: AtomicUsize,
    clock: TaskClock,
    task: u64,
    home: Option<DataRef>,
    rec: Recorder,
    /// The executor's waker; None only in a home before its first poll.
    inner: Option<Waker>,
}

const _: () = assert!(std::mem::size_of::<WakeData>() == 64);

impl WakeData {
    fn clock(&self) -> &TaskClock {
        self.home.as_deref().map_or(&self.clock, |h| &h.clock)
    }
}

/// A counted reference to a [`WakeData`] (an `Arc` whose count shares the
/// data's line). Our wakers hold one each, as their data pointer.
struct DataRef(NonNull<WakeData>);

// SAFETY: WakeData is Send and Sync (atomics, a Waker, a Recorder); the
// count is atomic.
unsafe impl Send for DataRef {}
unsafe impl Sync for DataRef {}

impl DataRef {
    fn new(clock: TaskClock, task: u64, home: Option<DataRef>, rec: &Recorder, inner: Option<Waker>) -> DataRef {
        #[cfg(test)]
        LIVE.fetch_add(1, Relaxed);
        let d = Box::new(WakeData { rc: AtomicUsize::new(1), clock, task, home, rec: rec.clone(), inner });
        DataRef(NonNull::from(Box::leak(d)))
    }

    /// The data, if this is its only reference.
    fn get_mut(&mut self) -> Option<&mut WakeData> {
        // SAFETY: a count of 1 is this reference alone, and &mut self
        // keeps it so (Acquire: every other reference's use is over).
        (self.rc.load(Acquire) == 1).then(|| unsafe { self.0.as_mut() })
    }

    /// A waker of ours owning this reference.
    fn into_waker(self) -> Waker {
        let p = self.0.as_ptr() as *const ();
        std::mem::forget(self);
        // SAFETY: the vtable's functions treat the pointer as a DataRef.
        unsafe { Waker::from_raw(RawWaker::new(p, &VTABLE)) }
    }

    /// The reference a waker's data pointer owns.
    ///
    /// # Safety
    /// p came from [`DataRef::into_waker`] and its reference is not yet
    /// given back.
    unsafe fn from_raw(p: *const ()) -> DataRef {
        DataRef(NonNull::new_unchecked(p as *mut WakeData))
    }
}

impl std::ops::Deref for DataRef {
    type Target = WakeData;
    fn deref(&self) -> &WakeData {
        // SAFETY: the data lives while a reference does.
        unsafe { self.0.as_ref() }
    }
}

impl Clone for DataRef {
    fn clone(&self) -> DataRef {
        // As Arc: Relaxed suffices for a new reference made from one held;
        // a count that could wrap aborts.
        if self.rc.fetch_add(1, Relaxed) > isize::MAX as usize {
            std::process::abort();
        }
        DataRef(self.0)
    }
}

impl Drop for DataRef {
    fn drop(&mut self) {
        // As Arc: Release publishes this reference's uses, the Acquire fence
        // makes them all visible to the freeing thread.
        if self.rc.fetch_sub(1, Release) != 1 {
            return;
        }
        fence(Acquire);
        #[cfg(test)]
        LIVE.fetch_sub(1, Relaxed);
        // SAFETY: the last reference; the data came from Box::leak.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

/// WakeData alive (tests: every one made is freed).
#[cfg(test)]
pub(crate) static LIVE: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);

fn new_home(rec: &Recorder, task: u64, tick: u64) -> DataRef {
    DataRef::new(TaskClock { last: tick.into(), woken: 0.into() }, task, None, rec, None)
}

fn wrap_waker(rec: &Recorder, task: u64, home: Option<DataRef>, inner: Waker) -> Waker {
    buf(rec).count(WAKERS_MADE);
    DataRef::new(TaskClock::default(), task, home, rec, Some(inner)).into_waker()
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone_raw, wake_raw, wake_by_ref_raw, drop_raw);

unsafe fn clone_raw(p: *const ()) -> RawWaker {
    let d = std::mem::ManuallyDrop::new(DataRef::from_raw(p));
    buf(&d.rec).count(WAKER_CLONES);
    std::mem::forget(DataRef::clone(&d));
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
        b.recs.push(Full { tick, end: 0, task: d.task, t0: 0, t1: 0, worker: worker_code(current_worker()), kind: deferred::WAKE, result: 0 });
    } else {
        b.count(WAKES);
        d.rec.record(Event::wake(d.task, current_worker(), None));
    }
    if let Some(inner) = &d.inner {
        inner.wake_by_ref();
    }
}

unsafe fn wake_raw(p: *const ()) {
    let d = DataRef::from_raw(p);
    buf(&d.rec).count(WAKER_DROPS); // wake consumes the waker
    record_wake(&d);
}

unsafe fn wake_by_ref_raw(p: *const ()) {
    record_wake(&*(p as *const WakeData));
}

unsafe fn drop_raw(p: *const ()) {
    let d = DataRef::from_raw(p);
    buf(&d.rec).count(WAKER_DROPS);
    drop(d);
}
