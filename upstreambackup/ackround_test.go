package upstreambackup

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
