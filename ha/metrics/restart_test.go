package metrics

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/streamha/streamha/ha"
)

func TestRestartSpansCrashToLastCaughtUp(t *testing.T) {
	tr := &ha.Trace{}
	for _, e := range []ha.Event{
		{T: 1 * time.Second, Kind: ha.EvCaughtUp, Host: "A"}, // before the crash: ignored
		{T: 2 * time.Second, Kind: ha.EvCrash, Host: "B"},
		{T: 2500 * time.Millisecond, Kind: ha.EvCaughtUp, Host: "B.1"},
		{T: 2700 * time.Millisecond, Kind: ha.EvCaughtUp, Host: "C"},
		{T: 3 * time.Second, Kind: ha.EvCrash, Host: "C"}, // a second crash does not restart the clock
	} {
		tr.Add(e)
	}
	d, crash, up, ok := Restart(tr)
	assert.True(t, ok)
	assert.Equal(t, 700*time.Millisecond, d)
	assert.Equal(t, 2*time.Second, crash)
	assert.Equal(t, 2700*time.Millisecond, up)

	empty := &ha.Trace{}
	empty.Add(ha.Event{T: time.Second, Kind: ha.EvCrash, Host: "B"})
	_, _, _, ok = Restart(empty)
	assert.False(t, ok, "no caught_up after the crash")
}
