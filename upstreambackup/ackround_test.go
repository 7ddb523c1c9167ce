package upstreambackup

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
)

// TestOneAckMessagePerRound: a node acknowledges both levels in one
// message per upstream and round. A (a filter, stateless) has a new
// level-0 and a new level-1 point in nearly every round of the default
// experiment, so sending them apart would take about two messages a round.
func TestOneAckMessagePerRound(t *testing.T) {
	t.Parallel()
	e := sim.Default()
	s, err := New(DefaultConfig())
	require.NoError(t, err)
	cfg, err := e.SimConfig(s, true)
	require.NoError(t, err)
	_, err = sim.Run(cfg)
	require.NoError(t, err)
	rounds := int64(e.End() / s.Config().AckInterval)
	a := s.stats.host("A")
	assert.LessOrEqual(t, a.acks, rounds, "A has one upstream: at most one ack message per round")
	assert.Greater(t, a.acks, rounds*3/4, "A acknowledges in nearly every round of the emission")
	assert.Greater(t, a.level1Advances+s.stats.host("src").level1Advances, rounds/2, "the acks carry level 1 too")
}

// TestFloorsOnlyWithDedup: queue floors only bound the dedup memories, so
// without dedup no node sends them and the source, with no max_age to
// enforce either, takes no part in the ack rounds: it sends exactly the
// data messages it sends without HA, and its only extra CPU is receiving
// acks. With dedup every node that feeds another sends its floors.
func TestFloorsOnlyWithDedup(t *testing.T) {
	t.Parallel()
	stats := func(tr *ha.Trace) map[string]*ha.NodeStats {
		m := map[string]*ha.NodeStats{}
		for _, e := range tr.Events() {
			if e.Kind == ha.EvStats {
				m[e.Host] = e.Stats
			}
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		params map[string]any
		floors bool
	}{
		{"without dedup", nil, false},
		{"with dedup", map[string]any{"dedup": true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := sim.Default()
			e.Faults = nil
			e.Strategies = []sim.StrategyConfig{{Name: Name, Params: tc.params}}
			c, err := sim.Compare(e, []string{Name})
			require.NoError(t, err)
			base, ub := stats(c.Reference), stats(c.Runs[0].Trace)
			src := ub["src"]
			if tc.floors {
				assert.Greater(t, src.Messages, base["src"].Messages+int64(e.End()/DefaultAckInterval)/2,
					"the source sends its floor in nearly every round")
			} else {
				assert.Equal(t, base["src"].Messages, src.Messages, "the source sends data only")
				acks := ub["A"].Messages - base["A"].Messages // A sends acks besides its data, nothing else (below)
				assert.Equal(t, base["src"].CPU+acks*int64(e.CPU.PerEvent.D()), src.CPU,
					"the source's only extra work is receiving A's acks: it never ticks")
			}
			rounds := int64(e.End() / DefaultAckInterval)
			for _, h := range []string{"A", "B"} {
				extra := ub[h].Messages - base[h].Messages
				if tc.floors {
					assert.Greater(t, extra, rounds, "%s sends a floor besides its ack in nearly every round", h)
				} else {
					assert.LessOrEqual(t, extra, rounds, "%s sends at most one ack a round and nothing else", h)
				}
			}
		})
	}
}
