//! A task-state word for executors recorded under the interval contract
//! (`order: intervals`) or in their own critical sections: the model's
//! task state and a version in one `AtomicU64`, each transition a load, a
//! tick and a compare-and-swap (the tick redrawn when the CAS fails).
//!
//! Why a version. Of two transitions of one word, the later one loaded
//! after the earlier one's CAS, so it drew its tick later: seq order is the
//! word's order. That holds only if every transition changes the word; a
//! wake that finds the task QUEUED (coalesced) or DONE (late) changes no
//! state, so the version, bumped by every transition, makes its CAS a real
//! write and orders it with the others. An executor without a state word
//! of its own reads examples/rust/README.md ("Without a task-state word").
//!
//! ```
//! use execspec_trace::state::{StateWord, QUEUED, RUNNING, WAITING};
//! use execspec_trace::{Event, Header, Outcome, Recorder};
//! let rec = Recorder::new(Header::new("doc", 1, "fifo"), std::io::sink());
//! let word = StateWord::new(WAITING);
//! let mut op = rec.op();
//! let (tick, outcome) = word.wake(&mut op);
//! assert_eq!((outcome, word.state()), (Outcome::Scheduled, QUEUED));
//! op.emit(Event { seq: tick, ..Event::wake(1, None, Some(outcome)) });
//! drop(op);
//! let mut op = rec.op();
//! let (_, found) = word.take(&mut op);
//! assert_eq!((found, word.state()), (QUEUED, RUNNING));
//! ```

use crate::event::Outcome;
use crate::recorder::Op;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

/// Pending returned, the waker registered: a wake schedules the task.
pub const WAITING: u8 = 0;
/// In a queue (or about to be pushed by the transition that made it so).
pub const QUEUED: u8 = 1;
/// Taken by a worker, being polled.
pub const RUNNING: u8 = 2;
/// Woken while RUNNING: the poll's end re-queues it.
pub const NOTIFIED: u8 = 3;
/// Finished: never polled again.
pub const DONE: u8 = 4;

const VERSION: u64 = 1 << 8;

/// A task's state word: the state in the low byte, a version above it that
/// every transition bumps. Any thread.
#[derive(Debug)]
pub struct StateWord(AtomicU64);

impl StateWord {
    /// A word in state s, version 0.
    pub const fn new(s: u8) -> StateWord {
        StateWord(AtomicU64::new(s as u64))
    }

    /// The current state (a load; for assertions and decisions that a
    /// transition does not need to be ordered with).
    pub fn state(&self) -> u8 {
        (self.0.load(SeqCst) & 0xff) as u8
    }

    /// The raw word (state and version).
    pub fn raw(&self) -> &AtomicU64 {
        &self.0
    }

    /// One transition under the contract: loads the word, calls f with the
    /// state, draws f's number of consecutive ticks (at least one) in op,
    /// and compare-and-swaps the word to f's state with the version bumped;
    /// when the CAS fails it starts again (f is called again: keep it
    /// free of effects it cannot repeat). Returns the first tick (the seq
    /// of the transition's event; the next ones, for events that take
    /// effect in the same step, follow it), the state replaced and f's
    /// value.
    pub fn transition<T>(&self, op: &mut Op<'_>, mut f: impl FnMut(u8) -> (u8, u64, T)) -> (u64, u8, T) {
        loop {
            let cur = self.0.load(SeqCst);
            let (next, ticks, x) = f((cur & 0xff) as u8);
            let tick = op.ticks(ticks.max(1));
            let new = ((cur & !0xff).wrapping_add(VERSION)) | u64::from(next);
            if self.0.compare_exchange(cur, new, SeqCst, SeqCst).is_ok() {
                return (tick, (cur & 0xff) as u8, x);
            }
        }
    }

    /// WAKE as the model has it: WAITING → QUEUED (`scheduled`: the caller
    /// pushes the task, inside the same op for a push's interval), RUNNING
    /// → NOTIFIED, QUEUED or NOTIFIED → unchanged (`coalesced`), DONE →
    /// unchanged (`late`). Returns the wake's tick and outcome.
    pub fn wake(&self, op: &mut Op<'_>) -> (u64, Outcome) {
        let (tick, _, outcome) = self.transition(op, |s| match s {
            WAITING => (QUEUED, 1, Outcome::Scheduled),
            RUNNING => (NOTIFIED, 1, Outcome::Notified),
            QUEUED | NOTIFIED => (s, 1, Outcome::Coalesced),
            _ => (s, 1, Outcome::Late),
        });
        (tick, outcome)
    }

    /// The take as the model has it: the task becomes RUNNING (the take is
    /// this transition, so a wake after it finds the task RUNNING). Returns
    /// the tick (a take's seq, its `ret` under the interval contract) and
    /// the state found, QUEUED in a correct executor.
    pub fn take(&self, op: &mut Op<'_>) -> (u64, u8) {
        let (tick, found, ()) = self.transition(op, |_| (RUNNING, 1, ()));
        (tick, found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Header, Options, Recorder};

    /// Every transition bumps the version, a coalesced or late wake too,
    /// and each takes the tick it drew; a two-tick step returns the first.
    #[test]
    fn transitions_follow_the_model() {
        for opts in [Options::streaming(), Options { deferred: true, ..Options::default() }] {
            let rec = Recorder::with_options(Header::new("state", 1, "fifo"), std::io::sink(), opts);
            let w = StateWord::new(WAITING);
            let mut op = rec.op();
            let (mut last, mut versions) = (0, vec![w.raw().load(SeqCst) >> 8]);
            macro_rules! step {
                ($w:expr, $want:expr, $tick:expr) => {{
                    assert_eq!($w.state(), $want);
                    assert!($tick > last, "tick {} after {}", $tick, last);
                    last = $tick;
                    versions.push($w.raw().load(SeqCst) >> 8);
                }};
            }
            let (t, o) = w.wake(&mut op);
            assert_eq!(o, Outcome::Scheduled);
            step!(w, QUEUED, t);
            let (t, o) = w.wake(&mut op);
            assert_eq!(o, Outcome::Coalesced);
            step!(w, QUEUED, t);
            let (t, found) = w.take(&mut op);
            assert_eq!(found, QUEUED);
            step!(w, RUNNING, t);
            let (t, o) = w.wake(&mut op);
            assert_eq!(o, Outcome::Notified);
            step!(w, NOTIFIED, t);
            let (t, from, ()) = w.transition(&mut op, |s| if s == NOTIFIED { (QUEUED, 2, ()) } else { (WAITING, 1, ()) });
            assert_eq!(from, NOTIFIED);
            step!(w, QUEUED, t);
            let (t, _, ()) = w.transition(&mut op, |_| (DONE, 1, ()));
            assert!(t >= last + 2, "the two-tick step used two ticks");
            step!(w, DONE, t);
            let (t, o) = w.wake(&mut op);
            assert_eq!(o, Outcome::Late);
            step!(w, DONE, t);
            assert_eq!(versions, (0..8).collect::<Vec<u64>>());
            assert!(last > 0);
        }
    }

    /// Threads waking one word at once: every wake gets its own tick, and
    /// the word's version counts them all (no CAS lost).
    #[test]
    fn concurrent_wakes_are_all_ordered() {
        let rec = Recorder::new(Header::new("state", 4, "fifo"), std::io::sink());
        let w = std::sync::Arc::new(StateWord::new(RUNNING));
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let (rec, w) = (rec.clone(), w.clone());
                std::thread::spawn(move || {
                    let mut ticks = Vec::new();
                    for _ in 0..1000 {
                        let mut op = rec.op();
                        ticks.push(w.wake(&mut op).0);
                    }
                    ticks
                })
            })
            .collect();
        let mut all: Vec<u64> = hs.into_iter().flat_map(|h| h.join().unwrap()).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 4000);
        assert_eq!(w.raw().load(SeqCst) >> 8, 4000);
        assert_eq!(w.state(), NOTIFIED);
        rec.finish().unwrap();
    }
}
