package examples_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/examples"
	"github.com/streamha/streamha/experiment"

	_ "github.com/streamha/streamha/activestandby"
	_ "github.com/streamha/streamha/passivestandby"
	_ "github.com/streamha/streamha/upstreambackup"
)

// TestEveryExampleIsValid: each embedded experiment parses and validates,
// and each sweep spec names an experiment that is embedded too.
func TestEveryExampleIsValid(t *testing.T) {
	entries, err := fs.ReadDir(examples.Files, ".")
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			b, err := fs.ReadFile(examples.Files, e.Name())
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(b), "# "), "starts with a comment that 'streamha examples' shows")
			for _, line := range strings.Split(string(b), "\n") {
				if name, ok := strings.CutPrefix(line, "experiment: "); ok {
					_, err := fs.Stat(examples.Files, strings.TrimSpace(name))
					require.NoError(t, err, "the spec's experiment is embedded beside it")
					return
				}
			}
			_, err = experiment.Parse(b, e.Name())
			require.NoError(t, err)
		})
	}
}
