package explore

import (
	"encoding/base64"
	"fmt"
	"math"
	mbits "math/bits"
)

// Sketch estimates how many distinct states a set holds, in 16 KiB
// (HyperLogLog with 2^14 registers: about 0.8 % standard error), so that
// the states visited by the searches of a swarm can be united without
// storing them. Equal states add the same register values whatever the
// search that met them; Merge of two sketches is the sketch of the union.
//
// The zero Sketch is not usable; NewSketch makes one. Not safe for
// concurrent use.
type Sketch struct{ reg []uint8 }

const sketchBits = 14

// NewSketch returns an empty sketch.
func NewSketch() *Sketch { return &Sketch{reg: make([]uint8, 1<<sketchBits)} }

// Add adds a packed state.
func (s *Sketch) Add(w []uint64) {
	h := uint64(0x243f6a8885a308d3)
	for _, x := range w {
		h ^= x
		h *= 0xff51afd7ed558ccd
		h ^= h >> 33
		h *= 0xc4ceb9fe1a85ec53
		h ^= h >> 33
	}
	i := h >> (64 - sketchBits)
	rho := uint8(mbits.LeadingZeros64(h<<sketchBits|1<<(sketchBits-1)) + 1)
	if rho > s.reg[i] {
		s.reg[i] = rho
	}
}

// Merge adds every state of o.
func (s *Sketch) Merge(o *Sketch) {
	for i, r := range o.reg {
		if r > s.reg[i] {
			s.reg[i] = r
		}
	}
}

// Estimate returns the estimated number of distinct states added.
func (s *Sketch) Estimate() float64 {
	m := float64(len(s.reg))
	sum, zeros := 0.0, 0
	for _, r := range s.reg {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	est := 0.7213 / (1 + 1.079/m) * m * m / sum
	if est <= 2.5*m && zeros > 0 {
		est = m * math.Log(m/float64(zeros)) // linear counting for small sets
	}
	return est
}

// MarshalText encodes the sketch as base64, for result files.
func (s *Sketch) MarshalText() ([]byte, error) {
	return []byte(base64.StdEncoding.EncodeToString(s.reg)), nil
}

// UnmarshalText decodes what MarshalText wrote.
func (s *Sketch) UnmarshalText(b []byte) error {
	reg, err := base64.StdEncoding.DecodeString(string(b))
	if err != nil {
		return fmt.Errorf("sketch: %w", err)
	}
	if len(reg) != 1<<sketchBits {
		return fmt.Errorf("sketch: %d registers, want %d", len(reg), 1<<sketchBits)
	}
	for _, r := range reg {
		if r > 64-sketchBits+1 {
			return fmt.Errorf("sketch: register value %d out of range", r)
		}
	}
	s.reg = reg
	return nil
}
