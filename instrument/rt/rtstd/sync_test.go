package rtstd_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/instrument/rt/rtstd"
	"github.com/execspec/execspec/properties/control"
)

// abba is a program with a lock-order deadlock that some schedules hit.
func abba() {
	var a, b rtstd.Mutex
	var wg rtstd.WaitGroup
	wg.Add(2)
	rt.Go(func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock(); wg.Done() })
	rt.Go(func() { b.Lock(); a.Lock(); a.Unlock(); b.Unlock(); wg.Done() })
	wg.Wait()
}

func TestDeadlockABBA(t *testing.T) {
	found := 0
	for seed := range uint64(50) {
		_, err := rt.Run(t, rt.Config{Strategy: control.Random(seed)}, func(*testing.T) { abba() })
		var h *rt.HangError
		if errors.As(err, &h) {
			if h.Leak || len(h.Blocked) != 3 {
				t.Fatalf("%v", err)
			}
			// Each names the line of its caller, past this
			// package's frames (sync.go).
			for _, b := range h.Blocked {
				if !strings.HasPrefix(filepath.Base(b.Where), "sync_test.go:") {
					t.Fatalf("%s blocked in %s at %s, want a line of sync_test.go", b.Name(), b.Op, b.Where)
				}
			}
			found++
			t.Log(err)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if found == 0 {
		t.Fatal("the AB-BA deadlock was not found in 50 runs")
	}
}
