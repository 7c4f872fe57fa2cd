package rtstd_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/instrument/rt/rtstd"
	"github.com/execspec/execspec/properties/control"
)

// crossed is a program with a lock-order deadlock that some schedules
// hit, across the two lock types: one goroutine takes mu then rw, the
// other reads under rw then takes mu.
func crossed() {
	var mu rtstd.Mutex
	var rw rtstd.RWMutex
	var wg rtstd.WaitGroup
	wg.Add(2)
	rt.Go(func() { mu.Lock(); rw.Lock(); rw.Unlock(); mu.Unlock(); wg.Done() })
	rt.Go(func() { rw.RLock(); mu.Lock(); mu.Unlock(); rw.RUnlock(); wg.Done() })
	wg.Wait()
}

func TestDeadlockCrossed(t *testing.T) {
	found := 0
	for seed := range uint64(50) {
		_, err := rt.Run(t, rt.Config{Strategy: control.Random(seed)}, func(*testing.T) { crossed() })
		var h *rt.HangError
		if errors.As(err, &h) {
			if h.Leak || len(h.Blocked) != 3 {
				t.Fatalf("%v", err)
			}
			found++
			t.Log(err)
			// Each is named with its operation at its caller's line,
			// past this package's frames (sync.go).
			var ops []string
			for _, b := range h.Blocked {
				ops = append(ops, b.Op)
				if !strings.HasPrefix(filepath.Base(b.Where), "sync_test.go:") {
					t.Fatalf("%s blocked in %s at %s, want a line of sync_test.go", b.Name(), b.Op, b.Where)
				}
			}
			if want := []string{"WaitGroup.Wait", "RWMutex.Lock", "Mutex.Lock"}; !slices.Equal(ops, want) {
				t.Fatalf("blocked in %v, want %v", ops, want)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if found == 0 {
		t.Fatal("the lock-order deadlock was not found in 50 runs")
	}
}
