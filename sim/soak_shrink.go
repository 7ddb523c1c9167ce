package sim

import (
	"fmt"
	"github.com/streamha/streamha/experiment"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ShrinkSoakCase reduces a case that breaks invariant inv to a smaller one
// that still breaks it: it drops faults one at a time, shortens the run to
// just after the last fault, lowers the source rate and shortens the
// remaining faults, keeping each change only while inv still fails. It
// returns the smallest failing case found, its result and the number of
// runs it took (at most maxRuns, 0 = 200).
func ShrinkSoakCase(c *SoakCase, inv string, maxRuns int) (*SoakCase, *SoakResult, int) {
	return shrinkSoakCase(c, inv, maxRuns, CheckSoakCase)
}

// shrinkSoakCase is ShrinkSoakCase with the check as a parameter.
func shrinkSoakCase(c *SoakCase, inv string, maxRuns int, check func(*SoakCase) *SoakResult) (*SoakCase, *SoakResult, int) {
	if maxRuns <= 0 {
		maxRuns = 200
	}
	best := c
	bestRes := check(c)
	runs := 1
	if !bestRes.Has(inv) {
		return c, bestRes, runs
	}
	try := func(mut func(e *experiment.Experiment) bool) bool {
		if runs >= maxRuns {
			return false
		}
		e := cloneExperiment(best.Experiment)
		if !mut(e) {
			return false
		}
		e, err := reparse(e)
		if err != nil {
			return false
		}
		cand := *best
		cand.Experiment = e
		runs++
		r := check(&cand)
		if !r.Has(inv) {
			return false
		}
		best, bestRes = &cand, r
		return true
	}
	for changed := true; changed && runs < maxRuns; {
		changed = false
		// Drop faults, last first (later faults rarely cause earlier symptoms).
		for i := len(best.Experiment.Faults) - 1; i >= 0; i-- {
			if i < len(best.Experiment.Faults) && try(func(e *experiment.Experiment) bool {
				e.Faults = slices.Delete(e.Faults, i, i+1)
				return true
			}) {
				changed = true
			}
		}
		// Shorten the run to just after the last fault.
		lastAt := experiment.Duration(0)
		for _, f := range best.Experiment.Faults {
			lastAt = max(lastAt, f.At+f.For)
		}
		for _, d := range []experiment.Duration{lastAt + experiment.Duration(200*time.Millisecond), lastAt + experiment.Duration(time.Second)} {
			d = experiment.Duration(((d.D() + 99*time.Millisecond) / (100 * time.Millisecond)) * 100 * time.Millisecond)
			if d < best.Experiment.Duration && try(func(e *experiment.Experiment) bool { e.Duration = d; return true }) {
				changed = true
				break
			}
		}
		// Lower the rate.
		if best.Experiment.Source.Rate > 100 && try(func(e *experiment.Experiment) bool {
			e.Source.Rate = max(100, float64(int(e.Source.Rate/2/50)*50))
			return true
		}) {
			changed = true
		}
		// Shorten pauses, partitions and link faults.
		for i := range best.Experiment.Faults {
			if best.Experiment.Faults[i].For > experiment.Duration(50*time.Millisecond) && try(func(e *experiment.Experiment) bool {
				e.Faults[i].For = experiment.Duration((e.Faults[i].For.D() / 2).Round(10 * time.Millisecond))
				return e.Faults[i].For > 0
			}) {
				changed = true
			}
		}
	}
	best.Experiment.Name = fmt.Sprintf("soak-%s-%d-%d-min", best.Strategy, best.Seed, best.Run)
	return best, bestRes, runs
}

// cloneExperiment deep-copies an experiment through YAML.
func cloneExperiment(e *experiment.Experiment) *experiment.Experiment {
	b, err := yaml.Marshal(e)
	if err != nil {
		panic("soak: marshal experiment: " + err.Error())
	}
	var c experiment.Experiment
	if err := yaml.Unmarshal(b, &c); err != nil {
		panic("soak: unmarshal experiment: " + err.Error())
	}
	return &c
}

// ReproYAML is the failing case as an experiment file, headed by comments
// saying what broke and how to rerun it.
func ReproYAML(c *SoakCase, r *SoakResult) ([]byte, error) {
	body, err := yaml.Marshal(c.Experiment)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# streamha soak failure: strategy %s, soak seed %d, run %d, query %s\n", c.Strategy, c.Seed, c.Run, c.Query)
	if c.Shape != "" {
		fmt.Fprintf(&b, "# swarm shape: %s\n", c.Shape)
	}
	if c.Planted != 0 {
		fmt.Fprintf(&b, "# planted bugs: %s (rerun with streamha soak --plant %s)\n", c.Planted, c.Planted)
	}
	for _, v := range r.Violations {
		for i, line := range strings.Split(strings.TrimSpace(v.Detail), "\n") {
			if i == 0 {
				fmt.Fprintf(&b, "# violated %s: %s\n", v.Invariant, line)
			} else if i < 8 {
				fmt.Fprintf(&b, "#   %s\n", line)
			}
		}
	}
	if r.InModel {
		b.WriteString("# the faults stay within the fault model (streamha docs reliability)\n")
	} else {
		fmt.Fprintf(&b, "# outside the fault model: %s\n", r.OutOfModel)
	}
	fmt.Fprintf(&b, "# reproduce: streamha run --config FILE --strategy %s\n", c.Strategy)
	b.Write(body)
	return []byte(b.String()), nil
}
