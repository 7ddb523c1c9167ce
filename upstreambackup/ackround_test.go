package upstreambackup

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
)

// TestOneAckMessagePerRound: a node acknowledges both levels in one
// message per upstream and round. A (a filter, stateless) has a new
// level-0 and a new level-1 point in nearly every round of the default
// experiment, so sending them apart would take about two messages a round.
func TestOneAckMessagePerRound(t *testing.T) {
	t.Parallel()
	e, s := runFailureFree(t)
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
			e := experiment.Default()
			e.Faults = nil
			e.Strategies = []experiment.StrategyConfig{{Name: Name, Params: tc.params}}
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

// TestIdleHostsSkipRounds: a host runs ack rounds only while it has
// something to acknowledge. A and B get input all the time and run nearly
// every round of the emission; C and the sink get a window's results once
// a second, so they run a few rounds a second (acknowledge, release the
// level-1 point, find nothing left) instead of ten — and still acknowledge
// every window: C's queue is trimmed by level-1 acks about once a window.
func TestIdleHostsSkipRounds(t *testing.T) {
	t.Parallel()
	e, s := runFailureFree(t)
	emission := int64(e.Duration.D() / s.Config().AckInterval)
	seconds := int64(e.Duration.D() / time.Second)
	for _, h := range []string{"A", "B"} {
		assert.GreaterOrEqual(t, s.stats.host(h).rounds, emission, "%s acknowledges in every round of the emission", h)
	}
	for _, h := range []string{"C", "sink"} {
		st := s.stats.host(h)
		assert.Positive(t, st.rounds, h)
		assert.LessOrEqual(t, st.rounds, 3*(seconds+2), "%s runs about three rounds per window, not ten", h)
		assert.GreaterOrEqual(t, st.acks, seconds-1, "%s still acknowledges every window", h)
	}
	assert.GreaterOrEqual(t, s.stats.host("C").level1Advances, seconds-2, "C's queue is trimmed about once a window")
	var ticking int64
	for _, h := range []string{"A", "B", "C", "sink"} {
		ticking += s.stats.host(h).rounds
	}
	assert.Equal(t, ticking, s.Report()["ack_rounds"], "the source and the spares run no rounds")
}

// runFailureFree runs the default experiment without its faults under
// upstream backup with the default parameters.
func runFailureFree(t *testing.T) (*experiment.Experiment, *Strategy) {
	t.Helper()
	e := experiment.Default()
	s, err := New(DefaultConfig())
	require.NoError(t, err)
	cfg, err := sim.ConfigFor(e, s, true)
	require.NoError(t, err)
	_, err = sim.Run(cfg)
	require.NoError(t, err)
	return e, s
}
