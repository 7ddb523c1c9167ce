package mystrategy_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/labs"
	"github.com/streamha/streamha/labs/05-own-strategy/mystrategy"
	"github.com/streamha/streamha/strategies/conformance"
)

// TestSkeletonFailsConformanceAsShipped guards the lab: the skeleton
// compiles and registers, but does not recover until the student completes
// it. It runs only while mystrategy.go is the shipped skeleton (the copy in
// labs/testdata/lab5-skeleton): once a student edits it, the pristine
// skeleton is checked by labs' TestLab5EndToEnd in a copy of the module,
// so a completed lab never fails this package's tests.
func TestSkeletonFailsConformanceAsShipped(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite")
	}
	have, err := os.ReadFile("mystrategy.go")
	require.NoError(t, err)
	pristine, err := os.ReadFile("../../testdata/lab5-skeleton/mystrategy.go")
	require.NoError(t, err)
	if !bytes.Equal(have, pristine) {
		t.Skip("mystrategy.go is being completed: the shipped skeleton is checked by labs' TestLab5EndToEnd")
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
