package globalcheckpoint_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/streamha/streamha/globalcheckpoint"
	"github.com/streamha/streamha/ha"
)

func TestModelGrowsWithFragmentsAndState(t *testing.T) {
	in := func(n int, state float64) globalcheckpoint.ModelInput {
		m := globalcheckpoint.ModelInput{Detection: 225 * time.Millisecond, PerByte: 200 * time.Nanosecond,
			Interval: time.Second, Latency: time.Millisecond}
		for range n {
			m.Frags = append(m.Frags, globalcheckpoint.ModelFrag{In: 5000, Cost: 25e-6, StateBytes: state})
		}
		return m
	}
	three, twelve := globalcheckpoint.ModelRecovery(in(3, 2e5)), globalcheckpoint.ModelRecovery(in(12, 2e5))
	// Nine more fragments: nine more snapshots read and deserialised (40 ms
	// each) and round trips.
	assert.InDelta(t, float64(9*(80*time.Millisecond+2*time.Millisecond)), float64(twelve-three), float64(time.Millisecond))
	assert.Less(t, globalcheckpoint.ModelRecovery(in(12, 2e3)), three, "small state: detection and catch-up dominate")
	saturated := in(3, 0)
	saturated.Frags[1].Cost = 1.0 / 4000 // slower than its input
	assert.Equal(t, time.Duration(1<<63-1), globalcheckpoint.ModelRecovery(saturated), "a fragment slower than its input never catches up")
}

func TestPromisePerClassAndSink(t *testing.T) {
	for _, c := range []struct {
		class      ha.Class
		sink, want string
	}{
		{ha.Repeatable, globalcheckpoint.SinkTransactional, "precise"},
		{ha.Deterministic, globalcheckpoint.SinkTransactional, "precise"},
		{ha.Deterministic, globalcheckpoint.SinkAtLeastOnce, "repeating"},
		{ha.Arbitrary, globalcheckpoint.SinkTransactional, "divergent"},
	} {
		assert.Equal(t, c.want, globalcheckpoint.Promise(c.class, c.sink), "%v %s", c.class, c.sink)
	}
}
