package mystrategy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/labs"
	"github.com/streamha/streamha/labs/05-own-strategy/mystrategy"
	"github.com/streamha/streamha/strategies/conformance"
)

// TestSkeletonFailsConformanceAsShipped guards the lab: the skeleton
// compiles and registers, but does not recover until the student completes
// it. Once completed, this test is expected to fail (the check passes).
func TestSkeletonFailsConformanceAsShipped(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite")
	}
	rep, err := conformance.Check(mystrategy.Name, labs.Lab5Claims)
	require.NoError(t, err)
	assert.False(t, rep.Passed(), "the shipped skeleton must fail the suite")
	l, err := labs.Get(5)
	require.NoError(t, err)
	res, err := l.Check(labs.Answers{"q1": {"precise"}}, labs.Options{})
	require.NoError(t, err)
	assert.False(t, res.AllRight())
	require.NotEmpty(t, res.Failed)
	assert.Contains(t, res.Failed[0], "conformance suite failed")
}
