package tests

import "testing"

func TestWrapped(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 1
	if <-ch != 1 {
		t.Fatal("lost")
	}
}

func TestUnnamed(*testing.T) {}

// TestDriver runs the runtime itself.
//
//execspec:nocontrol
func TestDriver(t *testing.T) { <-make(chan int, 1) }

func TestMain(m *testing.M) { m.Run() }

func Testlower(t *testing.T) {}

func BenchmarkNot(b *testing.B) {}
