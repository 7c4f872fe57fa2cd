package chaselev_test

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/lin"
	"github.com/execspec/execspec/internal/chaselev"
)

var rates = flag.Int("rates", 0, "measure detection rates over this many runs per configuration (slow; not for CI)")

// linOps turns a deque history into the checker's queue operations: the
// owner pushes and pops at the tail, thieves take from the head.
func linOps(ops []chaselev.Op) []lin.QueueOp {
	out := make([]lin.QueueOp, 0, len(ops))
	for _, op := range ops {
		q := lin.QueueOp{Client: op.Client, Value: op.Value, Call: op.Call, Return: op.Return}
		switch {
		case op.Kind == chaselev.OpPush && op.Full, op.Abort:
			q.Kind, q.Value = lin.Abort, 0
		case op.Kind == chaselev.OpPush:
			q.Kind = lin.Push
		case op.Kind == chaselev.OpPop:
			q.Kind = lin.TakeTail
		default:
			q.Kind = lin.TakeHead
		}
		out = append(out, q)
	}
	return out
}

// verdict runs one stress run and checks it both ways: duplicates counted
// directly, and linearizability of the history against the deque spec.
func verdict(t testing.TB, cfg chaselev.StressConfig) (dup bool, linV checker.Verdict, n int) {
	res, err := chaselev.Stress(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := lin.CheckQueue("deque", linOps(res.Ops), lin.Options{Complete: true, Budget: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lost) > 0 {
		t.Fatalf("lost values %v (racy=%v)", res.Lost, cfg.Racy)
	}
	return len(res.Duplicates) > 0, c.Verdict, len(res.Ops)
}

func pinnable(t testing.TB) bool {
	cpus, err := chaselev.CPUs()
	if err != nil || len(cpus) < 2 {
		return false
	}
	unpin, err := chaselev.Pin(cpus[0])
	if err != nil {
		t.Logf("cannot pin: %v", err)
		return false
	}
	unpin()
	return true
}

// The correct deque passes every run; the racy one is caught (an element
// taken twice, and the history not linearizable) within a few runs.
func TestStressCorrectPassesRacyCaught(t *testing.T) {
	pinned := pinnable(t)
	for run := range 3 {
		dup, v, n := verdict(t, chaselev.StressConfig{Pinned: pinned, Rounds: 300})
		if dup || v != checker.Holds {
			t.Fatalf("correct deque, run %d: duplicates %v, linearizability %s (%d ops)", run, dup, v, n)
		}
	}
	caught := 0
	const runs = 20
	for run := range runs {
		dup, v, _ := verdict(t, chaselev.StressConfig{Racy: true, Pinned: pinned, Rounds: 300})
		if dup != (v == checker.Violated) {
			t.Fatalf("racy run %d: duplicates %v but linearizability %s", run, dup, v)
		}
		if dup {
			caught++
			if caught >= 2 {
				t.Logf("racy deque caught in %d of %d runs (pinned %v)", caught, run+1, pinned)
				return
			}
		}
	}
	t.Fatalf("racy deque caught in %d of %d runs (pinned %v)", caught, runs, pinned)
}

// Sequential checks of the deque's semantics, with the linearizability
// checker as the oracle.
func TestSequential(t *testing.T) {
	for _, racy := range []bool{false, true} {
		var clk chaselev.Clock
		d := chaselev.New(4)
		if racy {
			d = chaselev.NewRacy(4)
		}
		l := chaselev.NewLog(&clk, 0)
		for i := int64(1); i <= 4; i++ {
			if !l.Push(d, i) {
				t.Fatal("push into a deque with room failed")
			}
		}
		if l.Push(d, 5) {
			t.Fatal("push into a full deque succeeded")
		}
		if x := l.Pop(d); x != 4 {
			t.Fatalf("pop = %d, want 4 (owner end)", x)
		}
		if x, r := l.Steal(d); x != 1 || r != chaselev.Stolen {
			t.Fatalf("steal = %d %v, want 1 (steal end)", x, r)
		}
		for _, want := range []int64{3, 2, 0} {
			if x := l.Pop(d); x != want {
				t.Fatalf("pop = %d, want %d", x, want)
			}
		}
		if _, r := l.Steal(d); r != chaselev.Empty {
			t.Fatalf("steal from empty = %v", r)
		}
		c, err := lin.CheckQueue("deque", linOps(l.Ops()), lin.Options{Complete: true})
		if err != nil || c.Verdict != checker.Holds {
			t.Fatalf("sequential history: %v %v %s", err, c.Verdict, c.Detail)
		}
	}
}

// TestDetectionRates measures how often the racy deque is caught, pinned
// and unpinned, and checks that the correct deque is never flagged:
//
//	go test ./internal/chaselev -run TestDetectionRates -rates 200 -v
func TestDetectionRates(t *testing.T) {
	if *rates == 0 {
		t.Skip("run with -rates N")
	}
	pinned := pinnable(t)
	for _, pin := range []bool{true, false} {
		if pin && !pinned {
			t.Log("pinning unavailable: skipping the pinned rows")
			continue
		}
		for _, racy := range []bool{true, false} {
			dups, illegal, unknown := 0, 0, 0
			ops := 0
			start := time.Now()
			for range *rates {
				dup, v, n := verdict(t, chaselev.StressConfig{Racy: racy, Pinned: pin, Rounds: 300})
				ops += n
				if dup {
					dups++
				}
				switch v {
				case checker.Violated:
					illegal++
				case checker.Unknown:
					unknown++
				}
			}
			t.Logf("%s", fmt.Sprintf("pinned=%-5v racy=%-5v runs=%d duplicate=%d (%.0f%%) illegal=%d (%.0f%%) unknown=%d ops/run=%d time=%v",
				pin, racy, *rates, dups, 100*float64(dups)/float64(*rates), illegal, 100*float64(illegal)/float64(*rates), unknown, ops / *rates, time.Since(start).Round(time.Millisecond)))
			if !racy && (dups > 0 || illegal > 0) {
				t.Errorf("correct deque flagged")
			}
		}
	}
}
