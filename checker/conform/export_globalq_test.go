package conform

import "github.com/execspec/execspec/traces"

// NewWithoutIndex is New without the global queue's index for an
// order-intervals trace (a priority trace always has it): the checker finds
// and moves tasks in the global queue by scanning it, as it did before the
// index. Tests compare the two.
func NewWithoutIndex(h traces.Header) (*Conformance, error) {
	c, err := New(h)
	if err == nil && !c.priority {
		c.gq = nil
		if c.iv != nil {
			c.iv.WithoutIndex()
		}
	}
	return c, err
}
