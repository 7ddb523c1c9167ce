package ha_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// TestDecisionLogKeepsTheLatest: a replica that lost decisions gets them
// again while they are kept; the log keeps at least MaxKeptDecisions of
// the latest and forgets older ones.
func TestDecisionLogKeepsTheLatest(t *testing.T) {
	var l ha.DecisionLog
	l.Keep([]uint8{0, 1, 1})
	l.Keep([]uint8{0})
	d, ok := l.Since(2)
	require.True(t, ok)
	assert.Equal(t, []uint8{1, 0}, d)
	d, ok = l.Since(4)
	require.True(t, ok)
	assert.Empty(t, d, "nothing after the last")
	_, ok = l.Since(5)
	assert.False(t, ok, "not shipped yet")

	l.Keep(make([]uint8, 2*ha.MaxKeptDecisions))
	total := uint64(4 + 2*ha.MaxKeptDecisions)
	_, ok = l.Since(0)
	assert.False(t, ok, "the oldest are forgotten")
	d, ok = l.Since(total - ha.MaxKeptDecisions)
	require.True(t, ok, "the latest MaxKeptDecisions stay")
	assert.Len(t, d, ha.MaxKeptDecisions)

	l.Reset()
	_, ok = l.Since(1)
	assert.False(t, ok)
}
