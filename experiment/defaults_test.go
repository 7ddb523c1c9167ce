package experiment_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
)

// TestDefaultsAreDocumented: every default of the one table (defaults.go)
// is the one docs/experiment.md gives for its field, and the built-in
// default experiment, which spells some of them out, agrees with it.
func TestDefaultsAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/experiment.md")
	require.NoError(t, err)
	doc := string(b)
	d := func(v time.Duration) string { return v.String() }
	cases := []struct{ section, field, want string }{
		{"## Top level", "name", experiment.DefaultName},
		{"## Top level", "duration", d(experiment.DefaultDuration)},
		{"## Top level", "drain", d(experiment.DefaultDrain)},
		{"## Top level", "spares", fmt.Sprint(experiment.DefaultSpares)},
		{"## `source`", "value", fmt.Sprintf("{dist: %s, min: 0, max: %g}", experiment.DefaultValueDist, experiment.DefaultValueMax)},
		{"## `source`", "arrival", experiment.DefaultArrival},
		{"## `source`", "batch", d(experiment.DefaultBatch)},
		{"## `source`", "streams", fmt.Sprint(experiment.DefaultStreams)},
		{"## `cpu`", "per_op", "2us"},
		{"## `cpu`", "per_byte", d(experiment.DefaultPerByte)},
		{"## `cpu`", "per_event", "1us"},
		{"## `detector`", "model", experiment.DefaultModel},
		{"## `detector`", "heartbeat", d(experiment.DefaultHeartbeat)},
		{"## `detector`", "timeout", d(experiment.DefaultTimeout)},
		{"## `detector`", "suspicion_mult", fmt.Sprint(experiment.DefaultSuspicionMult)},
	}
	// The docs write microseconds as "us"; time.Duration as "µs".
	assert.Equal(t, "2µs", d(experiment.DefaultPerOp))
	assert.Equal(t, "1µs", d(experiment.DefaultPerEvent))
	for _, c := range cases {
		row := docRow(t, doc, c.section, c.field)
		cells := strings.Split(row, "|")
		found := false
		for _, cell := range cells {
			if strings.Trim(strings.TrimSpace(cell), "`") == c.want {
				found = true
			}
		}
		assert.True(t, found, "%s: docs/experiment.md says %q, the default is %s", c.field, row, c.want)
	}

	e := experiment.Default()
	assert.Equal(t, experiment.DefaultSpares, *e.Spares)
	assert.Equal(t, experiment.CPUConfig{PerOp: experiment.Duration(experiment.DefaultPerOp),
		PerByte: experiment.Duration(experiment.DefaultPerByte), PerEvent: experiment.Duration(experiment.DefaultPerEvent)}, e.CPU)
	assert.Equal(t, experiment.DefaultHeartbeat, e.Detector.Heartbeat.D())
	assert.Equal(t, experiment.DefaultTimeout, e.Detector.Timeout.D())
}

// docRow is the table row of field in the section of doc that starts with
// the heading.
func docRow(t *testing.T, doc, heading, field string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "docs/experiment.md has no section %q", heading)
	sec := doc[i+1:]
	if j := strings.Index(sec[len(heading):], "\n## "); j >= 0 {
		sec = sec[:len(heading)+j]
	}
	for l := range strings.SplitSeq(sec, "\n") {
		if strings.HasPrefix(l, "| `"+field+"` |") {
			return l
		}
	}
	t.Fatalf("docs/experiment.md, %s: no row for %s", heading, field)
	return ""
}
