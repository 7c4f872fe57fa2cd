package explore

import (
	"context"
	"fmt"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
)

// ExploreAll model-checks c for every property in props on one exploration:
// the state graph is built once, the invariants, the take check and (if
// Safety is among props) the no-stuck-state check are made while it is
// built, and each liveness property is then decided on the same graph.
//
// The results are those that one Explore per property, in the order of
// props, would report up to the first violation: a violation found while
// the graph is built (an invariant, a refused take, a stuck state) is the
// one that the first property's own run reports, and ExploreAll returns
// the results up to and including the first Violated one. Every result
// carries the exploration's counts; its Elapsed is the time from the start
// until its verdict was known. opts.Property is ignored.
//
// Memory is that of the most demanding property: with a liveness property
// among props the graph is kept (about 5 bytes per transition on top of
// the store). The exploration uses opts.Parallel goroutines, and so does
// the liveness analysis (one property per goroutine).
func ExploreAll(ctx context.Context, c model.Config, props []Property, opts Options) ([]*Result, error) {
	if len(props) == 0 {
		return nil, fmt.Errorf("no property to check")
	}
	seen := map[Property]bool{}
	live := false
	for _, p := range props {
		if _, err := ParseProperty(string(p)); err != nil {
			return nil, err
		}
		if seen[p] {
			return nil, fmt.Errorf("property %s named twice", p)
		}
		seen[p] = true
		if p != Safety {
			live = true
		}
	}
	if len(props) == 1 {
		opts.Property = props[0]
		r, err := Explore(ctx, c, opts)
		if err != nil {
			return nil, err
		}
		return []*Result{r}, nil
	}
	// A liveness property's options decide what the explorer accepts
	// (symmetry, the number of processes).
	opts.Property = props[0]
	if live {
		for _, p := range props {
			if p != Safety {
				opts.Property = p
				break
			}
		}
	}
	e, stop, err := newSearch(ctx, c, opts)
	if err != nil {
		return nil, err
	}
	defer stop()
	e.live = live
	e.stuck = seen[Safety]
	e.start = time.Now()
	e.phase = "exploring"
	e.res = &Result{Property: string(props[0]), Config: e.cfg}
	var r *Result
	if !e.parallelWanted() {
		r = e.sequential()
	} else {
		r = e.parallel()
	}
	e.stats(r)
	if r.Verdict == checker.Violated {
		return []*Result{r}, nil
	}
	var out []*Result
	if r.Verdict == checker.Unknown {
		for _, p := range props {
			u := *r
			u.Property = string(p)
			out = append(out, &u)
		}
		return out, nil
	}
	for _, p := range props {
		var pr *Result
		if p == Safety {
			pr = &Result{Verdict: checker.Holds, Property: string(p), Config: e.cfg}
		} else {
			e.res = &Result{Property: string(p), Config: e.cfg}
			pr = e.liveness(p)
		}
		e.stats(pr)
		out = append(out, pr)
		if pr.Verdict == checker.Violated {
			break
		}
	}
	return out, nil
}
