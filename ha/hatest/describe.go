package hatest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/streamha/streamha/ha"
)

// String is the envelope as a transcript shows it: "from->to message".
func (env *envelope) String() string {
	return fmt.Sprintf("#%d %s->%s %s", env.id, env.from, env.to, DescribeMessage(&env.m))
}

// DescribeMessage is a one-line description of m for a transcript, e.g.
// "route f0 e1 v0 primary=A.1 recv=(A.1) resume" or "data s0 e0 seq=1..10".
func DescribeMessage(m *ha.Message) string {
	var b strings.Builder
	b.WriteString(m.Kind.String())
	switch m.Kind {
	case ha.KindData:
		fmt.Fprintf(&b, " s%d e%d", m.Stream, m.Epoch)
		if m.Type != "" {
			fmt.Fprintf(&b, " %s seq=%d", m.Type, m.Seq)
		}
		seqs := make([]uint64, 0, len(m.Tuples))
		end := false
		for i := range m.Tuples {
			if m.Tuples[i].IsEnd() {
				end = true
				continue
			}
			seqs = append(seqs, m.Tuples[i].Seq)
		}
		if len(seqs) > 0 {
			fmt.Fprintf(&b, " seq=%s", ranges(seqs))
		}
		if end {
			b.WriteString(" end")
		}
	case ha.KindRoute:
		if m.Route == nil {
			fmt.Fprintf(&b, " %s e%d", m.Type, m.Epoch)
			if m.Seq > 0 {
				fmt.Fprintf(&b, " f%d", m.Seq-1)
			}
			break
		}
		b.WriteString(" " + DescribeRoute(*m.Route))
	case ha.KindResume:
		fmt.Fprintf(&b, " e%d s%d after=%d", m.Epoch, m.Stream, m.Seq)
		if m.Type != "" {
			b.WriteString(" " + m.Type)
		}
	case ha.KindAck:
		fmt.Fprintf(&b, " e%d s%d seq=%d level=%d", m.Epoch, m.Stream, m.Seq, m.Level)
	case ha.KindStrategy:
		fmt.Fprintf(&b, " %s e%d", m.Type, m.Epoch)
		if m.Seq != 0 {
			fmt.Fprintf(&b, " seq=%d", m.Seq)
		}
		if m.Stream != 0 {
			fmt.Fprintf(&b, " s%d", m.Stream)
		}
		if len(m.Tuples) > 0 {
			fmt.Fprintf(&b, " tuples=%d", len(m.Tuples))
		}
		if len(m.Body) > 0 {
			fmt.Fprintf(&b, " body=%dB", len(m.Body))
		}
	}
	return b.String()
}

// DescribeRoute is "f0 e1 v0 primary=A.1 recv=(A.1)" plus the route's flags.
func DescribeRoute(r ha.Route) string {
	s := fmt.Sprintf("f%d e%d v%d primary=%s recv=(%s)", r.Frag, r.Epoch, r.Version, r.Primary, strings.Join(r.Receivers, ","))
	if r.ResetSeq {
		s += " reset"
	}
	if r.Resume {
		s += " resume"
	}
	return s
}

// DescribeEvent is a one-line description of a trace event: "host: kind"
// and the fields that kind uses.
func DescribeEvent(ev ha.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", ev.Host, ev.Kind)
	if ev.Peer != "" {
		b.WriteString(" peer=" + ev.Peer)
	}
	switch ev.Kind {
	case ha.EvTakeover, ha.EvRoute:
		fmt.Fprintf(&b, " f%d e%d", ev.Frag, ev.Epoch)
	case ha.EvFenced:
		fmt.Fprintf(&b, " e%d", ev.Epoch)
	}
	if ev.Seq != 0 {
		fmt.Fprintf(&b, " seq=%d", ev.Seq)
	}
	if ev.N != 0 {
		fmt.Fprintf(&b, " n=%d", ev.N)
	}
	if ev.Note != "" {
		b.WriteString(" (" + ev.Note + ")")
	}
	return b.String()
}

// ranges writes seqs compactly: "1..4,7,9..10" (in the given order; a
// descending or repeated seq starts a new range).
func ranges(seqs []uint64) string {
	var b strings.Builder
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(seqs[i], 10))
		if j > i {
			b.WriteString(".." + strconv.FormatUint(seqs[j], 10))
		}
		i = j + 1
	}
	return b.String()
}
