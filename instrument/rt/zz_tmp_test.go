package rt

import (
	"testing"

	"github.com/execspec/execspec/properties/control/sched"
)

type zeroS struct{}

func (zeroS) Choose(sched.Decision) int { return 0 }

func BenchmarkStepZero(b *testing.B) {
	inTest(b, func(t *testing.T) {
		s, _ := NewSession(t, Options{Seed: 1})
		defer s.Close()
		for b.Loop() {
			if _, err := s.RunWith(Config{Strategy: zeroS{}}, poolish); err != nil {
				t.Fatal(err)
			}
		}
	})
}
