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

use crate::event::{Event, PollResult};
use crate::recorder::{current_worker, now_ns, Recorder};
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::Ordering;
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
    // The executor's waker last seen, and ours around it: executors hand
    // the same waker to every poll of a task, so it is wrapped once.
    cached: Option<(Waker, Waker)>,
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
    /// With time, poll-begin and poll-end carry `time` (v1.1).
    pub fn trace<F: Future>(&self, fut: F, time: bool) -> Traced<F> {
        let task = self.new_task_id();
        self.record(Event::spawn(task, current_worker(), None));
        Traced { fut, task, rec: self.clone(), time, done: false, cached: None }
    }
}

impl<F: Future> Future for Traced<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: fut is structurally pinned (never moved out of self); the
        // other fields are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        let w = current_worker();
        let mut begin = Event::poll_begin(this.task, w).with_future(1);
        if this.time {
            begin.time = Some(now_ns());
        }
        this.rec.record(begin);
        let waker = match &this.cached {
            Some((inner, ours)) if inner.will_wake(cx.waker()) => ours.clone(),
            _ => {
                let ours = wrap_waker(&this.rec, this.task, cx.waker().clone());
                this.cached = Some((cx.waker().clone(), ours.clone()));
                ours
            }
        };
        let mut cx2 = Context::from_waker(&waker);
        let fut = unsafe { Pin::new_unchecked(&mut this.fut) };
        let r = catch_unwind(AssertUnwindSafe(|| fut.poll(&mut cx2)));
        let result = match &r {
            Ok(Poll::Pending) => PollResult::Pending,
            Ok(Poll::Ready(_)) => PollResult::Ready,
            Err(_) => PollResult::Panic,
        };
        let mut end = Event::poll_end(this.task, w, result).with_future(1);
        if this.time {
            end.time = Some(now_ns());
        }
        this.rec.record(end);
        if result != PollResult::Pending {
            this.done = true;
            this.cached = None; // the executor's waker is not kept past the end
        }
        match r {
            Ok(p) => p,
            Err(payload) => resume_unwind(payload),
        }
    }
}

struct WakeData {
    rec: Recorder,
    task: u64,
    inner: Waker,
}

fn wrap_waker(rec: &Recorder, task: u64, inner: Waker) -> Waker {
    rec.inner.wakers_made.fetch_add(1, Ordering::Relaxed);
    let data = Arc::new(WakeData { rec: rec.clone(), task, inner });
    // SAFETY: the vtable's functions treat the pointer as an Arc<WakeData>.
    unsafe { Waker::from_raw(RawWaker::new(Arc::into_raw(data) as *const (), &VTABLE)) }
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone_raw, wake_raw, wake_by_ref_raw, drop_raw);

unsafe fn clone_raw(p: *const ()) -> RawWaker {
    let d = &*(p as *const WakeData);
    d.rec.inner.waker_clones.fetch_add(1, Ordering::Relaxed);
    Arc::increment_strong_count(p as *const WakeData);
    RawWaker::new(p, &VTABLE)
}

fn record_wake(d: &WakeData) {
    d.rec.inner.wakes.fetch_add(1, Ordering::Relaxed);
    // The tick before the executor's waker runs: the poll it leads to comes later.
    d.rec.record(Event::wake(d.task, current_worker(), None));
    d.inner.wake_by_ref();
}

unsafe fn wake_raw(p: *const ()) {
    let d = Arc::from_raw(p as *const WakeData);
    d.rec.inner.waker_drops.fetch_add(1, Ordering::Relaxed); // wake consumes the waker
    record_wake(&d);
}

unsafe fn wake_by_ref_raw(p: *const ()) {
    record_wake(&*(p as *const WakeData));
}

unsafe fn drop_raw(p: *const ()) {
    let d = Arc::from_raw(p as *const WakeData);
    d.rec.inner.waker_drops.fetch_add(1, Ordering::Relaxed);
    drop(d);
}
