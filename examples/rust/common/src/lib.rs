//! What the Rust examples share: their command-line arguments (`--name
//! value` pairs and flags, a seed, an output file) and the small futures
//! their workloads are made of (a one-shot signal, a yield, a random
//! number generator). The task-state word they share is the recorder's
//! own, `execspec_trace::state::StateWord`.

use std::future::Future;
use std::io::{self, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// A program's arguments: `--name value` pairs and `--flag`s, in any order.
pub struct Args {
    program: &'static str,
    args: Vec<String>,
}

impl Args {
    /// The process's arguments after the program name, for program (its
    /// name in error messages).
    pub fn from_env(program: &'static str) -> Args {
        Args::new(program, std::env::args().skip(1).collect())
    }

    /// Given arguments (tests, subcommands).
    pub fn new(program: &'static str, args: Vec<String>) -> Args {
        Args { program, args }
    }

    /// The arguments as given.
    pub fn all(&self) -> &[String] {
        &self.args
    }

    /// The first argument, if it is not an option (a subcommand).
    pub fn command(&self) -> Option<&str> {
        self.args.first().map(String::as_str).filter(|a| !a.starts_with("--"))
    }

    fn value(&self, name: &str) -> Option<&str> {
        let i = self.args.iter().position(|a| a == name)?;
        match self.args.get(i + 1) {
            Some(v) => Some(v),
            None => self.usage(&format!("{} wants a value", name)),
        }
    }

    /// Whether the flag is given.
    pub fn flag(&self, name: &str) -> bool {
        self.args.iter().any(|a| a == name)
    }

    /// The number after name, or def; a value that is not a number ends
    /// the program with status 2.
    pub fn num(&self, name: &str, def: u64) -> u64 {
        match self.value(name) {
            Some(v) => v.parse().unwrap_or_else(|_| self.usage(&format!("{} wants a number, not {:?}", name, v))),
            None => def,
        }
    }

    /// The text after name, or def.
    pub fn text<'a>(&'a self, name: &str, def: &'a str) -> &'a str {
        self.value(name).unwrap_or(def)
    }

    /// `--seed N`, or one drawn from the clock and the process id.
    pub fn seed(&self) -> u64 {
        let clock = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
        self.num("--seed", clock ^ u64::from(std::process::id()))
    }

    /// `--out FILE` (created, refusing a symbolic link), or standard output.
    pub fn out(&self) -> io::Result<Box<dyn Write + Send>> {
        Ok(match self.value("--out") {
            Some(p) => Box::new(execspec_trace::create_file(p)?),
            None => Box::new(io::stdout()),
        })
    }

    /// The recorder's options: the default (binary records formatted at
    /// the end, the cheapest on the hot path: buffered under order
    /// intervals, deferred under order seq), or with `--streaming` merged
    /// and written as the run goes.
    pub fn recorder_options(&self) -> execspec_trace::Options {
        if self.flag("--streaming") {
            execspec_trace::Options::streaming()
        } else {
            execspec_trace::Options::default()
        }
    }

    /// Ends the program with status 2 and the message.
    pub fn usage(&self, msg: &str) -> ! {
        eprintln!("{}: {}", self.program, msg);
        std::process::exit(2)
    }
}

/// Runs main; an error (a bad output path, a failed write) is printed as
/// one line and the program exits with status 1.
pub fn run(program: &str, main: impl FnOnce() -> io::Result<()>) {
    if let Err(e) = main() {
        eprintln!("{}: {}", program, e);
        std::process::exit(1);
    }
}

/// Records a worker's stop when dropped: at the end of the worker's loop,
/// or while its thread unwinds from a panic, where the recorder writes the
/// stop's reason `unwound` (the worker did not stop on its own terms).
pub struct StopGuard {
    pub rec: execspec_trace::Recorder,
    pub worker: u32,
}

impl Drop for StopGuard {
    fn drop(&mut self) {
        self.rec.stop(self.worker);
    }
}

/// A one-shot signal: fire() wakes the waiter registered by the last poll
/// of [`Wait`].
#[derive(Default)]
pub struct Signal {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Signal {
    /// Fires; with twice, the waiter's waker is called twice (a coalesced
    /// or late second wake).
    pub fn fire(&self, twice: bool) {
        self.fired.store(true, SeqCst);
        let w = self.waker.lock().unwrap().take();
        if let Some(w) = w {
            if twice {
                w.wake_by_ref();
            }
            w.wake();
        }
    }

    /// Whether it fired.
    pub fn fired(&self) -> bool {
        self.fired.load(SeqCst)
    }
}

/// Waits for a [`Signal`].
pub struct Wait(pub Arc<Signal>);

impl Future for Wait {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.fired() {
            return Poll::Ready(());
        }
        *self.0.waker.lock().unwrap() = Some(cx.waker().clone());
        if self.0.fired() {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

/// Wakes its own task and returns Pending once (woken during its poll:
/// NOTIFIED, re-queued by the executor).
pub struct YieldNow(bool);

/// A [`YieldNow`].
pub fn yield_now() -> YieldNow {
    YieldNow(false)
}

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

/// xorshift64*: the workloads' random choices, reproducible from a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Args {
        Args::new("test", s.split_whitespace().map(String::from).collect())
    }

    #[test]
    fn parses_values_flags_and_commands() {
        let a = args("busy --workers 3 --fifo --out x.jsonl");
        assert_eq!(a.command(), Some("busy"));
        assert_eq!(a.num("--workers", 1), 3);
        assert_eq!(a.num("--tasks", 7), 7);
        assert!(a.flag("--fifo") && !a.flag("--bug"));
        assert_eq!(a.text("--out", "-"), "x.jsonl");
        assert_eq!(args("--workers 2").command(), None);
        assert_eq!(args("--seed 5").seed(), 5);
    }

    /// A worker that panics records its stop as unwound; one that ends
    /// records a plain stop.
    #[test]
    fn stop_guard_records_unwound() {
        use execspec_trace::{Header, Options, Recorder};
        #[derive(Clone, Default)]
        struct Out(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Out {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let out = Out::default();
        let rec = Recorder::with_options(Header::new("guard", 2, "fifo"), out.clone(), Options { buffered: true, ..Options::default() });
        let r = rec.clone();
        let h = std::thread::spawn(move || {
            let _g = StopGuard { rec: r, worker: 1 };
            panic!("a task's poll panicked");
        });
        assert!(h.join().is_err());
        drop(StopGuard { rec: rec.clone(), worker: 0 });
        rec.finish().unwrap();
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{}", text);
        assert!(lines[1].contains("\"worker\":1,\"reason\":\"unwound\""), "{}", lines[1]);
        assert!(lines[2].ends_with("\"kind\":\"stop\",\"worker\":0}"), "{}", lines[2]);
    }

    #[test]
    fn rng_is_reproducible() {
        let (mut a, mut b) = (Rng::new(9), Rng::new(9));
        let xs: Vec<u64> = (0..5).map(|_| a.next()).collect();
        assert_eq!(xs, (0..5).map(|_| b.next()).collect::<Vec<_>>());
        assert!(xs.windows(2).all(|w| w[0] != w[1]));
    }
}
