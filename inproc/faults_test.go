package inproc_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/inproc"
)

// TestPausesAndPartitionsAreDetectedAndHealed: a pause or a partition that
// outlasts detection makes the other hosts (the other side) declare the
// host dead, and see it alive again when it ends (PeerUp); a shorter one
// is never declared.
func TestPausesAndPartitionsAreDetectedAndHealed(t *testing.T) {
	cases := []struct {
		name       string
		edit       func(*inproc.Config)
		dead       []string // "observer>peer" declared dead, then alive again
		notDeclare bool
	}{
		{"long pause", func(c *inproc.Config) {
			c.Pauses = []inproc.Pause{{At: 100 * time.Millisecond, For: 200 * time.Millisecond, Host: "B"}}
		}, []string{"src>B", "A>B", "A.1>B", "B.1>B", "sink>B"}, false},
		{"short pause", func(c *inproc.Config) {
			c.Pauses = []inproc.Pause{{At: 100 * time.Millisecond, For: 20 * time.Millisecond, Host: "B"}}
		}, nil, true},
		{"long partition", func(c *inproc.Config) {
			c.Partitions = []inproc.Partition{{At: 100 * time.Millisecond, For: 200 * time.Millisecond,
				Groups: [][]string{{"src", "A"}, {"B", "sink"}}}}
		}, []string{"src>B", "src>sink", "A>B", "A>sink", "B>src", "B>A", "sink>src", "sink>A"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := config(t, mapQuery, "passive-standby")
				cfg.Topology.Frags[1].Hosts = []string{"B", "B.1"}
				cfg.Topology.Frags[0].Hosts = []string{"A", "A.1"}
				tc.edit(&cfg)
				out, err := inproc.Run(context.Background(), cfg)
				require.NoError(t, err)
				detected, alive := map[string]time.Duration{}, map[string]time.Duration{}
				for _, e := range out.Trace.Events() {
					switch e.Kind {
					case ha.EvDetect:
						detected[e.Host+">"+e.Peer] = e.T
					case ha.EvAlive:
						alive[e.Host+">"+e.Peer] = e.T
					}
				}
				if tc.notDeclare {
					assert.Empty(t, detected)
					return
				}
				for _, pair := range tc.dead {
					require.Contains(t, detected, pair)
					require.Contains(t, alive, pair, "%s: seen alive again (PeerUp)", pair)
					assert.Greater(t, alive[pair], detected[pair])
				}
				assert.Len(t, detected, len(tc.dead), "%v", detected)
			})
		})
	}
}

func TestFaultsAreValidated(t *testing.T) {
	cases := []struct {
		name string
		edit func(*inproc.Config)
		want string
	}{
		{"pause of an unknown host", func(c *inproc.Config) { c.Pauses = []inproc.Pause{{For: time.Second, Host: "Z"}} }, `unknown host "Z"`},
		{"pause of no time", func(c *inproc.Config) { c.Pauses = []inproc.Pause{{Host: "A"}} }, "for must be positive"},
		{"partition with one group", func(c *inproc.Config) {
			c.Partitions = []inproc.Partition{{For: time.Second, Groups: [][]string{{"A"}}}}
		}, "at least two groups"},
		{"partition of an unknown host", func(c *inproc.Config) {
			c.Partitions = []inproc.Partition{{For: time.Second, Groups: [][]string{{"A"}, {"Z"}}}}
		}, `unknown host "Z"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := config(t, mapQuery, "none")
			tc.edit(&c)
			_, err := inproc.Run(context.Background(), c)
			require.ErrorIs(t, err, inproc.ErrConfig)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestConfigFor: an experiment's node settings and faults reach the
// in-process runtime; a fault on the network, which it does not model, is
// an error naming it.
func TestConfigFor(t *testing.T) {
	e, err := experiment.Parse([]byte(mapQuery+`trace_emits: true
fencing: false
faults:
  - {at: 100ms, crash: A}
  - {at: 120ms, for: 50ms, pause: B}
  - {at: 150ms, for: 50ms, partition: [[src], [A, B, sink]]}
`), "test")
	require.NoError(t, err)
	cfg, err := inproc.ConfigFor(e, "passive-standby", false)
	require.NoError(t, err)
	assert.True(t, cfg.TraceEmits)
	assert.True(t, cfg.NoFencing)
	assert.Equal(t, []inproc.Crash{{At: 100 * time.Millisecond, Host: "A"}}, cfg.Crashes)
	assert.Equal(t, []inproc.Pause{{At: 120 * time.Millisecond, For: 50 * time.Millisecond, Host: "B"}}, cfg.Pauses)
	require.Len(t, cfg.Partitions, 1)
	assert.Equal(t, [][]string{{"src"}, {"A", "B", "sink"}}, cfg.Partitions[0].Groups)
	ff, err := inproc.ConfigFor(e, "passive-standby", true)
	require.NoError(t, err)
	assert.Empty(t, ff.Crashes)

	lossy, err := experiment.Parse([]byte(mapQuery+"faults: [{at: 100ms, for: 50ms, loss: {p: 0.5}}]\n"), "test")
	require.NoError(t, err)
	_, err = inproc.ConfigFor(lossy, "passive-standby", false)
	require.ErrorIs(t, err, inproc.ErrConfig)
	assert.ErrorContains(t, err, "loss fault")
	_, err = inproc.ConfigFor(e, "no-such-strategy", false)
	require.ErrorIs(t, err, inproc.ErrConfig)
}
