package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
)

// Expectation is the outcome an experiment file says a strategy must reach
// on it, written in the file as a comment line
//
//	# expect: passive-standby precise
//
// Outcome is "precise" (the failure-free output exactly: nothing missing,
// repeated, wrong or spurious, no input lost, every expected output
// delivered), "complete" (nothing missing, repeated or spurious, no input
// lost: values may differ, as on a union whose order the failure changed),
// "resumed" (output resumed: the run recovered before its end, whatever
// its type, for a strategy that may lose data on the schedule but not
// stall), or any other recovery type, which the run's type must equal. A
// soak regression is an experiment file with its expectations (sim's
// TestRegressions walks testdata/regress).
type Expectation struct {
	Strategy string
	Outcome  string
}

// ParseExpectations reads the "# expect: STRATEGY OUTCOME" lines of an
// experiment file.
func ParseExpectations(yml []byte) ([]Expectation, error) {
	var out []Expectation
	sc := bufio.NewScanner(bytes.NewReader(yml))
	for line := 1; sc.Scan(); line++ {
		rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "# expect:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 {
			return nil, fmt.Errorf("%w: line %d: want \"# expect: STRATEGY OUTCOME\", got %q", experiment.ErrConfig, line, sc.Text())
		}
		out = append(out, Expectation{Strategy: f[0], Outcome: f[1]})
	}
	return out, sc.Err()
}

// Check reports how r misses the expectation, or nil.
func (x Expectation) Check(r metrics.Recovery) error {
	var bad []string
	zero := func(name string, v int64) {
		if v != 0 {
			bad = append(bad, fmt.Sprintf("%s %d", name, v))
		}
	}
	switch x.Outcome {
	case "precise":
		if r.Type != "precise" {
			bad = append(bad, "type "+r.Type)
		}
		zero("missing", int64(r.Missing))
		zero("duplicates", int64(r.Duplicates))
		zero("wrong", int64(r.Wrong))
		zero("spurious", int64(r.Spurious))
		zero("lost inputs", r.LostInputs)
		if r.Delivered != r.Expected || r.Delivered == 0 {
			bad = append(bad, fmt.Sprintf("delivered %d of %d expected", r.Delivered, r.Expected))
		}
	case "complete":
		zero("missing", int64(r.Missing))
		zero("duplicates", int64(r.Duplicates))
		zero("spurious", int64(r.Spurious))
		zero("lost inputs", r.LostInputs)
	case "resumed":
		if r.NotRecovered || r.Type == metrics.NotRecoveredType {
			bad = append(bad, "not recovered")
		}
	default:
		if r.Type != x.Outcome {
			bad = append(bad, "type "+r.Type)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: want %s, got %s (%s)", x.Strategy, x.Outcome, strings.Join(bad, ", "), strings.Join(r.Explanations, "; "))
	}
	return nil
}
