//! Events and the header of trace format v1/v1.1, and their JSON lines.

use std::fmt::Write as _;

/// What happened (the `kind` field). Each kind reports a rule of the model;
/// see docs/trace-format.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// SPAWN: a new task, pushed onto `queue` (absent under `unobserved: queue`).
    Spawn,
    /// POLL-LOCAL, GLOBAL-STEAL or WORKER-STEAL, by `source`.
    Take,
    /// The call of the future's poll starts.
    PollBegin,
    /// The poll returned `result`.
    PollEnd,
    /// WAKE: the task's waker was called; `outcome` says what it did.
    Wake,
    /// The task goes back onto `queue` at the end of a poll.
    Requeue,
    /// The worker blocks for lack of work.
    Park,
    /// The worker is woken to look for work again.
    Unpark,
    /// A task panicked (`detail`: the message).
    Panic,
    /// POLL-PENDING: the poll registered the task's waker.
    Register,
    /// v1.1: the executor (no worker) or one worker stopped.
    Stop,
}

impl Kind {
    /// The name used in traces.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Spawn => "spawn",
            Kind::Take => "take",
            Kind::PollBegin => "poll-begin",
            Kind::PollEnd => "poll-end",
            Kind::Wake => "wake",
            Kind::Requeue => "requeue",
            Kind::Park => "park",
            Kind::Unpark => "unpark",
            Kind::Panic => "panic",
            Kind::Register => "register",
            Kind::Stop => "stop",
        }
    }
}

/// Where a take found its task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The owner end of the worker's own local queue (POLL-LOCAL).
    Local,
    /// The global queue (GLOBAL-STEAL).
    Global,
    /// Another worker's local queue (WORKER-STEAL); the event names the victim.
    Steal,
    /// The worker's LIFO slot (POLL-LOCAL).
    Lifo,
}

impl Source {
    /// The name used in traces.
    pub fn name(self) -> &'static str {
        match self {
            Source::Local => "local",
            Source::Global => "global",
            Source::Steal => "steal",
            Source::Lifo => "lifo",
        }
    }
}

/// Where a task was pushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// The global (injector) queue.
    Global,
    /// Worker N's local queue.
    Local(u32),
}

/// What a poll returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollResult {
    Pending,
    Ready,
    Panic,
    /// v1.1: Ready(Err), a failed task that did not panic.
    Error,
}

impl PollResult {
    /// The name used in traces.
    pub fn name(self) -> &'static str {
        match self {
            PollResult::Pending => "pending",
            PollResult::Ready => "ready",
            PollResult::Panic => "panic",
            PollResult::Error => "error",
        }
    }
}

/// Why the executor or a worker stopped (the `reason` of a `stop`
/// event, v1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// An orderly stop: the executor was shut down or dropped.
    Shutdown,
    /// The executor stopped because a task panicked (e.g. a runtime
    /// configured to shut down on an unhandled panic).
    Panic,
    /// The stop was recorded while the thread was unwinding from a panic
    /// (from a destructor or a guard): the executor did not stop on its
    /// own terms. [`Recorder::stop`](crate::Recorder::stop) records it by
    /// itself when `std::thread::panicking()` says so.
    Unwound,
}

impl StopReason {
    /// The name used in traces.
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Shutdown => "shutdown",
            StopReason::Panic => "panic",
            StopReason::Unwound => "unwound",
        }
    }
}

/// What a wake did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// WAITING → QUEUED: the wake pushed the task (the event names the queue).
    Scheduled,
    /// RUNNING → NOTIFIED: the poll's end re-queues it.
    Notified,
    /// The task was QUEUED or NOTIFIED already: nothing to do.
    Coalesced,
    /// The task was DONE: nothing to do.
    Late,
    /// Nothing, where the rules say the wake must act (never conforms).
    Dropped,
}

impl Outcome {
    /// The name used in traces.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Scheduled => "scheduled",
            Outcome::Notified => "notified",
            Outcome::Coalesced => "coalesced",
            Outcome::Late => "late",
            Outcome::Dropped => "dropped",
        }
    }
}

/// One event of a trace. Build one with the constructors ([`Event::spawn`],
/// [`Event::take`], …) and the setters; the recorder fills in `seq` (and
/// `call`/`ret` for queue operations). Zero or `None` fields are omitted
/// from the JSON line.
///
/// The worker argument of every constructor is `impl Into<Option<u32>>`:
/// pass a worker number (`0`), `Some(w)`, or `None` for an event outside
/// any worker (a spawn, wake or poll from another thread, the executor's
/// stop). Takes, requeues, registers, parks, unparks and panics happen on
/// a worker: the checker refuses them without one.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub seq: u64,
    pub kind: Kind,
    /// The task, from 1; 0 = none (park, unpark, stop, a wake through a
    /// waker that names no task).
    pub task: u64,
    /// The worker it happened on; `None` = outside any worker.
    pub worker: Option<u32>,
    pub source: Option<Source>,
    pub victim: Option<u32>,
    pub queue: Option<Queue>,
    pub result: Option<PollResult>,
    pub outcome: Option<Outcome>,
    /// Logical-clock ticks around the queue operation.
    pub call: Option<u64>,
    pub ret: Option<u64>,
    /// v1.1: the future instance a poll drives, from 1; 0 = not recorded.
    pub future: u64,
    /// v1.1: monotonic nanoseconds (see [`crate::now_ns`]).
    pub time: Option<u64>,
    /// v1.1: the task's priority, higher runs first.
    pub priority: Option<i32>,
    pub detail: Option<Box<str>>,
    /// v1.1: why a `stop` happened.
    pub reason: Option<StopReason>,
}

impl Event {
    /// An event of the given kind with every optional field unset.
    pub fn new(kind: Kind) -> Event {
        Event {
            seq: 0,
            kind,
            task: 0,
            worker: None,
            source: None,
            victim: None,
            queue: None,
            result: None,
            outcome: None,
            call: None,
            ret: None,
            future: 0,
            time: None,
            priority: None,
            detail: None,
            reason: None,
        }
    }
    /// SPAWN of task onto queue (set `queue` to `None` when it is not observed).
    pub fn spawn(task: u64, worker: impl Into<Option<u32>>, queue: Option<Queue>) -> Event {
        Event { task, worker: worker.into(), queue, ..Event::new(Kind::Spawn) }
    }
    /// A take by worker of task from source (victim for [`Source::Steal`]).
    pub fn take(task: u64, worker: impl Into<Option<u32>>, source: Source, victim: Option<u32>) -> Event {
        Event { task, worker: worker.into(), source: Some(source), victim, ..Event::new(Kind::Take) }
    }
    /// The poll of task on worker begins.
    pub fn poll_begin(task: u64, worker: impl Into<Option<u32>>) -> Event {
        Event { task, worker: worker.into(), ..Event::new(Kind::PollBegin) }
    }
    /// The poll of task on worker returned result.
    pub fn poll_end(task: u64, worker: impl Into<Option<u32>>, result: PollResult) -> Event {
        Event { task, worker: worker.into(), result: Some(result), ..Event::new(Kind::PollEnd) }
    }
    /// A wake of task from worker (None: outside), with its outcome if observed.
    /// A scheduled wake names its queue with [`Event::with_queue`].
    pub fn wake(task: u64, worker: impl Into<Option<u32>>, outcome: Option<Outcome>) -> Event {
        Event { task, worker: worker.into(), outcome, ..Event::new(Kind::Wake) }
    }
    /// A requeue of task by worker onto queue at the end of its poll.
    pub fn requeue(task: u64, worker: impl Into<Option<u32>>, queue: Queue) -> Event {
        Event { task, worker: worker.into(), queue: Some(queue), ..Event::new(Kind::Requeue) }
    }
    /// POLL-PENDING: the poll registered the task's waker.
    pub fn register(task: u64, worker: impl Into<Option<u32>>) -> Event {
        Event { task, worker: worker.into(), ..Event::new(Kind::Register) }
    }
    /// The worker parks.
    pub fn park(worker: impl Into<Option<u32>>) -> Event {
        Event { worker: worker.into(), ..Event::new(Kind::Park) }
    }
    /// The worker unparks.
    pub fn unpark(worker: impl Into<Option<u32>>) -> Event {
        Event { worker: worker.into(), ..Event::new(Kind::Unpark) }
    }
    /// A task panicked on worker with the message.
    pub fn panic(task: u64, worker: impl Into<Option<u32>>, message: &str) -> Event {
        Event { task, worker: worker.into(), detail: Some(message.into()), ..Event::new(Kind::Panic) }
    }
    /// v1.1: the executor (worker None) or one worker stopped; no reason
    /// given (see [`Event::with_reason`]).
    pub fn stop(worker: impl Into<Option<u32>>) -> Event {
        Event { worker: worker.into(), ..Event::new(Kind::Stop) }
    }
    /// Sets the queue: of a spawn, of a scheduled wake, of a requeue.
    pub fn with_queue(mut self, q: Queue) -> Event {
        self.queue = Some(q);
        self
    }
    /// Sets the reason of a stop (v1.1).
    pub fn with_reason(mut self, r: StopReason) -> Event {
        self.reason = Some(r);
        self
    }
    /// Sets the future instance (v1.1).
    pub fn with_future(mut self, future: u64) -> Event {
        self.future = future;
        self
    }
    /// Sets the time in nanoseconds (v1.1).
    pub fn with_time(mut self, ns: u64) -> Event {
        self.time = Some(ns);
        self
    }
    /// Sets the priority (v1.1).
    pub fn with_priority(mut self, p: i32) -> Event {
        self.priority = Some(p);
        self
    }
    /// Sets the detail text.
    pub fn with_detail(mut self, d: &str) -> Event {
        self.detail = Some(d.into());
        self
    }

    /// Whether the event uses a field or value of format v1.1.
    pub fn is_v1_1(&self) -> bool {
        self.future != 0
            || self.time.is_some()
            || self.priority.is_some()
            || self.kind == Kind::Stop
            || self.result == Some(PollResult::Error)
            || (self.kind == Kind::Wake && self.task == 0)
    }

    /// Appends the event's JSON line, with its newline, to out.
    pub fn write_json(&self, out: &mut String) {
        let mut b = Vec::new();
        crate::packed::Packed::from(self.clone()).write_json(&mut b);
        out.push_str(std::str::from_utf8(&b).expect("the JSON line is UTF-8"));
    }
}

/// Appends s as a JSON string literal. Control characters, quotes,
/// backslashes and U+2028/U+2029 are escaped; everything else is UTF-8.
pub fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// How the trace's `seq` was drawn (the header's `order`, v1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Inside each operation's critical section (the default).
    Seq,
    /// `call`/`ret` ticks around lock-free queue operations; seq is the call
    /// of a push and the ret of a take.
    Intervals,
}

/// The first line of a trace. A header declares format v1.1 (`"minor":1`)
/// unless [`Header::v1_0`] asks for v1.0, for a reader that knows only
/// v1.0; a v1.0 header that uses a v1.1 field itself is written as v1.1
/// all the same, and an event with a v1.1 field recorded under it is
/// counted when it is recorded ([`Recorder::undeclared_v1_1`](crate::Recorder::undeclared_v1_1))
/// and makes [`Recorder::finish`](crate::Recorder::finish) fail.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub executor: String,
    pub workers: u32,
    pub policy: String,
    /// The policy's integer parameters, in the order given.
    pub config: Vec<(String, i64)>,
    pub minor: u32,
    pub order: Order,
    /// What the recorder cannot see: "take", "source", "queue", "outcome", "park".
    pub unobserved: Vec<String>,
}

impl Header {
    /// A v1.1 header for the executor, its worker count and the model policy.
    pub fn new(executor: &str, workers: u32, policy: &str) -> Header {
        Header { executor: executor.into(), workers, policy: policy.into(), config: Vec::new(), minor: 1, order: Order::Seq, unobserved: Vec::new() }
    }
    /// Declares format v1.1 (the default).
    pub fn v1_1(mut self) -> Header {
        self.minor = 1;
        self
    }
    /// Declares format v1.0 (no `minor`), for a reader that knows only
    /// v1.0. Events with v1.1 fields (`time`, `future`, `priority`, a
    /// `stop`, …) are then errors.
    pub fn v1_0(mut self) -> Header {
        self.minor = 0;
        self
    }
    /// Adds a config parameter (local-cap, owner-lifo, spurious-polls, slice-us, …).
    pub fn config(mut self, key: &str, value: i64) -> Header {
        self.config.push((key.into(), value));
        self
    }
    /// Sets the order (v1.1 for [`Order::Intervals`]).
    pub fn order(mut self, o: Order) -> Header {
        self.order = o;
        self
    }
    /// Declares fields the recorder cannot observe (v1.1).
    pub fn unobserved(mut self, what: &[&str]) -> Header {
        self.unobserved = what.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The header of a black-box trace (the future wrapper): v1.1, policy
    /// "unknown", takes, queues and wake outcomes unobserved.
    pub fn black_box(executor: &str, workers: u32) -> Header {
        Header::new(executor, workers, "unknown").v1_1().unobserved(&["take", "queue", "outcome"])
    }

    fn uses_v1_1(&self) -> bool {
        self.order != Order::Seq
            || !self.unobserved.is_empty()
            || self.config.iter().any(|(k, _)| matches!(k.as_str(), "spurious-polls" | "slice-us" | "aging"))
    }

    /// The header's JSON line, with its newline.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"format\":\"execspec-trace\",\"version\":1");
        let minor = if self.uses_v1_1() { 1 } else { self.minor };
        if minor != 0 {
            let _ = write!(out, ",\"minor\":{}", minor);
        }
        out.push_str(",\"executor\":");
        json_string(&mut out, &self.executor);
        let _ = write!(out, ",\"workers\":{},\"policy\":", self.workers);
        json_string(&mut out, &self.policy);
        if !self.config.is_empty() {
            out.push_str(",\"config\":{");
            for (i, (k, v)) in self.config.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(&mut out, k);
                let _ = write!(out, ":{}", v);
            }
            out.push('}');
        }
        if self.order == Order::Intervals {
            out.push_str(",\"order\":\"intervals\"");
        }
        if !self.unobserved.is_empty() {
            out.push_str(",\"unobserved\":[");
            for (i, u) in self.unobserved.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(&mut out, u);
            }
            out.push(']');
        }
        out.push_str("}\n");
        out
    }

    /// The minor version the header declares (1 when a v1.1 field is used).
    pub fn effective_minor(&self) -> u32 {
        if self.uses_v1_1() {
            1
        } else {
            self.minor
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(e: &Event) -> String {
        let mut s = String::new();
        e.write_json(&mut s);
        s
    }

    #[test]
    fn event_json() {
        let mut e = Event::take(3, 1, Source::Steal, Some(0));
        e.seq = 10;
        e.call = Some(8);
        e.ret = Some(10);
        assert_eq!(line(&e), "{\"seq\":10,\"kind\":\"take\",\"task\":3,\"worker\":1,\"source\":\"steal\",\"victim\":0,\"call\":8,\"ret\":10}\n");
        let mut e = Event::spawn(7, None, Some(Queue::Local(2))).with_priority(-5);
        e.seq = 1;
        assert_eq!(line(&e), "{\"seq\":1,\"kind\":\"spawn\",\"task\":7,\"queue\":\"local:2\",\"priority\":-5}\n");
        let mut e = Event::poll_end(7, Some(0), PollResult::Error).with_future(2).with_time(123);
        e.seq = 4;
        assert_eq!(line(&e), "{\"seq\":4,\"kind\":\"poll-end\",\"task\":7,\"worker\":0,\"result\":\"error\",\"future\":2,\"time\":123}\n");
        assert!(e.is_v1_1());
        let e = Event::wake(2, None, Some(Outcome::Scheduled));
        assert!(!e.is_v1_1());
        assert_eq!(line(&Event::stop(None)), "{\"seq\":0,\"kind\":\"stop\"}\n");
        assert_eq!(line(&Event::stop(2).with_reason(StopReason::Unwound)), "{\"seq\":0,\"kind\":\"stop\",\"worker\":2,\"reason\":\"unwound\"}\n");
        assert_eq!(line(&Event::stop(None).with_reason(StopReason::Shutdown)), "{\"seq\":0,\"kind\":\"stop\",\"reason\":\"shutdown\"}\n");
        assert_eq!(line(&Event::stop(None).with_reason(StopReason::Panic)), "{\"seq\":0,\"kind\":\"stop\",\"reason\":\"panic\"}\n");
        // A scheduled wake's queue, set with with_queue.
        let e = Event::wake(4, 1, Some(Outcome::Scheduled)).with_queue(Queue::Local(1));
        assert_eq!(line(&e), "{\"seq\":0,\"kind\":\"wake\",\"task\":4,\"worker\":1,\"queue\":\"local:1\",\"outcome\":\"scheduled\"}\n");
        assert!(Event::wake(0, Some(1), None).is_v1_1());
    }

    /// Every constructor takes its worker as a number, Some or None.
    #[test]
    fn worker_argument_is_uniform() {
        assert_eq!(Event::take(1, 3, Source::Local, None), Event::take(1, Some(3), Source::Local, None));
        assert_eq!(Event::spawn(1, 3, None), Event::spawn(1, Some(3), None));
        assert_eq!(Event::poll_begin(1, 2).worker, Some(2));
        assert_eq!(Event::poll_end(1, None, PollResult::Ready).worker, None);
        assert_eq!(Event::requeue(1, Some(0), Queue::Global), Event::requeue(1, 0, Queue::Global));
        assert_eq!(Event::register(1, 5).worker, Some(5));
        assert_eq!(Event::park(4), Event::park(Some(4)));
        assert_eq!(Event::unpark(4).worker, Some(4));
        assert_eq!(Event::panic(1, 0, "x").worker, Some(0));
        assert_eq!(Event::stop(7).worker, Some(7));
        let w: Option<u32> = None;
        assert_eq!(Event::wake(1, w, None).worker, None);
    }

    #[test]
    fn detail_escaped() {
        let e = Event::panic(1, 0, "a \"b\"\\\n\u{1b}[2J\u{2028}é");
        assert_eq!(line(&e), "{\"seq\":0,\"kind\":\"panic\",\"task\":1,\"worker\":0,\"detail\":\"a \\\"b\\\"\\\\\\n\\u001b[2J\\u2028é\"}\n");
    }

    #[test]
    fn header_json() {
        let h = Header::new("x", 2, "worksteal").config("local-cap", 4);
        assert_eq!(
            h.to_json(),
            "{\"format\":\"execspec-trace\",\"version\":1,\"minor\":1,\"executor\":\"x\",\"workers\":2,\"policy\":\"worksteal\",\"config\":{\"local-cap\":4}}\n"
        );
        assert_eq!(
            h.clone().v1_0().to_json(),
            "{\"format\":\"execspec-trace\",\"version\":1,\"executor\":\"x\",\"workers\":2,\"policy\":\"worksteal\",\"config\":{\"local-cap\":4}}\n"
        );
        let h = Header::new("tokio", 4, "unknown").unobserved(&["take", "queue", "outcome"]);
        assert_eq!(h.to_json(), "{\"format\":\"execspec-trace\",\"version\":1,\"minor\":1,\"executor\":\"tokio\",\"workers\":4,\"policy\":\"unknown\",\"unobserved\":[\"take\",\"queue\",\"outcome\"]}\n");
        let h = Header::new("cb", 2, "worksteal").order(Order::Intervals);
        assert!(h.to_json().contains("\"minor\":1,") && h.to_json().contains("\"order\":\"intervals\""));
        let h = Header::new("busy", 1, "fifo").config("spurious-polls", 1).v1_0();
        assert_eq!(h.effective_minor(), 1, "a v1.1 field in the header makes it v1.1");
        assert_eq!(Header::new("a", 1, "fifo").effective_minor(), 1);
        assert_eq!(Header::new("a", 1, "fifo").v1_0().effective_minor(), 0);
    }
}
