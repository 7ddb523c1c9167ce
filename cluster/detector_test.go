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

func newTestDetector(tb testing.TB, host string, k Keys) (*Detector, chan memberEvent) {
	tb.Helper()
	return newProfileDetector(tb, host, k, "")
}

// newProfileDetector is a detector on loopback port 0 with the given
// profile that reports membership changes on the returned channel.
func newProfileDetector(tb testing.TB, host string, k Keys, profile string) (*Detector, chan memberEvent) {
	tb.Helper()
	ch := make(chan memberEvent, 64)
	d, err := NewDetector(DetectorConfig{
		Host: host, Bind: "127.0.0.1:0", DataAddr: "127.0.0.1:1" + host, Keys: k, Profile: profile,
		Notify: func(h string, alive bool) {
			select {
			case ch <- memberEvent{h, alive}:
			default:
			}
		},
	}, nil)
	require.NoError(tb, err)
	return d, ch
}

// waitEvent waits for want on ch and returns how long that took. within
// only keeps a broken detector from hanging the test: it is far above any
// detection time, and no assertion is made on the duration.
func waitEvent(tb testing.TB, ch chan memberEvent, want memberEvent, within time.Duration) time.Duration {
	tb.Helper()
	t0 := time.Now()
	timeout := time.After(within)
	for {
		select {
		case e := <-ch:
			if e == want {
				return time.Since(t0)
			}
		case <-timeout:
			tb.Fatalf("no %+v within %s", want, within)
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

	// A crash (shutdown without leaving) is declared: B is reported dead
	// and is no longer a member. How fast is BenchmarkDetectorCrashDetection's.
	require.NoError(t, b.Shutdown(false))
	waitEvent(t, aEv, memberEvent{"B", false}, time.Minute)
	assert.NotContains(t, a.Members(), "B")
}

// BenchmarkDetectorCrashDetection measures the detection delay of each
// profile on loopback: B joins A, then stops without leaving (as a
// SIGKILLed process does), and the figure is the time from B's stop to A
// declaring it dead, reported as detect-ms (the mean over b.N crashes).
//
//	go test -run '^$' -bench DetectorCrashDetection -benchtime 5x ./cluster
func BenchmarkDetectorCrashDetection(b *testing.B) {
	for _, profile := range []string{ProfileTuned, ProfileSteady} {
		b.Run(profile, func(b *testing.B) {
			k := keysFor("detection benchmark secret")
			var total time.Duration
			for b.Loop() {
				a, aEv := newProfileDetector(b, "A", k, profile)
				n, _ := newProfileDetector(b, "B", k, profile)
				_, err := n.Join([]string{a.Addr()})
				require.NoError(b, err)
				waitEvent(b, aEv, memberEvent{"B", true}, time.Minute)
				require.NoError(b, n.Shutdown(false))
				total += waitEvent(b, aEv, memberEvent{"B", false}, time.Minute)
				require.NoError(b, a.Shutdown(false))
			}
			b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "detect-ms")
		})
	}
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
