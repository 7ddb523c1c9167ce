package metrics_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/ha/metrics"
)

const ms = time.Millisecond

// deliver builds a sink delivery of window output k at time at with the
// given latency (Emit = at - latency) and lineage count n.
func deliver(at time.Duration, key uint32, win int64, latency time.Duration, n uint32) ha.Event {
	return ha.Event{T: at, Kind: ha.EvDeliver, Host: "sink", Tuple: &ha.Tuple{
		Key: key, Emit: int64(at - latency), Value: float64(n),
		ID: ha.OutputID{Kind: ha.IDWindow, Key: key, X: win}, Lineage: ha.Lineage{N: n},
	}}
}

// steady is a reference run: one output every 100 ms with 3 ms latency.
func steady(n int) []ha.Event {
	var tr []ha.Event
	for i := 1; i <= n; i++ {
		tr = append(tr, deliver(time.Duration(i)*100*ms, 0, int64(i), 3*ms, 10))
	}
	return tr
}

func TestRecoveryFigures(t *testing.T) {
	ref := steady(30)
	// The faulty run: a crash at 1.05 s, detection at 1.25 s, takeover at
	// 1.26 s; outputs 11–13 arrive late (catch-up), output 14 on time.
	var faulty []ha.Event
	for _, e := range ref[:10] {
		faulty = append(faulty, e)
	}
	faulty = append(faulty,
		ha.Event{T: 1050 * ms, Kind: ha.EvCrash, Host: "B"},
		ha.Event{T: 1250 * ms, Kind: ha.EvDetect, Host: "B.1", Peer: "B"},
		ha.Event{T: 1260 * ms, Kind: ha.EvTakeover, Host: "B.1", Peer: "B", Epoch: 1},
		deliver(1300*ms, 0, 11, 200*ms, 10),
		deliver(1310*ms, 0, 12, 110*ms, 10),
		deliver(1320*ms, 0, 13, 20*ms, 10),
	)
	faulty = append(faulty, ref[13:]...)
	r := metrics.RecoveryOf(ha.NewTrace(ref...), ha.NewTrace(faulty...))
	assert.Equal(t, "precise", r.Type)
	require.NotNil(t, r.DetectionMs)
	assert.InDelta(t, 200, *r.DetectionMs, 1e-9)
	require.NotNil(t, r.RecoveryMs)
	// The last slow output is #13 at 1.32 s; from then on every output is
	// on time.
	assert.InDelta(t, 270, *r.RecoveryMs, 1e-9)
	assert.False(t, r.NotRecovered)
	assert.InDelta(t, 197, r.MaxAddedLatencyMs, 1e-9)
	// Longest gap 1.0 → 1.3 s = 300 ms, normal gap 100 ms.
	assert.InDelta(t, 200, r.UnavailableMs, 1e-9)
}

// TestRecoveryIgnoresControlPlane: a takeover's caught_up event, however
// late, does not set the figure; output that never left its track
// recovers at the detection.
func TestRecoveryIgnoresControlPlane(t *testing.T) {
	ref := steady(20)
	faulty := append([]ha.Event{}, ref...)
	faulty = append(faulty,
		ha.Event{T: 1050 * ms, Kind: ha.EvCrash, Host: "B"},
		ha.Event{T: 1250 * ms, Kind: ha.EvDetect, Host: "B.1", Peer: "B"},
		ha.Event{T: 1260 * ms, Kind: ha.EvTakeover, Host: "B.1"},
		ha.Event{T: 1900 * ms, Kind: ha.EvCaughtUp, Host: "B.1"},
	)
	r := metrics.RecoveryOf(ha.NewTrace(ref...), ha.NewTrace(faulty...))
	require.NotNil(t, r.RecoveryMs)
	assert.InDelta(t, 200, *r.RecoveryMs, 1e-9, "not before the detection, and the catch-up event does not count")
	require.Len(t, r.Episodes, 1)
	assert.Zero(t, r.Episodes[0].Late)
}

// withFault is ref's first n deliveries, a crash of B at crash, and then
// the deliveries after.
func withFault(ref []ha.Event, n int, crash time.Duration, after ...ha.Event) []ha.Event {
	out := append([]ha.Event{}, ref[:n]...)
	out = append(out, ha.Event{T: crash, Kind: ha.EvCrash, Host: "B"})
	return append(out, after...)
}

// stats is the end-of-run event that says when the run stopped.
func stats(at time.Duration) ha.Event {
	return ha.Event{T: at, Kind: ha.EvStats, Host: "B.1", Stats: &ha.NodeStats{}}
}

func TestRecoveryIgnoresALoneLateOutlierInRealRuns(t *testing.T) {
	ref := steady(60)
	// Outputs 11–13 late after the crash at 1.05 s, then on time; output
	// 40, long after, arrives 80 ms late once.
	after := []ha.Event{
		deliver(1300*ms, 0, 11, 200*ms, 10), deliver(1310*ms, 0, 12, 110*ms, 10), deliver(1320*ms, 0, 13, 20*ms, 10),
	}
	after = append(after, ref[13:39]...)
	after = append(after, deliver(4080*ms, 0, 40, 80*ms, 10))
	after = append(after, ref[40:]...)
	real := metrics.RecoveryOptions{Real: true}
	r := metrics.RecoveryWith(ha.NewTrace(ref...), ha.NewTrace(withFault(ref, 10, 1050*ms, after...)...), real)
	require.NotNil(t, r.RecoveryMs)
	assert.InDelta(t, 270, *r.RecoveryMs, 1e-9, "one late output after 26 on-time ones does not move recovery")
	assert.InDelta(t, ms2(metrics.RealMinTolerance), r.ToleranceMs, 1e-9)

	// A simulated run excuses nothing: the late output is the recovery.
	r = metrics.RecoveryOf(ha.NewTrace(ref...), ha.NewTrace(withFault(ref, 10, 1050*ms, after...)...))
	require.NotNil(t, r.RecoveryMs)
	assert.InDelta(t, 4080-1050, *r.RecoveryMs, 1e-9)

	// Three late outputs in a row are no outlier: the sink fell behind again.
	after = after[:3]
	after = append(after, ref[13:37]...)
	after = append(after, deliver(3880*ms, 0, 38, 80*ms, 10), deliver(3980*ms, 0, 39, 80*ms, 10), deliver(4080*ms, 0, 40, 80*ms, 10))
	after = append(after, ref[40:]...)
	r = metrics.RecoveryWith(ha.NewTrace(ref...), ha.NewTrace(withFault(ref, 10, 1050*ms, after...)...), real)
	require.NotNil(t, r.RecoveryMs)
	assert.InDelta(t, 4080-1050, *r.RecoveryMs, 1e-9)
}

func TestNotRecovered(t *testing.T) {
	ref := steady(30)
	tests := []struct {
		name        string
		after       []ha.Event
		typ         string
		missing     int
		outstanding int
	}{
		{
			name:  "no output after the crash, no takeover",
			after: []ha.Event{stats(3 * time.Second)},
			typ:   "gap", missing: 20,
		},
		{
			name: "takeovers happened but output never resumed",
			after: []ha.Event{
				{T: 1250 * ms, Kind: ha.EvTakeover, Host: "B.1", Epoch: 1},
				{T: 1300 * ms, Kind: ha.EvCaughtUp, Host: "B.1"},
				stats(3 * time.Second),
			},
			typ: "gap", missing: 20,
		},
		{
			name: "still catching up when the run ended",
			after: func() []ha.Event {
				var a []ha.Event
				for i := 11; i <= 25; i++ { // each 1.5 s late, up to the end
					a = append(a, deliver(time.Duration(i)*100*ms+1500*ms, 0, int64(i), 1500*ms, 10))
				}
				return append(a, stats(4*time.Second))
			}(),
			typ: metrics.NotRecoveredType, outstanding: 5,
		},
		{
			name: "late output that stopped long before the end is stuck, not catching up",
			after: func() []ha.Event {
				var a []ha.Event
				for i := 11; i <= 15; i++ {
					a = append(a, deliver(time.Duration(i)*100*ms+1500*ms, 0, int64(i), 1500*ms, 10))
				}
				return append(a, stats(6*time.Second))
			}(),
			typ: "gap", missing: 15,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := metrics.RecoveryOf(ha.NewTrace(ref...), ha.NewTrace(withFault(ref, 10, 1050*ms, tc.after...)...))
			assert.Nil(t, r.RecoveryMs, "never a small number")
			assert.True(t, r.NotRecovered)
			require.NotNil(t, r.ObservedMs)
			last := tc.after[len(tc.after)-1].T
			assert.InDelta(t, ms2(last-1050*ms), *r.ObservedMs, 1e-9)
			assert.Equal(t, tc.typ, r.Type)
			assert.Equal(t, tc.missing, r.Missing)
			assert.Equal(t, tc.outstanding, r.Outstanding)
			assert.Contains(t, r.RecoveryText(), "not recovered (> ")
			if tc.outstanding > 0 {
				assert.Equal(t, fmt.Sprintf("not recovered by end of run (%d outstanding)", tc.outstanding), r.Label())
				assert.Zero(t, r.LostInputs, "outstanding outputs are not lost")
			}
		})
	}
}

func ms2(d time.Duration) float64 { return float64(d) / float64(ms) }

// TestRecoveryNeverBelowSilence: on randomly damaged runs (an outage of
// random length, late outputs, lost outputs, a late outlier), recovery,
// when reached, is never shorter than the longest interval without output
// after the fault while outputs were due, nor than unavailable_ms.
func TestRecoveryNeverBelowSilence(t *testing.T) {
	ref := steady(60)
	recovered := 0
	for seed := range uint64(500) {
		rng := rand.New(rand.NewPCG(seed, 11))
		crash := time.Duration(500+rng.IntN(2000)) * ms
		n := int(crash / (100 * ms))
		outage := time.Duration(rng.IntN(3000)) * ms
		var after []ha.Event
		for i := n + 1; i <= 60; i++ {
			due := time.Duration(i) * 100 * ms
			if rng.IntN(15) == 0 {
				continue // lost
			}
			at := max(due, crash+outage)
			if rng.IntN(40) == 0 {
				at += time.Duration(rng.IntN(500)) * ms // an outlier
			}
			if len(after) > 0 {
				at = max(at, after[len(after)-1].T)
			}
			after = append(after, deliver(at, 0, int64(i), at-due+3*ms, 10))
		}
		after = append(after, stats(6500*ms))
		faulty := ha.NewTrace(withFault(ref, n, crash, after...)...)
		r := metrics.RecoveryOf(ha.NewTrace(ref...), faulty)
		require.NoError(t, metrics.CheckRecovery(r, ha.NewTrace(ref...), faulty, metrics.RecoveryOptions{}), "seed %d", seed)
		prev, silence := crash, time.Duration(0)
		for _, e := range after {
			if e.Kind == ha.EvDeliver {
				if e.T-prev > 100*ms {
					silence = max(silence, e.T-prev)
				}
				prev = e.T
			}
		}
		if r.RecoveryMs == nil {
			require.True(t, r.NotRecovered, "seed %d", seed)
			continue
		}
		recovered++
		require.GreaterOrEqual(t, *r.RecoveryMs, ms2(silence), "seed %d", seed)
		require.GreaterOrEqual(t, *r.RecoveryMs, r.UnavailableMs, "seed %d", seed)
	}
	assert.Greater(t, recovered, 100, "the property was checked on recovered runs")
}

func TestLostInputsCountsEachTupleOnce(t *testing.T) {
	running := func(at time.Duration, upd int64, n uint32) ha.Event {
		return ha.Event{T: at, Kind: ha.EvDeliver, Tuple: &ha.Tuple{Key: 1, Emit: int64(at), ID: ha.OutputID{Kind: ha.IDKey, Key: 1, X: upd}, Lineage: ha.Lineage{N: n}}}
	}
	ref := []ha.Event{running(1*ms, 1, 1), running(2*ms, 2, 2), running(3*ms, 3, 3), running(4*ms, 4, 4)}
	// Restarted after update 2 lost its state: later outputs miss 2 inputs each.
	faulty := []ha.Event{running(1*ms, 1, 1), running(2*ms, 2, 2), running(3*ms, 3, 1), running(4*ms, 4, 2)}
	r := metrics.RecoveryOf(ha.NewTrace(ref...), ha.NewTrace(faulty...))
	assert.Equal(t, "gap", r.Type)
	assert.EqualValues(t, 2, r.LostInputs, "a running aggregate's lost tuples count once, not once per later output")

	wins := steady(3)
	short := []ha.Event{wins[0], deliver(200*ms, 0, 2, 3*ms, 4)}
	r = metrics.RecoveryOf(ha.NewTrace(wins...), ha.NewTrace(short...))
	assert.EqualValues(t, 6+10, r.LostInputs, "windows: shortfall of #2 plus all of the missing #3")
	assert.Equal(t, 1, r.Missing)
}

func TestFirstFaultIgnoresUndetectedPause(t *testing.T) {
	tr := []ha.Event{
		{T: 1 * time.Second, Kind: ha.EvPause, Host: "B"},
		{T: 3 * time.Second, Kind: ha.EvPause, Host: "C"},
		{T: 3300 * ms, Kind: ha.EvDetect, Host: "A", Peer: "C"},
	}
	at, host, ok := metrics.FirstFault(ha.NewTrace(tr...))
	require.True(t, ok)
	assert.Equal(t, 3*time.Second, at)
	assert.Equal(t, "C", host)
	tr = append(tr, ha.Event{T: 5 * time.Second, Kind: ha.EvCrash, Host: "D"})
	at, host, _ = metrics.FirstFault(ha.NewTrace(tr...))
	assert.Equal(t, 5*time.Second, at, "a crash takes precedence")
	assert.Equal(t, "D", host)
}

func TestOverheadRatios(t *testing.T) {
	stats := func(host string, msgs, bytes, cpu, peak int64) ha.Event {
		return ha.Event{Kind: ha.EvStats, Host: host, Stats: &ha.NodeStats{Messages: msgs, Bytes: bytes, CPU: cpu, PeakQueue: peak, ProcessCPU: 10 * cpu}}
	}
	base := metrics.OverheadOf(ha.NewTrace(stats("A", 100, 1000, 2e6, 0), stats("B", 100, 1000, 2e6, 0)), nil)
	o := metrics.OverheadOf(ha.NewTrace(stats("A", 200, 2100, 4e6, 50), stats("A.1", 100, 1000, 4e6, 70)), &base)
	require.NotNil(t, o.MessagesRatio)
	assert.InDelta(t, 1.5, *o.MessagesRatio, 1e-9)
	assert.InDelta(t, 1.55, *o.BytesRatio, 1e-9)
	assert.InDelta(t, 2.0, *o.CPURatio, 1e-9)
	assert.InDelta(t, 80, o.ProcessCPUMs, 1e-9, "process CPU (real runs) is summed too")
	require.NotNil(t, o.ProcessCPURatio)
	assert.InDelta(t, 2.0, *o.ProcessCPURatio, 1e-9)
	assert.InDelta(t, 40, o.Nodes[0].ProcessCPUMs, 1e-9)
	sim := metrics.OverheadOf(ha.NewTrace(stats("A", 1, 1, 0, 0)), &base)
	assert.Nil(t, sim.ProcessCPURatio, "no process CPU, no ratio (simulated runs)")
	assert.Nil(t, o.PeakQueueRatio, "no ratio against a zero baseline")
	assert.EqualValues(t, 70, o.PeakQueue)
	assert.Len(t, o.Nodes, 2)
}

// TestMedianOverhead: repeated real measurements are summarised by their
// medians; each ratio is the median of the rounds' own ratios, with its
// range, and rounds without a ratio do not count.
func TestMedianOverhead(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	round := func(cpu, ratio float64, procRatio *float64, msgs int64, nodes ...metrics.NodeFigures) metrics.Overhead {
		return metrics.Overhead{CPUMs: cpu, CPURatio: f(ratio), ProcessCPURatio: procRatio, Messages: msgs, Nodes: nodes}
	}
	node := func(host string, cpu float64) metrics.NodeFigures {
		return metrics.NodeFigures{Host: host, Role: "primary", CPUMs: cpu}
	}
	tests := []struct {
		name      string
		rounds    []metrics.Overhead
		cpu       float64
		ratio     float64
		rng       metrics.Range
		procRatio *float64
		msgs      int64
		nodes     []metrics.NodeFigures
	}{
		{
			name: "odd count: the middle round's figures, each field on its own",
			rounds: []metrics.Overhead{
				round(130, 1.3, f(1.2), 10, node("A", 30), node("B", 100)),
				round(90, 0.9, nil, 30, node("A", 10), node("B", 80)),
				round(200, 1.1, f(1.0), 20, node("A", 20), node("B", 180)),
			},
			cpu: 130, ratio: 1.1, rng: metrics.Range{Min: 0.9, Max: 1.3}, procRatio: f(1.1), msgs: 20,
			nodes: []metrics.NodeFigures{node("A", 20), node("B", 100)},
		},
		{
			name: "even count: the mean of the middle two; a host of one round only keeps its figure",
			rounds: []metrics.Overhead{
				round(100, 1.0, nil, 10, node("A", 10)),
				round(300, 1.4, nil, 11, node("A", 30), node("A.1", 5)),
			},
			cpu: 200, ratio: 1.2, rng: metrics.Range{Min: 1.0, Max: 1.4}, msgs: 11,
			nodes: []metrics.NodeFigures{node("A", 20), node("A.1", 5)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := metrics.MedianOverhead(tc.rounds)
			assert.Equal(t, len(tc.rounds), o.Rounds)
			assert.InDelta(t, tc.cpu, o.CPUMs, 1e-9)
			require.NotNil(t, o.CPURatio)
			assert.InDelta(t, tc.ratio, *o.CPURatio, 1e-9)
			require.NotNil(t, o.CPURatioRange)
			assert.InDelta(t, tc.rng.Min, o.CPURatioRange.Min, 1e-9)
			assert.InDelta(t, tc.rng.Max, o.CPURatioRange.Max, 1e-9)
			if tc.procRatio == nil {
				assert.Nil(t, o.ProcessCPURatio)
				assert.Nil(t, o.ProcessCPURatioRange)
			} else {
				require.NotNil(t, o.ProcessCPURatio)
				assert.InDelta(t, *tc.procRatio, *o.ProcessCPURatio, 1e-9)
			}
			assert.Equal(t, tc.msgs, o.Messages)
			assert.Nil(t, o.MessagesRatio, "no round had a messages ratio")
			require.Len(t, o.Nodes, len(tc.nodes))
			for i, n := range tc.nodes {
				assert.Equal(t, n.Host, o.Nodes[i].Host)
				assert.InDelta(t, n.CPUMs, o.Nodes[i].CPUMs, 1e-9, n.Host)
			}
		})
	}
	one := round(50, 0.8, nil, 3)
	assert.Equal(t, one, metrics.MedianOverhead([]metrics.Overhead{one}), "one round is kept as it is")
}

// TestClassifyInPlaceAgreesWithOutputs: classifying delivery logs in
// place gives exactly the verdict, counts, labels and explanations of
// classifying their text form, on randomly damaged logs (lost, repeated,
// reordered and wrong outputs, including -0 against 0 and NaN values).
func TestClassifyInPlaceAgreesWithOutputs(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), math.NaN(), 1.5, 2.25, -3, math.Inf(1)}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var exp []ha.Event
		n := 1 + rng.IntN(60)
		for i := range n {
			kind := ha.IDKind(rng.IntN(4))
			exp = append(exp, ha.Event{T: time.Duration(i+1) * ms, Kind: ha.EvDeliver, Tuple: &ha.Tuple{
				Key: uint32(rng.IntN(3)), Emit: int64(i) * int64(ms), Value: values[rng.IntN(len(values))],
				ID:      ha.OutputID{Kind: kind, Key: uint32(rng.IntN(3)), X: int64(rng.IntN(n))},
				Lineage: ha.Lineage{N: uint32(1 + rng.IntN(3))},
			}})
		}
		var obs []ha.Event
		for _, e := range exp {
			tu := *e.Tuple
			switch rng.IntN(10) {
			case 0: // lost
				continue
			case 1: // repeated
				obs = append(obs, ha.Event{T: e.T, Kind: ha.EvDeliver, Tuple: &tu})
			case 2: // wrong value or lineage
				tu.Value = values[rng.IntN(len(values))]
				tu.Lineage.N = uint32(rng.IntN(3))
			case 3: // swapped with the previous delivery
				if k := len(obs); k > 0 {
					obs = append(obs[:k-1], ha.Event{T: e.T, Kind: ha.EvDeliver, Tuple: &tu}, obs[k-1])
					continue
				}
			}
			obs = append(obs, ha.Event{T: e.T + time.Duration(rng.IntN(3))*ms, Kind: ha.EvDeliver, Tuple: &tu})
		}
		et, ot := ha.NewTrace(exp...).Deliveries(), ha.NewTrace(obs...).Deliveries()
		marks := []classify.Mark{{At: float64(n) / 2, Label: "the crash of B"}}
		want := classify.Classify(metrics.Outputs(et), metrics.Outputs(ot), marks)
		got := metrics.Classify(et, ot, marks)
		require.Equal(t, want, got, "seed %d", seed)
	}
}

// TestLostInputsAreDistinctSourceTuples: a join pair names two source
// tuples; a tuple is lost only when none of its pairs arrived, and counts
// once however many pairs it had. Aggregates that count each tuple
// several times are scaled by the failure-free multiplicity, so lost
// inputs never exceed the tuples emitted.
func TestLostInputsAreDistinctSourceTuples(t *testing.T) {
	pair := func(at time.Duration, l, r int64) ha.Event {
		return ha.Event{T: at, Kind: ha.EvDeliver, Tuple: &ha.Tuple{Key: 1, Emit: int64(at),
			ID: ha.OutputID{Kind: ha.IDPair, Key: 1, X: l<<32 | r}, Lineage: ha.Lineage{N: 2}}}
	}
	emitted := ha.Event{T: 10 * ms, Kind: ha.EvStats, Host: "src", Stats: &ha.NodeStats{Emitted: 7}}
	// Left tuples 1, 2 and right tuples 1, 2, 3 all pair up: 6 pairs. Left
	// 1 was forgotten: its 3 pairs are missing; rights 1–3 still pair with left 2.
	var ref, obs []ha.Event
	for l := int64(1); l <= 2; l++ {
		for r := int64(1); r <= 3; r++ {
			ref = append(ref, pair(time.Duration(l*3+r)*ms, l, r))
			if l == 2 {
				obs = append(obs, pair(time.Duration(l*3+r)*ms, l, r))
			}
		}
	}
	ref = append(ref, emitted)
	r := metrics.RecoveryOf(ha.NewTrace(ref...), ha.NewTrace(obs...))
	assert.EqualValues(t, 1, r.LostInputs, "only left tuple 1 lost its effect")
	assert.EqualValues(t, 6, r.LostLineage, "3 missing pairs of 2 tuples each")
	assert.EqualValues(t, 7, r.Emitted)
	assert.EqualValues(t, 2, r.UnmatchedInputs, "7 emitted, 5 in some pair")

	// Sliding windows count each of 4 emitted tuples in 2 windows: a
	// missing window of lineage 4 lost 2 tuples, not 4.
	win := func(at time.Duration, w int64, n uint32) ha.Event { return deliver(at, 0, w, 1*ms, n) }
	ref = []ha.Event{win(1*ms, 0, 2), win(2*ms, 1, 4), win(3*ms, 2, 2),
		{T: 4 * ms, Kind: ha.EvStats, Host: "src", Stats: &ha.NodeStats{Emitted: 4}}}
	obs = []ha.Event{win(1*ms, 0, 2), win(3*ms, 2, 2)}
	r = metrics.RecoveryOf(ha.NewTrace(ref...), ha.NewTrace(obs...))
	assert.EqualValues(t, 2, r.LostInputs)
	assert.EqualValues(t, 4, r.LostLineage)
	assert.LessOrEqual(t, r.LostInputs, r.Emitted)
}

// TestRestartedRunningSum: a running sum restarted empty numbers its
// outputs anew (k01#1, k01#2, … again). Its later ids are never delivered,
// so it is not recovered; it lost the tuples its first life had summed,
// not every tuple of the missing ids.
func TestRestartedRunningSum(t *testing.T) {
	running := func(at time.Duration, upd int64, n uint32, v float64) ha.Event {
		return ha.Event{T: at, Kind: ha.EvDeliver, Tuple: &ha.Tuple{Key: 1, Emit: int64(at), Value: v,
			ID: ha.OutputID{Kind: ha.IDKey, Key: 1, X: upd}, Lineage: ha.Lineage{N: n}}}
	}
	var ref []ha.Event
	for i := int64(1); i <= 6; i++ {
		ref = append(ref, running(time.Duration(i)*100*ms, i, uint32(i), float64(i)))
	}
	faulty := append([]ha.Event{}, ref[:2]...)
	faulty = append(faulty, ha.Event{T: 250 * ms, Kind: ha.EvCrash, Host: "B"},
		running(400*ms, 1, 1, 9), running(500*ms, 2, 2, 9), running(600*ms, 3, 3, 9), stats(700*ms))
	r := metrics.RecoveryOf(ha.NewTrace(ref...), ha.NewTrace(faulty...))
	assert.Equal(t, "gap", r.Type)
	assert.True(t, r.NotRecovered, "k01#4 to #6 never came")
	assert.EqualValues(t, 3, r.LostInputs, "the key's last output reflects 3 of 6 tuples")
}

// TestMarksNameOnlyReplaysThatSendOutputOn: a replay to a first host, to
// the sink or to a host that took over is a mark; one that brings a new
// secondary up to date is not, so no explanation blames it.
func TestMarksNameOnlyReplaysThatSendOutputOn(t *testing.T) {
	tr := ha.NewTrace(
		ha.Event{T: 1 * time.Second, Kind: ha.EvReplayStart, Host: "src", Peer: "A", N: 3},
		ha.Event{T: 2 * time.Second, Kind: ha.EvCrash, Host: "A"},
		ha.Event{T: 2100 * time.Millisecond, Kind: ha.EvTakeover, Host: "A.1", Peer: "A", Epoch: 1},
		ha.Event{T: 2100 * time.Millisecond, Kind: ha.EvReplayStart, Host: "A.1", Peer: "B", N: 40},
		ha.Event{T: 2100 * time.Millisecond, Kind: ha.EvReplayStart, Host: "A.1", Peer: "B.1", N: 40},
		ha.Event{T: 2101 * time.Millisecond, Kind: ha.EvReplayStart, Host: "src", Peer: "A.1", N: 2},
		ha.Event{T: 2102 * time.Millisecond, Kind: ha.EvReplayStart, Host: "src", Peer: "A.2", N: 4},
		ha.Event{T: 2103 * time.Millisecond, Kind: ha.EvReplayStart, Host: "B", Peer: "sink", N: 5},
		ha.Event{T: 2104 * time.Millisecond, Kind: ha.EvReplayStart, Host: "src", Peer: "A", N: 0},
	)
	var labels []string
	for _, m := range metrics.Marks(tr) {
		labels = append(labels, m.Label)
	}
	assert.Equal(t, []string{
		"the replay of 3 tuples from src to A",
		"the crash of A",
		"the takeover by A.1 (epoch 1)",
		"the replay of 40 tuples from A.1 to B",
		"the replay of 2 tuples from src to A.1",
		"the replay of 5 tuples from B to sink",
	}, labels)
}
