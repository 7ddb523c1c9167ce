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

// TestRegressionsFailWithTheirBug runs every regression file that names the
// fix guarding it in a "# fix: NAME" line (ha.PlantedNames) again with that
// bug planted: under each strategy the file names, the output
// must stall then (its last output a second or more before the failure-free
// run's) and not without the bug. A regression that cannot tell the fix
// from the bug guards nothing.
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
			end := ref.Deliveries().LastTime()
			for _, x := range want {
				fixed, err := sim.RunPlanted(e, x.Strategy, ha.PlantNone)
				require.NoError(t, err)
				planted, err := sim.RunPlanted(e, x.Strategy, bug)
				require.NoError(t, err)
				assert.Greater(t, fixed.Trace.Deliveries().LastTime(), end-stallMargin, "%s: output resumes with the fix", x.Strategy)
				assert.LessOrEqual(t, planted.Trace.Deliveries().LastTime(), end-stallMargin, "%s: output stalls with %s planted", x.Strategy, fix)
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
