//! The buffered form of an event: 80 bytes instead of [`Event`]'s 128 (what
//! a thread touches per event is most of what recording costs), and its
//! JSON line written without `core::fmt`.

use crate::event::{json_string, Event, Kind, Outcome, PollResult, Queue, Source, StopReason};

const NONE32: u32 = u32::MAX;
const HAS_CALL: u8 = 1;
const HAS_RET: u8 = 2;
const HAS_TIME: u8 = 4;
const HAS_PRIORITY: u8 = 8;

pub(crate) struct Packed {
    pub(crate) seq: u64,
    task: u64,
    call: u64,
    ret: u64,
    time: u64,
    future: u64,
    worker: u32,
    victim: u32,
    queue: u32, // 0 none, 1 global, 2 + n local:n
    priority: i32,
    kind: Kind,
    source: Option<Source>,
    result: Option<PollResult>,
    outcome: Option<Outcome>,
    reason: Option<StopReason>,
    flags: u8,
    detail: Option<Box<Box<str>>>,
}

impl Packed {
    #[inline]
    pub(crate) fn from(e: Event) -> Packed {
        let mut flags = 0;
        if e.call.is_some() {
            flags |= HAS_CALL;
        }
        if e.ret.is_some() {
            flags |= HAS_RET;
        }
        if e.time.is_some() {
            flags |= HAS_TIME;
        }
        if e.priority.is_some() {
            flags |= HAS_PRIORITY;
        }
        Packed {
            seq: e.seq,
            task: e.task,
            call: e.call.unwrap_or(0),
            ret: e.ret.unwrap_or(0),
            time: e.time.unwrap_or(0),
            future: e.future,
            worker: e.worker.unwrap_or(NONE32),
            victim: e.victim.unwrap_or(NONE32),
            queue: match e.queue {
                None => 0,
                Some(Queue::Global) => 1,
                Some(Queue::Local(n)) => n.saturating_add(2),
            },
            priority: e.priority.unwrap_or(0),
            kind: e.kind,
            source: e.source,
            result: e.result,
            outcome: e.outcome,
            reason: e.reason,
            flags,
            detail: e.detail.map(Box::new),
        }
    }

    /// Whether the event uses a field or value of format v1.1.
    pub(crate) fn is_v1_1(&self) -> bool {
        self.future != 0
            || self.flags & (HAS_TIME | HAS_PRIORITY) != 0
            || self.kind == Kind::Stop
            || self.result == Some(PollResult::Error)
            || (self.kind == Kind::Wake && self.task == 0)
    }

    /// Whether the event carries call or ret.
    pub(crate) fn has_interval(&self) -> bool {
        self.flags & (HAS_CALL | HAS_RET) != 0
    }

    /// Calls f with call and ret, those present.
    pub(crate) fn interval_ticks(&self, mut f: impl FnMut(u64)) {
        if self.flags & HAS_CALL != 0 {
            f(self.call);
        }
        if self.flags & HAS_RET != 0 {
            f(self.ret);
        }
    }

    /// Replaces call and ret, those present, by f of them.
    pub(crate) fn map_interval_ticks(&mut self, f: impl Fn(u64) -> u64) {
        if self.flags & HAS_CALL != 0 {
            self.call = f(self.call);
        }
        if self.flags & HAS_RET != 0 {
            self.ret = f(self.ret);
        }
    }

    pub(crate) fn kind_name(&self) -> &'static str {
        self.kind.name()
    }

    /// Appends the JSON line, with its newline.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"seq\":");
        num(out, self.seq);
        out.extend_from_slice(b",\"kind\":\"");
        out.extend_from_slice(self.kind.name().as_bytes());
        out.push(b'"');
        if self.task != 0 {
            field(out, b",\"task\":", self.task);
        }
        if self.worker != NONE32 {
            field(out, b",\"worker\":", u64::from(self.worker));
        }
        if let Some(s) = self.source {
            text(out, b",\"source\":\"", s.name());
        }
        if self.victim != NONE32 {
            field(out, b",\"victim\":", u64::from(self.victim));
        }
        match self.queue {
            0 => {}
            1 => out.extend_from_slice(b",\"queue\":\"global\""),
            n => {
                out.extend_from_slice(b",\"queue\":\"local:");
                num(out, u64::from(n - 2));
                out.push(b'"');
            }
        }
        if let Some(r) = self.result {
            text(out, b",\"result\":\"", r.name());
        }
        if let Some(o) = self.outcome {
            text(out, b",\"outcome\":\"", o.name());
        }
        if let Some(r) = self.reason {
            text(out, b",\"reason\":\"", r.name());
        }
        if self.flags & HAS_PRIORITY != 0 {
            out.extend_from_slice(b",\"priority\":");
            if self.priority < 0 {
                out.push(b'-');
            }
            num(out, u64::from(self.priority.unsigned_abs()));
        }
        if self.future != 0 {
            field(out, b",\"future\":", self.future);
        }
        if self.flags & HAS_TIME != 0 {
            field(out, b",\"time\":", self.time);
        }
        if self.flags & HAS_CALL != 0 {
            field(out, b",\"call\":", self.call);
        }
        if self.flags & HAS_RET != 0 {
            field(out, b",\"ret\":", self.ret);
        }
        if let Some(d) = &self.detail {
            out.extend_from_slice(b",\"detail\":");
            let mut s = String::new();
            json_string(&mut s, d);
            out.extend_from_slice(s.as_bytes());
        }
        out.extend_from_slice(b"}\n");
    }
}

#[inline]
pub(crate) fn field(out: &mut Vec<u8>, key: &[u8], v: u64) {
    out.extend_from_slice(key);
    num(out, v);
}

#[inline]
pub(crate) fn text(out: &mut Vec<u8>, key: &[u8], v: &str) {
    out.extend_from_slice(key);
    out.extend_from_slice(v.as_bytes());
    out.push(b'"');
}

/// Appends v in decimal.
#[inline]
fn num(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}
