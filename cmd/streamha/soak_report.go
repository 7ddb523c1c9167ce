package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/streamha/streamha/sim"
)

func printSoakSummary(w io.Writer, s soakSummary) {
	fmt.Fprintf(w, "soak: seed %d, runs %d..%d per strategy, %d runs in %.1fs with %d workers\n",
		s.Seed, s.Start, s.Start+s.Runs-1, s.Total, s.WallSecs, s.Workers)
	if s.Stopped {
		fmt.Fprintln(w, "stopped early: --max-failures reached")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "strategy\truns\tin model\tprecise checked\tin promise\tliveness checked\tfaults\trecoveries\tmax events×\tfailures")
	for _, st := range s.Strats {
		share := "-"
		if st.Runs > 0 && st.PreciseChecked > 0 {
			share = fmt.Sprintf("%.0f %%", 100*float64(st.PreciseChecked)/float64(st.Runs))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%d\t%s\t%s\t%.1f\t%d\n", st.Strategy, st.Runs, st.InModel, st.PreciseChecked, share,
			st.LiveChecked, countList(st.Faults), countList(st.Recoveries), st.MaxEventRatio, st.Failures)
	}
	_ = tw.Flush()
	printOutsidePromise(w, s)
	printCoverage(w, s)
	for _, st := range s.Strats {
		if st.Failures == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: %d failing runs (%s)\n", st.Strategy, st.Failures, countList(st.Violations))
		for _, f := range st.Files {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
}

// printOutsidePromise prints, per strategy, why the runs outside its
// precise promise are outside: not promised on the query, or the first
// fault-model rule the schedule broke (docs/reliability.md).
func printOutsidePromise(w io.Writer, s soakSummary) {
	reasons := append([]string{sim.RuleNotPromised}, sim.FaultModelRules()...)
	fmt.Fprintf(w, "\noutside the precise promise (runs per reason):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  strategy\t"+strings.Join(reasons, "\t"))
	for _, st := range s.Strats {
		row := make([]string, len(reasons))
		for i, r := range reasons {
			row[i] = fmt.Sprint(st.OutsidePromise[r])
		}
		fmt.Fprintf(tw, "  %s\t%s\n", st.Strategy, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
}

// countList formats counts as "a 3, b 1", sorted by name.
func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// printCoverage prints how many runs reached each named rare state.
func printCoverage(w io.Writer, s soakSummary) {
	fmt.Fprintf(w, "\ncoverage (runs reaching each rare state, of %d):\n", s.Total)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range sim.CoverageStates() {
		share := 0.0
		if s.Total > 0 {
			share = 100 * float64(s.Coverage[name]) / float64(s.Total)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%.1f %%\n", name, s.Coverage[name], share)
	}
	_ = tw.Flush()
	if s.Rechecked > 0 {
		fmt.Fprintf(w, "determinism: %d runs rerun, every trace identical unless a failure says otherwise\n", s.Rechecked)
	}
}

// thinCoverage names the states a soak of at least sim.CoverageMinRuns
// runs reached in fewer than sim.CoverageMinShare of them.
func thinCoverage(s soakSummary) []string {
	if s.Total < sim.CoverageMinRuns {
		return nil
	}
	var thin []string
	for _, name := range sim.CoverageStates() {
		if n := s.Coverage[name]; float64(n) < sim.CoverageMinShare*float64(s.Total) {
			thin = append(thin, fmt.Sprintf("%s in %d of %d runs", name, n, s.Total))
		}
	}
	return thin
}
