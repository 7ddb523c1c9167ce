package why

import (
	"fmt"
	"io"
	"strings"
)

// maxHopsShown bounds the hops printed per run; JSON has them all.
const maxHopsShown = 12

// Write prints the story for a terminal.
func (st *Story) Write(w io.Writer) {
	fmt.Fprintf(w, "%s\n", st.Summary)

	writeDeliveries(w, "\ndelivered (this run, "+st.Strategy+")", st.Delivered, true)
	writeDeliveries(w, "delivered (failure-free run)", st.Expected, false)

	fmt.Fprintln(w, "\nlineage (source tuples reflected):")
	writeLineage(w, "this run", st.Lineage)
	writeLineage(w, "failure-free", st.RefLineage)

	fmt.Fprintln(w, "\ndifferences from the failure-free run:")
	if len(st.Differences) == 0 {
		fmt.Fprintln(w, "  none: the same value, lineage and emitter")
	}
	for _, d := range st.Differences {
		fmt.Fprintf(w, "  - %s\n", d)
	}

	writeHops(w, "hops (this run)", st.Hops)
	writeHops(w, "hops (failure-free run)", st.RefHops)

	fmt.Fprintln(w, "\nfault and recovery events on the path (until the last delivery):")
	if len(st.Events) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, e := range st.Events {
		if e.Count > 1 {
			fmt.Fprintf(w, "  %s–%s s  %s (%d times)\n", seconds(e.TMs), seconds(e.Until), e.Text, e.Count)
			continue
		}
		fmt.Fprintf(w, "  %s s  %s\n", seconds(e.TMs), e.Text)
	}
	if len(st.Counters) > 0 {
		var parts []string
		for _, c := range st.Counters {
			parts = append(parts, fmt.Sprintf("%s %s %d", c.Host, c.Name, c.Value))
		}
		fmt.Fprintf(w, "\nfilter counters at the end of the run (stats events): %s\n", strings.Join(parts, ", "))
	}
}

func writeDeliveries(w io.Writer, title string, ds []Delivery, status bool) {
	fmt.Fprintf(w, "%s:\n", title)
	if len(ds) == 0 {
		fmt.Fprintln(w, "  never")
	}
	for _, d := range ds {
		fmt.Fprintf(w, "  %s s  value %s  %d source tuples  seq %d  from %s", seconds(d.TMs), fmtF(d.Value), d.Sources, d.Seq, orUnknown(d.From))
		if status {
			fmt.Fprintf(w, "  [%s]", d.Status)
		}
		fmt.Fprintln(w)
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func writeLineage(w io.Writer, label string, l *Lineage) {
	switch {
	case l == nil:
		fmt.Fprintf(w, "  %-12s —\n", label+":")
		return
	case l.First != "" && l.Count == 1:
		fmt.Fprintf(w, "  %-12s %s (event time %s s)\n", label+":", l.First, seconds(l.FromMs))
	case l.First != "":
		fmt.Fprintf(w, "  %-12s %d tuples, %s … %s (event times %s–%s s)\n", label+":", l.Count, l.First, l.Last, seconds(l.FromMs), seconds(l.ToMs))
	default:
		fmt.Fprintf(w, "  %-12s %d tuples", label+":", l.Count)
		if l.Newest != "" {
			fmt.Fprintf(w, ", the newest %s", l.Newest)
		}
		fmt.Fprintln(w)
		return
	}
	if l.Newest != "" {
		fmt.Fprintf(w, "  %-12s the newest is %s\n", "", l.Newest)
	}
}

func writeHops(w io.Writer, title string, hops []Hop) {
	fmt.Fprintf(w, "\n%s:\n", title)
	if len(hops) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for i, h := range hops {
		if i == maxHopsShown {
			fmt.Fprintf(w, "  … %d more (--json lists them all)\n", len(hops)-i)
			break
		}
		fmt.Fprintf(w, "  %s s  %-5s %-9s epoch %d  seq %d  value %s  %d sources  → %s\n",
			seconds(h.TMs), h.Host, h.Role, h.Epoch, h.Seq, fmtF(h.Value), h.Sources, h.Fate)
	}
}
