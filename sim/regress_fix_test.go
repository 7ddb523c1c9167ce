package sim_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
)

// stallMargin is how much earlier than the failure-free run's last output a
// run's last output must come to count as stalled.
const stallMargin = time.Second

// stallReach is how long after the last fault heals the failure-free run's
// outputs must all arrive (matched by key and event time, any value): the
// soak's liveness reach plus the longest span of an output's inputs, and
// more.
const stallReach = 2 * time.Second

// stalled reports whether run, against the failure-free run ref of e,
// stalled: its last output came stallMargin before ref's, or an output ref
// produced from inputs stallReach after the last fault healed never came.
func stalled(e *experiment.Experiment, ref, run *ha.Trace) bool {
	if run.Deliveries().LastTime() <= ref.Deliveries().LastTime()-stallMargin {
		return true
	}
	var heal time.Duration
	for _, f := range e.Faults {
		heal = max(heal, f.At.D()+f.For.D())
	}
	type slot struct {
		key uint32
		t   int64
	}
	got := map[slot]int{}
	for _, d := range run.Deliveries().All() {
		got[slot{d.Tuple.Key, d.Tuple.Time}]++
	}
	seen := map[ha.OutputID]bool{}
	for _, d := range ref.Deliveries().All() {
		if time.Duration(d.Tuple.Time) < heal+stallReach || seen[d.Tuple.ID] {
			continue
		}
		seen[d.Tuple.ID] = true
		k := slot{d.Tuple.Key, d.Tuple.Time}
		if got[k] == 0 {
			return true
		}
		got[k]--
	}
	return false
}

// TestRegressionsFailWithTheirBug runs every regression file that names the
// fix guarding it in a "# fix: NAME" line (ha.PlantedNames) again with that
// bug planted: under each strategy the file names, the output
// must stall then (stalled) and not without the bug. A regression that
// cannot tell the fix from the bug guards nothing.
func TestRegressionsFailWithTheirBug(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "regress", "*.yaml"))
	require.NoError(t, err)
	for _, path := range files {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		fix := fixOf(b)
		if fix == "" {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			bug, err := ha.ParsePlanted(fix)
			require.NoError(t, err, "%s: # fix: names a planted bug", path)
			want, err := sim.ParseExpectations(b)
			require.NoError(t, err)
			e, err := experiment.Parse(b, path)
			require.NoError(t, err)
			ref, err := sim.ReferenceTrace(e)
			require.NoError(t, err)
			for _, x := range want {
				fixed, err := sim.RunPlanted(e, x.Strategy, ha.PlantNone)
				require.NoError(t, err)
				planted, err := sim.RunPlanted(e, x.Strategy, bug)
				require.NoError(t, err)
				assert.False(t, stalled(e, ref, fixed.Trace), "%s: output resumes with the fix", x.Strategy)
				assert.True(t, stalled(e, ref, planted.Trace), "%s: output stalls with %s planted", x.Strategy, fix)
			}
		})
	}
}

// fixOf is the name in a file's "# fix: NAME" line ("" when none).
func fixOf(yml []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(yml))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "# fix:"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}
