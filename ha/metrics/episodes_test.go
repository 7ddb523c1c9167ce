package metrics_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
)

func TestEpisodesGroupFaultsWithinTheWindow(t *testing.T) {
	ref := steady(50)
	tests := []struct {
		name   string
		faults []ha.Event
		want   [][2]float64 // start, end of each episode
	}{
		{"two crashes within the window are one episode", []ha.Event{
			{T: 1000 * ms, Kind: ha.EvCrash, Host: "B"}, {T: 1200 * ms, Kind: ha.EvCrash, Host: "C"},
		}, [][2]float64{{1000, 1200}}},
		{"a pause and a partition overlapping, a crash long after", []ha.Event{
			{T: 1000 * ms, Kind: ha.EvPause, Host: "B", N: int64(400 * ms)},
			{T: 1300 * ms, Kind: ha.EvPartition, Note: "[[A] [B]]"},
			{T: 1600 * ms, Kind: ha.EvHeal, Note: "[[A] [B]]"},
			{T: 4000 * ms, Kind: ha.EvCrash, Host: "A"},
		}, [][2]float64{{1000, 1600}, {4000, 4000}}},
		{"a link fault is a fault too", []ha.Event{
			{T: 2000 * ms, Kind: ha.EvLinkFault, Host: "A", Peer: "B", N: int64(500 * ms), Note: "loss p=0.3"},
			{T: 2600 * ms, Kind: ha.EvLinkHeal, Host: "A", Peer: "B", Note: "loss p=0.3"},
			{T: 2700 * ms, Kind: ha.EvCrash, Host: "B"},
		}, [][2]float64{{2000, 2700}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			faulty := append(append([]ha.Event{}, ref...), tc.faults...)
			o := metrics.RecoveryOptions{Window: 250 * ms}
			r := metrics.RecoveryWith(ha.NewTrace(ref...), ha.NewTrace(faulty...), o)
			require.Len(t, r.Episodes, len(tc.want))
			assert.Equal(t, len(tc.want), r.EpisodeCount)
			for i, w := range tc.want {
				assert.InDelta(t, w[0], r.Episodes[i].StartMs, 1e-9)
				assert.InDelta(t, w[1], r.Episodes[i].EndMs, 1e-9)
				require.NotNil(t, r.Episodes[i].RecoveryMs, "nothing was late")
				assert.Zero(t, *r.Episodes[i].RecoveryMs, "undetected and on time: nothing to recover from")
			}
			require.NoError(t, metrics.CheckRecovery(r, ha.NewTrace(ref...), ha.NewTrace(faulty...), o))
		})
	}
}

// TestStallIsNotHiddenByALaterFault: output stops for good after a
// partition; a harmless crash long after, promptly detected, must not
// turn the run into a recovery. The episode that did not recover is the
// first one.
func TestStallIsNotHiddenByALaterFault(t *testing.T) {
	ref := steady(30)
	faulty := append([]ha.Event{}, ref[:6]...)
	faulty = append(faulty,
		ha.Event{T: 640 * ms, Kind: ha.EvPartition, Note: "[[W] [J]]"},
		ha.Event{T: 850 * ms, Kind: ha.EvDetect, Host: "J", Peer: "W"},
		ha.Event{T: 900 * ms, Kind: ha.EvHeal, Note: "[[W] [J]]"},
		ha.Event{T: 3100 * ms, Kind: ha.EvCrash, Host: "W.2"},
		ha.Event{T: 3300 * ms, Kind: ha.EvDetect, Host: "J", Peer: "W.2"},
		stats(3500*ms),
	)
	r := metrics.RecoveryOf(ha.NewTrace(ref...), ha.NewTrace(faulty...))
	require.Len(t, r.Episodes, 2)
	assert.True(t, r.NotRecovered)
	assert.Nil(t, r.RecoveryMs)
	assert.True(t, r.Episodes[0].NotRecovered, "the partition's episode stalled")
	assert.Equal(t, 24, r.Episodes[0].Missing)
	require.NotNil(t, r.Episodes[0].ObservedMs)
	assert.InDelta(t, 3500-640, *r.Episodes[0].ObservedMs, 1e-9)
	require.NotNil(t, r.Episodes[1].RecoveryMs, "the spare's crash disturbed nothing")
	assert.InDelta(t, 200, *r.Episodes[1].RecoveryMs, 1e-9)
	assert.InDelta(t, 3500-640, *r.ObservedMs, 1e-9, "the run reports the worst episode")
	assert.Equal(t, "not recovered (> 2.9 s) (2)", r.RecoveryCell())
	require.NotEmpty(t, r.Explanations)
	assert.Contains(t, r.Explanations[0], "fault episode 1 of 2 (partition [[W] [J]] at 640ms) did not recover")
	require.NoError(t, metrics.CheckRecovery(r, ha.NewTrace(ref...), ha.NewTrace(faulty...), metrics.RecoveryOptions{}))
}

// TestRecoveryAgainstTheStrategysOwnRun: a strategy that always delivers
// 500 ms after the no-HA run (a transactional sink) is late against O_e
// all the time, but on time against its own failure-free run.
func TestRecoveryAgainstTheStrategysOwnRun(t *testing.T) {
	ref := steady(40)
	var own []ha.Event
	for i := 1; i <= 40; i++ {
		own = append(own, deliver(time.Duration(i)*100*ms+500*ms, 0, int64(i), 503*ms, 10))
	}
	faulty := append([]ha.Event{}, own...)
	faulty = append(faulty,
		ha.Event{T: 1050 * ms, Kind: ha.EvCrash, Host: "B"},
		ha.Event{T: 1250 * ms, Kind: ha.EvDetect, Host: "B.1", Peer: "B"},
		stats(4600*ms))
	o := metrics.RecoveryOptions{Own: ha.NewTrace(own...)}
	r := metrics.RecoveryWith(ha.NewTrace(ref...), ha.NewTrace(faulty...), o)
	require.NotNil(t, r.RecoveryMs)
	assert.InDelta(t, 200, *r.RecoveryMs, 1e-9)
	require.NoError(t, metrics.CheckRecovery(r, ha.NewTrace(ref...), ha.NewTrace(faulty...), o))

	against := metrics.RecoveryOf(ha.NewTrace(ref...), ha.NewTrace(faulty...))
	require.NotNil(t, against.RecoveryMs)
	assert.Greater(t, *against.RecoveryMs, 3000.0, "against O_e every output is late")
}

// TestCheckRecoveryRejectsBadFigures: CheckRecovery catches figures the
// definition would not produce.
func TestCheckRecoveryRejectsBadFigures(t *testing.T) {
	ref := steady(30)
	after := []ha.Event{
		{T: 1250 * ms, Kind: ha.EvDetect, Host: "B.1", Peer: "B"},
		deliver(1600*ms, 0, 11, 500*ms, 10), deliver(1610*ms, 0, 12, 410*ms, 10),
	}
	after = append(after, ref[12:]...)
	faulty := ha.NewTrace(withFault(ref, 10, 1050*ms, after...)...)
	good := metrics.RecoveryOf(ha.NewTrace(ref...), faulty)
	require.NoError(t, metrics.CheckRecovery(good, ha.NewTrace(ref...), faulty, metrics.RecoveryOptions{}))
	require.NotNil(t, good.RecoveryMs)
	assert.InDelta(t, 560, *good.RecoveryMs, 1e-9)

	tests := map[string]func(r *metrics.Recovery){
		"below the silence":     func(r *metrics.Recovery) { r.Episodes[0].RecoveryMs = ptr(300) },
		"below the detection":   func(r *metrics.Recovery) { r.Episodes[0].RecoveryMs = ptr(100) },
		"after the run's end":   func(r *metrics.Recovery) { r.Episodes[0].RecoveryMs = ptr(9000) },
		"not the worst":         func(r *metrics.Recovery) { r.RecoveryMs = ptr(200) },
		"not recovered wrongly": func(r *metrics.Recovery) { r.Episodes[0].RecoveryMs, r.Episodes[0].NotRecovered = nil, true },
	}
	for name, spoil := range tests {
		t.Run(name, func(t *testing.T) {
			r := good
			r.Episodes = append([]metrics.Episode(nil), good.Episodes...)
			spoil(&r)
			assert.Error(t, metrics.CheckRecovery(r, ha.NewTrace(ref...), faulty, metrics.RecoveryOptions{}))
		})
	}
}

func ptr(f float64) *float64 { return &f }

// TestTimingTraceKeepsWhatRecoveryReads: the failure-free run a
// strategy's recovery is measured against can be a timing trace.
func TestTimingTraceKeepsWhatRecoveryReads(t *testing.T) {
	ref := steady(30)
	own := ha.NewTimingTrace()
	for _, e := range ref {
		own.Add(e)
	}
	after := []ha.Event{
		{T: 1250 * ms, Kind: ha.EvDetect, Host: "B.1", Peer: "B"},
		deliver(1600*ms, 0, 11, 500*ms, 10),
	}
	after = append(after, ref[11:]...)
	faulty := ha.NewTrace(withFault(ref, 10, 1050*ms, after...)...)
	full := metrics.RecoveryWith(ha.NewTrace(ref...), faulty, metrics.RecoveryOptions{Own: ha.NewTrace(ref...)})
	timing := metrics.RecoveryWith(ha.NewTrace(ref...), faulty, metrics.RecoveryOptions{Own: own})
	assert.Equal(t, full, timing)
	assert.Equal(t, ha.NewTrace(ref...).Latencies(), own.Latencies())
}

// TestRealRunExcusesOneLateBurstAtTheEnd: in a real run, the last
// outputs arriving late together (the windows the end of the stream
// closes, on a loaded machine) after sustained on-time output are one
// event and do not move the recovery; a simulated run counts them.
func TestRealRunExcusesOneLateBurstAtTheEnd(t *testing.T) {
	ref := steady(60)
	after := []ha.Event{
		{T: 1250 * ms, Kind: ha.EvDetect, Host: "B.1", Peer: "B"},
		deliver(1300*ms, 0, 11, 200*ms, 10), deliver(1310*ms, 0, 12, 110*ms, 10), deliver(1320*ms, 0, 13, 20*ms, 10),
	}
	after = append(after, ref[13:57]...)
	for i := int64(58); i <= 60; i++ { // due at 5.8–6.0 s, all at 6.1 s
		after = append(after, deliver(6100*ms, 0, i, 6100*ms-time.Duration(i)*100*ms+3*ms, 10))
	}
	faulty := ha.NewTrace(withFault(ref, 10, 1050*ms, after...)...)
	real := metrics.RecoveryOptions{Real: true}
	r := metrics.RecoveryWith(ha.NewTrace(ref...), faulty, real)
	require.NotNil(t, r.RecoveryMs)
	assert.InDelta(t, 270, *r.RecoveryMs, 1e-9)
	assert.Equal(t, "pre-fault", r.DueFrom)
	require.NoError(t, metrics.CheckRecovery(r, ha.NewTrace(ref...), faulty, real))

	sim := metrics.RecoveryOf(ha.NewTrace(ref...), faulty)
	require.NotNil(t, sim.RecoveryMs)
	assert.InDelta(t, 6100-1050, *sim.RecoveryMs, 1e-9)
}
