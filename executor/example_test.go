package executor_test

import (
	"fmt"
	"sync"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// A task that awaits another task's handle: the second task is woken when
// the first completes.
func Example() {
	ex := executor.NewWorkSteal(executor.WorkStealConfig{})
	first, _ := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) {
		return 20, true
	}))
	second, _ := ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
		v, ok := first.Poll(cx) // Pending until first is DONE; then Ready
		if !ok {
			return nil, false
		}
		return v.(int) + 22, true
	}))
	v, err := second.Join()
	fmt.Println(v, err)
	fmt.Println(ex.Close())
	// Output:
	// 42 <nil>
	// <nil>
}

// countKinds counts events by kind. Record is called from the executor's
// goroutines and from the spawning one, concurrently: hence the mutex.
type countKinds struct {
	mu sync.Mutex
	n  map[traces.Kind]int
}

func (c *countKinds) Record(e traces.Event) {
	c.mu.Lock()
	c.n[e.Kind]++
	c.mu.Unlock()
}

// Recording the events of a run.
func ExampleReporter() {
	ex := executor.NewFIFO()
	c := &countKinds{n: map[traces.Kind]int{}}
	ex.SetRecorder(c)
	polls := 0
	ex.Spawn(executor.FutureFunc(func(cx *executor.Context) (any, bool) {
		if polls++; polls < 3 {
			cx.Waker().Wake() // woken during its own poll: NOTIFIED, re-queued
			return nil, false
		}
		return nil, true
	}))
	ex.Close()
	kinds := c.n
	fmt.Println("spawns", kinds[traces.KindSpawn], "takes", kinds[traces.KindTake],
		"wakes", kinds[traces.KindWake], "requeues", kinds[traces.KindRequeue])
	fmt.Println(ex.Describe().Policy)
	// Output:
	// spawns 1 takes 3 wakes 2 requeues 2
	// fifo
}

// batchCounter is a BatchRecorder: the built-in executors hand it their
// events in batches, packed.
type batchCounter struct {
	countKinds
	singles int
}

func (c *batchCounter) Record(e traces.Event) { // panics only, here none
	c.countKinds.Record(e)
	c.mu.Lock()
	c.singles++
	c.mu.Unlock()
}

func (c *batchCounter) RecordPacked(batch []traces.Packed) {
	c.mu.Lock()
	for _, p := range batch {
		c.n[p.Event().Kind]++
	}
	c.mu.Unlock()
}

// Recording into a BatchRecorder (traces.Log is one): the events come in
// batches, and every event of the tasks Wait waited for is there when Wait
// returns.
func ExampleBatchRecorder() {
	ex := executor.NewWorkSteal(executor.WorkStealConfig{})
	c := &batchCounter{countKinds: countKinds{n: map[traces.Kind]int{}}}
	ex.SetRecorder(c)
	for range 1000 {
		ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { return nil, true }))
	}
	ex.Wait()
	c.mu.Lock()
	fmt.Println("spawns", c.n[traces.KindSpawn], "takes", c.n[traces.KindTake], "ends", c.n[traces.KindPollEnd])
	fmt.Println("one by one:", c.singles)
	c.mu.Unlock()
	ex.Close()
	// Output:
	// spawns 1000 takes 1000 ends 1000
	// one by one: 0
}

// A task that panics fails alone; its Join returns the panic with the
// stack, and the executor keeps running.
func ExamplePanicError() {
	ex := executor.NewFIFO()
	h, _ := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) {
		panic("out of luck")
	}))
	_, err := h.Join()
	pe := err.(*executor.PanicError)
	fmt.Println(pe.Value, len(pe.Stack) > 0)
	h, _ = ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { return "still running", true }))
	fmt.Println(h.Join())
	ex.Close()
	// Output:
	// out of luck true
	// still running <nil>
}

// Counting what an executor does.
func ExampleMonitored() {
	m := executor.NewMonitored(executor.NewWorkSteal(executor.WorkStealConfig{}))
	for i := range 10 {
		m.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { return i, true }))
	}
	m.Close()
	s := m.Stats()
	fmt.Println(s.Spawned, s.Completed, s.Failed, s.Polls)
	// Output: 10 10 0 10
}

// The built-in executors by name, as `verify run --executor NAME` uses them.
func ExampleBuiltin() {
	for _, name := range executor.BuiltinNames() {
		newEx, _ := executor.Builtin(name)
		ex := newEx()
		h := ex.(executor.Describer).Describe()
		fmt.Println(name, h.Policy, h.Workers)
		ex.Close()
	}
	// Output:
	// fifo fifo 1
	// monitored worksteal 2
	// priority priority 1
	// retry retry 1
	// timeslice timeslice 1
	// wakeable fifo 2
	// worksteal worksteal 2
}
