package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type memberEvent struct {
	host  string
	alive bool
}

func newTestDetector(t *testing.T, host string, k Keys) (*Detector, chan memberEvent) {
	t.Helper()
	ch := make(chan memberEvent, 64)
	d, err := NewDetector(DetectorConfig{
		Host: host, Bind: "127.0.0.1:0", DataAddr: "127.0.0.1:1" + host, Keys: k,
		Notify: func(h string, alive bool) {
			select {
			case ch <- memberEvent{h, alive}:
			default:
			}
		},
	}, nil)
	require.NoError(t, err)
	return d, ch
}

func waitEvent(t *testing.T, ch chan memberEvent, want memberEvent, within time.Duration) time.Duration {
	t.Helper()
	t0 := time.Now()
	timeout := time.After(within)
	for {
		select {
		case e := <-ch:
			if e == want {
				return time.Since(t0)
			}
		case <-timeout:
			t.Fatalf("no %+v within %s", want, within)
		}
	}
}

func TestDetectorJoinsDetectsAndRejectsOutsiders(t *testing.T) {
	k := keysFor("membership secret")
	a, aEv := newTestDetector(t, "A", k)
	defer a.Shutdown(false)
	b, _ := newTestDetector(t, "B", k)
	n, err := b.Join([]string{a.Addr()})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	waitEvent(t, aEv, memberEvent{"B", true}, 5*time.Second)
	assert.Equal(t, "127.0.0.1:1B", a.DataAddr("B"), "the data address travels in the node metadata")

	for _, tc := range []struct {
		name string
		keys Keys
	}{{"no secret", Keys{}}, {"wrong secret", keysFor("not the secret")}} {
		t.Run(tc.name, func(t *testing.T) {
			rogue, _ := newTestDetector(t, "rogue", tc.keys)
			defer rogue.Shutdown(false)
			_, err := rogue.Join([]string{a.Addr()})
			assert.Error(t, err, "a node without the secret cannot join")
			assert.NotContains(t, a.Members(), "rogue")
		})
	}

	// A crash (shutdown without leaving) is declared by the tuned profile quickly.
	require.NoError(t, b.Shutdown(false))
	took := waitEvent(t, aEv, memberEvent{"B", false}, 5*time.Second)
	assert.Less(t, took, 2*time.Second, "tuned profile detects within ~0.3–0.5 s (generous bound for -race)")
	assert.NotContains(t, a.Members(), "B")
}

func TestMemberlistProfiles(t *testing.T) {
	for _, p := range []string{"", ProfileTuned, ProfileSteady, ProfileLocal, ProfileLAN} {
		c, err := MemberlistConfig(p)
		require.NoError(t, err, p)
		assert.Positive(t, c.DeadNodeReclaimTime, p)
	}
	_, err := MemberlistConfig("wan")
	assert.ErrorContains(t, err, "tuned")
}
