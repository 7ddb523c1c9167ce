package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// TestOverlappingPartitionsKeepTheDetectorHonest: B is cut off from
// everyone for 600 ms, and from B.1 alone by a second partition that heals
// after 50 ms, before any detector notices. Every host the first
// partition still cuts B off from declares it dead; none sees it alive
// before the first partition heals. Healing the short partition used to
// void every pending detection of B: nobody declared it dead, and a host
// that had counted on it saw a majority that was not there.
func TestOverlappingPartitionsKeepTheDetectorHonest(t *testing.T) {
	e, err := experiment.Parse([]byte(`name: overlap
seed: 1
duration: 3s
source: {rate: 200, keys: 4}
nodes:
  - {name: A, ops: [{map: {scale: 1}}]}
  - {name: B, ops: [{map: {scale: 1}}]}
strategy: {name: passive-standby}
spares: 1
faults:
  - {at: 1s, for: 600ms, partition: [[B], [src, A, A.1, A.2, B.1, B.2, sink]]}
  - {at: 1.05s, for: 50ms, partition: [[B], [B.1]]}
`), "overlap")
	require.NoError(t, err)
	out, err := RunPlanted(e, "passive-standby", 0)
	require.NoError(t, err)
	declared := map[string]bool{}
	for _, ev := range out.Trace.Events() {
		if ev.Peer != "B" || ev.T >= 1600*time.Millisecond {
			continue
		}
		switch ev.Kind {
		case ha.EvDetect:
			declared[ev.Host] = true
		case ha.EvAlive:
			t.Errorf("%s saw B alive at %s, while the partition still cut it off", ev.Host, ev.T)
		}
	}
	for _, h := range []string{"src", "A", "A.1", "A.2", "B.1", "B.2", "sink"} {
		assert.True(t, declared[h], "%s declares B dead while cut off from it", h)
	}
}
