package sim_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/sim"
	_ "github.com/streamha/streamha/strategies/all"
)

// TestRegressions runs every experiment file under testdata/regress — soak
// failures once shrunk, each with the outcome it must now reach in its
// "# expect:" lines (sim.Expectation) — under the strategies it names.
func TestRegressions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "regress", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			want, err := sim.ParseExpectations(b)
			require.NoError(t, err)
			require.NotEmpty(t, want, "%s says what it expects in \"# expect: STRATEGY OUTCOME\" lines", path)
			e, err := experiment.Parse(b, path)
			require.NoError(t, err)
			names := make([]string, len(want))
			for i, x := range want {
				names[i] = x.Strategy
			}
			c, err := sim.Compare(e, names)
			require.NoError(t, err)
			for i, x := range want {
				assert.NoError(t, x.Check(c.Runs[i].Run.Recovery))
			}
		})
	}
}

// TestExpectations: what an expectation accepts and refuses.
func TestExpectations(t *testing.T) {
	xs, err := sim.ParseExpectations([]byte("# a comment\n# expect: passive-standby precise\nname: x\n  # expect: amnesia gap\n"))
	require.NoError(t, err)
	require.Equal(t, []sim.Expectation{{"passive-standby", "precise"}, {"amnesia", "gap"}}, xs)
	_, err = sim.ParseExpectations([]byte("# expect: passive-standby\n"))
	require.ErrorIs(t, err, experiment.ErrConfig)
}
