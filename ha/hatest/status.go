package hatest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
)

// handleStatus prints each host's role, epoch, positions and routes.
func (e *InteractionEnv) handleStatus(c *Cmd) error {
	hosts := e.hosts
	if len(c.Args) > 0 {
		hosts = nil
		for _, a := range c.Args {
			hosts = append(hosts, a.Key)
		}
	}
	for _, h := range hosts {
		n, err := e.node(h)
		if err != nil {
			return err
		}
		e.printf("%s\n", e.status(h, n))
	}
	return nil
}

// status is one host's line: "A.1: primary e1 out=12 retained=12 in=10
// routes=[...]"; a crashed host says so.
func (e *InteractionEnv) status(h string, n *ha.Node) string {
	st := n.Status()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", h, st.Role)
	if e.crashed[h] {
		b.WriteString(" (crashed)")
	}
	sink := st.Frag == e.topo.SinkFrag()
	if st.Frag >= 0 && !sink {
		fmt.Fprintf(&b, " e%d", st.Epoch)
	}
	if !sink {
		fmt.Fprintf(&b, " out=%d retained=%d", st.OutputSeq, st.Retained)
	}
	var in []string
	for _, s := range st.InputSeqs {
		in = append(in, strconv.FormatUint(s, 10))
	}
	if len(in) > 0 {
		fmt.Fprintf(&b, " in=%s", strings.Join(in, ","))
	}
	if len(st.Down) > 0 {
		fmt.Fprintf(&b, " down=(%s)", strings.Join(st.Down, ","))
	}
	for f, r := range st.Routes {
		fmt.Fprintf(&b, "\n  f%d e%d v%d %s recv=(%s)", f, r.Epoch, r.Version, r.Primary, strings.Join(r.Receivers, ","))
	}
	return b.String()
}

// handleSink prints how many outputs the sink delivered, how many seqs
// came more than once, the sum of their values, and their seqs; with
// from= or to=, also each output whose seq is in that range, in delivery
// order.
func (e *InteractionEnv) handleSink(c *Cmd) error {
	from, err := c.int("from", 0)
	if err != nil {
		return err
	}
	to, err := c.int("to", math.MaxInt)
	if err != nil {
		return err
	}
	_, hasFrom := c.Arg("from")
	_, hasTo := c.Arg("to")
	seen := map[uint64]int{}
	dup := 0
	for _, s := range e.sink {
		seen[s]++
		if seen[s] == 2 {
			dup++
		}
	}
	e.printf("sink: delivered=%d distinct=%d repeated=%d sum=%g", len(e.sink), len(seen), dup, e.sinkSum)
	if len(e.sink) > 0 {
		e.printf(" seq=%s", ranges(e.sink))
	}
	e.printf("\n")
	if !hasFrom && !hasTo {
		return nil
	}
	for _, t := range e.sinkOut {
		if t.Seq >= uint64(from) && t.Seq <= uint64(to) {
			e.printf("  seq=%d %s t=%s value=%.4g\n", t.Seq, t.ID, time.Duration(t.Time), t.Value)
		}
	}
	return nil
}
