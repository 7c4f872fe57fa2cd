package executor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
)

// TestParts: the pieces alone: worker identity, Wait and Close accounting,
// a Promise's Join and Poll, and PollTask's conversions.
func TestParts(t *testing.T) {
	ids := executor.NewWorkerIDs(2)
	if ids.Current() != -1 {
		t.Fatal("the test goroutine passes for a worker")
	}
	tally := executor.Tally{IDs: ids}
	p := executor.NewPromise(ids)
	if err := tally.Add(executor.FutureFunc(nil)); err != executor.ErrNilFuture {
		t.Errorf("Add(nil) = %v", err)
	}
	if err := tally.Add(executor.FutureFunc(func(*executor.Context) (any, bool) { return 1, true })); err != nil {
		t.Fatal(err)
	}
	inside := make(chan [3]error, 1)
	go ids.Run(1, func() {
		_, jerr := p.Join()
		inside <- [3]error{tally.Wait(), tally.Close(), jerr}
		if ids.Current() != 1 {
			t.Error("Current inside Run is not the worker")
		}
	})
	for _, err := range <-inside {
		if err != executor.ErrWaitInTask {
			t.Errorf("from a worker: %v, want ErrWaitInTask", err)
		}
	}
	waited := make(chan error)
	go func() { waited <- tally.Wait() }()
	select {
	case <-waited:
		t.Fatal("Wait returned with a task counted")
	case <-time.After(10 * time.Millisecond):
	}
	if _, ok := p.Poll(executor.NewContext(executor.Waker{}, -1)); ok {
		t.Fatal("Poll of an unfinished promise was Ready")
	}
	v, done, err := executor.PollTask(executor.FutureFunc(func(*executor.Context) (any, bool) { return 5, true }), nil, 1)
	if !p.Complete(v, err) || p.Complete(6, nil) || !done {
		t.Fatal("Complete: the first call must count, and only it")
	}
	tally.Done()
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if v, err := p.Join(); v != 5 || err != nil {
		t.Errorf("Join = %v, %v", v, err)
	}
	if err := tally.Close(); err != nil || tally.Close() != executor.ErrClosed || tally.Add(executor.FutureFunc(func(*executor.Context) (any, bool) { return nil, true })) != executor.ErrClosed {
		t.Errorf("Close: %v", err)
	}
	var pe *executor.PanicError
	if _, done, err := executor.PollTask(executor.FutureFunc(func(*executor.Context) (any, bool) { panic(3) }), nil, 9); !done || !errors.As(err, &pe) || pe.Task != 9 || pe.Value != 3 {
		t.Errorf("a panic: %v %v", done, err)
	}
	boom := errors.New("boom")
	var fe *executor.FailedError
	if _, done, err := executor.PollTask(executor.FutureFunc(func(*executor.Context) (any, bool) { return executor.Failed{Err: boom}, true }), nil, 2); !done || !errors.As(err, &fe) || !errors.Is(err, boom) {
		t.Errorf("a Failed value: %v %v", done, err)
	}
}
