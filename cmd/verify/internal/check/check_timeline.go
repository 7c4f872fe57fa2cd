package check

import (
	"net/url"
	"path/filepath"

	"github.com/execspec/execspec/traces"
	"github.com/execspec/execspec/traces/picture"
)

// checkTimeline builds verify check's --html page while the trace streams
// by, in memory bounded by picture.MaxHTMLEvents whatever the trace's
// length; nil when no page is asked for.
type checkTimeline struct {
	tl *picture.Timeline
}

func newCheckTimeline(file string, h traces.Header) *checkTimeline {
	if file == "" {
		return nil
	}
	return &checkTimeline{tl: picture.NewTimeline(h)}
}

func (c *checkTimeline) add(e traces.Event) {
	if c != nil {
		c.tl.Add(e)
	}
}

// write writes the page to name, never onto the trace read (input). The
// page's window ends shortly after the violation: the events after it are
// counted, not drawn.
func (c *checkTimeline) write(name, input string, mark *picture.Mark) error {
	if c == nil {
		return nil
	}
	return traces.WriteOutput(name, func(o *traces.OutputFile) error { return c.tl.WriteHTML(o, mark) }, input)
}

// holdAfter keeps only a few events after the violating event i in the
// page; the rest are counted.
func (c *checkTimeline) holdAfter(i int) {
	if c != nil {
		c.tl.HoldFrom(i + 50)
	}
}

// linkLin writes the page again with a link to porcupine's page about the
// same trace (lin, written on a linearizability violation), so that one
// reaches it from the other. Nothing to do without both pages.
func (c *checkTimeline) linkLin(name, input string, mark *picture.Mark, lin string) error {
	if c == nil || lin == "" {
		return nil
	}
	m := picture.Mark{Index: -1, Message: "the history is not linearizable"}
	if mark != nil {
		m = *mark
	}
	rel, err := filepath.Rel(filepath.Dir(name), lin)
	if err != nil {
		rel = lin
	}
	m.Links = map[string]string{"linearizability: porcupine's page for this trace": (&url.URL{Path: filepath.ToSlash(rel)}).String()}
	return c.write(name, input, &m)
}
