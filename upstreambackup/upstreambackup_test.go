package upstreambackup_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
	"github.com/streamha/streamha/upstreambackup"
)

// header is a short experiment: 2000 tuples/s over 8 keys for 6 s.
const header = `name: ub-test
seed: 7
duration: 6s
drain: 2s
source: {rate: 2000, keys: 8}
spares: 2
network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
`

// chain builds source → A (filter) → B (op) → C (map) → sink.
func chain(bOp string) string {
	return fmt.Sprintf("nodes:\n  - {name: A, ops: [{filter: {value_gt: 0.1}}]}\n  - {name: B, ops: [%s]}\n  - {name: C, ops: [{map: {scale: 1}}]}\n", bOp)
}

const (
	tumbling = "{tumbling: {size: 1s, agg: sum}}"
	sliding  = "{sliding: {size: 1s, slide: 250ms, agg: sum}}"
	running  = "{running_sum: {}}"
)

// compare runs the experiment under upstream-backup (plus others) and returns the result.
func compare(t *testing.T, yaml string, names ...string) *sim.Comparison {
	t.Helper()
	e, err := experiment.Parse([]byte(yaml), t.Name())
	require.NoError(t, err)
	c, err := sim.Compare(e, append([]string{upstreambackup.Name}, names...))
	require.NoError(t, err)
	return c
}

func TestRecovery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		nodes   string
		faults  string
		params  string
		typ     string
		subtype string
		check   func(t *testing.T, r metrics.Run)
	}{
		{
			name: "tumbling, crash mid-window: the replay starts at the open window", nodes: chain(tumbling),
			faults: "[{at: 3.4s, crash: B}]", typ: "precise",
		},
		{
			// The crash falls before the level-1 ack for the window that closed
			// at 3 s reached A: the replay rebuilds it and C receives it twice.
			name: "tumbling, crash just after a window closed", nodes: chain(tumbling),
			faults: "[{at: 3.05s, crash: B}]", typ: "rollback", subtype: "repeating",
			check: func(t *testing.T, r metrics.Run) { assert.Positive(t, r.Recovery.Duplicates) },
		},
		{
			name: "tumbling with dedup", nodes: chain(tumbling), params: "dedup: true",
			faults: "[{at: 3.05s, crash: B}]", typ: "precise",
			check: func(t *testing.T, r metrics.Run) { assert.Positive(t, r.Extra["dedup_dropped"]) },
		},
		{
			// The restarted sliding window recreates the windows containing the
			// first replayed tuple; those starting before the replayed history
			// are incomplete and dropped downstream.
			name: "sliding", nodes: chain(sliding),
			faults: "[{at: 3.4s, crash: B}]", typ: "rollback", subtype: "repeating",
			check: func(t *testing.T, r metrics.Run) {
				assert.Positive(t, r.Recovery.Duplicates)
				assert.Positive(t, r.Extra["incomplete_dropped"])
			},
		},
		{
			name: "retention max_tuples shorter than the window", nodes: chain(tumbling), params: "max_tuples: 300",
			faults: "[{at: 3.4s, crash: B}]", typ: "gap",
			check: func(t *testing.T, r metrics.Run) {
				assert.Positive(t, r.Recovery.LostInputs)
				assert.Positive(t, r.Extra["retention_dropped"])
				assert.LessOrEqual(t, r.Overhead.PeakQueue, int64(300))
			},
		},
		{
			name: "retention max_age shorter than the window", nodes: chain(tumbling), params: "max_age: 200ms",
			faults: "[{at: 3.4s, crash: B}]", typ: "gap",
			check: func(t *testing.T, r metrics.Run) { assert.Positive(t, r.Recovery.LostInputs) },
		},
		{
			name: "running sum: unbounded queue, whole history replayed", nodes: chain(running),
			faults: "[{at: 3.4s, crash: B}]", typ: "rollback", subtype: "repeating",
			check: func(t *testing.T, r metrics.Run) {
				assert.Equal(t, false, r.Extra["level1_advanced"])
				assert.Equal(t, []string{"A"}, r.Extra["stalled_queues"])
				// A forwards about 90 % of 2000 tuples/s and never trims.
				assert.InDelta(t, 1800, r.Extra["queue_growth_per_s"], 200)
				assert.Greater(t, r.Overhead.PeakQueue, int64(9000))
			},
		},
		{
			name: "running sum with dedup", nodes: chain(running), params: "dedup: true",
			faults: "[{at: 3.4s, crash: B}]", typ: "precise",
		},
		{
			name: "last node before the sink", nodes: chain(tumbling),
			faults: "[{at: 3.4s, crash: C}]", typ: "precise",
		},
		{
			// B keeps its state and receives A's replayed outputs again: its
			// open windows count them twice, later windows are right again.
			name: "first node after the source", nodes: chain(tumbling),
			faults: "[{at: 3.4s, crash: A}]", typ: "rollback", subtype: "convergent",
			check: func(t *testing.T, r metrics.Run) { assert.Positive(t, r.Recovery.Wrong) },
		},
		{
			name: "first node after the source with dedup", nodes: chain(tumbling), params: "dedup: true",
			faults: "[{at: 3.4s, crash: A}]", typ: "precise",
		},
		{
			name: "two non-adjacent failures", nodes: chain(tumbling),
			faults: "[{at: 3.4s, crash: A}, {at: 3.6s, crash: C}]", typ: "rollback", subtype: "convergent",
		},
		{
			name: "two non-adjacent failures with dedup", nodes: chain(tumbling), params: "dedup: true",
			faults: "[{at: 3.4s, crash: A}, {at: 3.6s, crash: C}]", typ: "precise",
			check: func(t *testing.T, r metrics.Run) { assert.Positive(t, r.Extra["dedup_dropped"]) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			y := header + tt.nodes + "faults: " + tt.faults + "\n"
			if tt.params != "" {
				y += "strategy: {name: upstream-backup, " + tt.params + "}\n"
			}
			r := compare(t, y).Result.Runs[0]
			rec := r.Recovery
			assert.Equal(t, tt.typ, rec.Type, "explanations: %v", rec.Explanations)
			assert.Equal(t, tt.subtype, rec.Subtype)
			if tt.typ != "gap" {
				assert.Zero(t, rec.Missing)
				assert.Zero(t, rec.LostInputs)
			}
			if tt.typ == "precise" {
				assert.Zero(t, rec.Duplicates)
			}
			require.NotNil(t, rec.RecoveryMs)
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

// TestQueueBounded checks, in a failure-free run, that every output queue
// of a windowed query stays within (window + a few ack intervals) × rate,
// and that the reported bytes match the tuples.
func TestQueueBounded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		window, ack time.Duration
		op          string
	}{
		{time.Second, 100 * time.Millisecond, "tumbling"},
		{2 * time.Second, 100 * time.Millisecond, "tumbling"},
		{time.Second, 250 * time.Millisecond, "tumbling"},
		{time.Second, 100 * time.Millisecond, "sliding"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s ack %s", tt.op, tt.window, tt.ack), func(t *testing.T) {
			t.Parallel()
			op := fmt.Sprintf("{tumbling: {size: %s, agg: sum}}", tt.window)
			if tt.op == "sliding" {
				op = fmt.Sprintf("{sliding: {size: %s, slide: 250ms, agg: sum}}", tt.window)
			}
			y := header + chain(op) + "faults: []\n" +
				fmt.Sprintf("strategy: {name: upstream-backup, ack_interval: %s}\n", tt.ack)
			r := compare(t, y).Result.Runs[0]
			bound := int64((tt.window + 3*tt.ack).Seconds() * 2000)
			var a, perTuple int64
			for _, nf := range r.Overhead.Nodes {
				assert.LessOrEqual(t, nf.PeakQueue, bound, "host %s", nf.Host)
				// Bytes follow the tuples at one wire size per tuple.
				if nf.PeakQueue > 0 {
					if perTuple == 0 {
						perTuple = nf.PeakQueueBytes / nf.PeakQueue
					}
					assert.Positive(t, perTuple)
					assert.Equal(t, perTuple*nf.PeakQueue, nf.PeakQueueBytes, "host %s", nf.Host)
				}
				if nf.Host == "A" {
					a = nf.PeakQueue
				}
			}
			// A holds the open window's input: at least about window × 90 % × rate.
			assert.Greater(t, a, int64(tt.window.Seconds()*2000*0.8))
			assert.Equal(t, true, r.Extra["level1_advanced"])
		})
	}
}

// TestDefaultExperiment checks the built-in experiment: no loss, acks-only
// overhead, recovery no faster than a restart without replay.
func TestDefaultExperiment(t *testing.T) {
	t.Parallel()
	c, err := sim.Compare(experiment.Default(), []string{upstreambackup.Name, "amnesia"})
	require.NoError(t, err)
	ub, am := c.Result.Runs[0], c.Result.Runs[1]
	rec := ub.Recovery
	assert.Contains(t, []string{"precise", "rollback/repeating"}, strings.TrimSuffix(rec.Type+"/"+rec.Subtype, "/"))
	assert.Zero(t, rec.Missing)
	assert.Zero(t, rec.LostInputs)
	require.NotNil(t, ub.Overhead.BytesRatio)
	assert.LessOrEqual(t, *ub.Overhead.BytesRatio, 1.05)
	require.NotNil(t, rec.RecoveryMs)
	require.NotNil(t, rec.DetectionMs)
	require.NotNil(t, am.Recovery.RecoveryMs)
	// The replay rebuilds the window before it closes at 11 s: its output
	// is on time, and recovery is the detection, as amnesia's.
	assert.InDelta(t, *rec.DetectionMs, *rec.RecoveryMs, 1e-9)
	assert.GreaterOrEqual(t, *rec.RecoveryMs, *am.Recovery.RecoveryMs)
	assert.Positive(t, ub.Overhead.PeakQueue)
}

// TestRecoveryGrowsWithWindow crashes B just before a tumbling window of
// growing size closes: its output waits for the replay of the whole
// window, so the recovery grows with it.
func TestRecoveryGrowsWithWindow(t *testing.T) {
	t.Parallel()
	var prev float64
	for _, w := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		// Windows are aligned on multiples of their size: crash 20 ms
		// before the window [4w', 4w'+w) closes, so its output waits for
		// the detection and for the replay of the whole window.
		start := (4 * time.Second / w) * w
		crash := start + w - 20*time.Millisecond
		y := fmt.Sprintf("name: grow\nseed: 3\nduration: %s\ndrain: 2s\nsource: {rate: 2000, keys: 8}\nspares: 1\n", start+w+time.Second) +
			chain(fmt.Sprintf("{tumbling: {size: %s, agg: sum}}", w)) +
			fmt.Sprintf("faults: [{at: %s, crash: B}]\n", crash)
		c := compare(t, y)
		ub := c.Result.Runs[0].Recovery
		require.NotNil(t, ub.RecoveryMs)
		require.NotNil(t, ub.DetectionMs)
		assert.Greater(t, *ub.RecoveryMs, *ub.DetectionMs, "window %s: the replay takes time", w)
		assert.Greater(t, *ub.RecoveryMs, prev, "window %s", w)
		prev = *ub.RecoveryMs
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	y := header + chain(sliding) + "faults: [{at: 3.4s, crash: B}]\nstrategy: {name: upstream-backup, dedup: true}\n"
	a, b := compare(t, y), compare(t, y)
	assert.Equal(t, a.Result, b.Result)
	assert.Equal(t, a.Runs[0].Trace, b.Runs[0].Trace)
}

func TestParams(t *testing.T) {
	tests := []struct {
		raw  map[string]any
		want string // error substring; "" = valid
	}{
		{nil, ""},
		{map[string]any{"ack_interval": "50ms", "dedup": true, "max_tuples": 1000, "max_age": "2s"}, ""},
		{map[string]any{"ack_interval": "0s"}, "ack_interval: must be positive"},
		{map[string]any{"ack_interval": "2m"}, "ack_interval: must be at most"},
		{map[string]any{"max_age": "10us"}, "max_age"},
		{map[string]any{"max_tuples": -1}, "max_tuples"},
		{map[string]any{"dedup": "maybe"}, "dedup"},
		{map[string]any{"window": "1s"}, "unknown parameter"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.raw), func(t *testing.T) {
			s, err := strategies.Build(upstreambackup.Name, tt.raw)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, upstreambackup.Name, s.Name())
				assert.Equal(t, 1, s.Replicas())
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	info, err := strategies.Lookup(upstreambackup.Name)
	require.NoError(t, err)
	var names []string
	for _, p := range info.Params {
		names = append(names, p.Name)
		assert.NotEmpty(t, p.Doc, p.Name)
	}
	assert.Equal(t, []string{"ack_interval", "dedup", "max_tuples", "max_age"}, names)
	s, err := upstreambackup.New(upstreambackup.DefaultConfig())
	require.NoError(t, err)
	assert.Equal(t, 100*time.Millisecond, s.Config().AckInterval)
}

// TestSparesIdleUntilTakeover: a spare has nothing to acknowledge, so it
// does not wake for the ack rounds; once it takes over it joins them, and
// its acks keep trimming its upstream's queue.
func TestSparesIdleUntilTakeover(t *testing.T) {
	t.Parallel()
	c, err := sim.Compare(experiment.Default(), []string{upstreambackup.Name})
	require.NoError(t, err)
	spares := 0
	for _, nf := range c.Result.Runs[0].Overhead.Nodes { // the failure-free run
		if strings.Contains(nf.Host, ".") {
			spares++
			assert.Zero(t, nf.CPUMs, "spare %s woke up", nf.Host)
			assert.Zero(t, nf.Messages, "spare %s sent something", nf.Host)
		}
	}
	require.Positive(t, spares)
	stats := map[string]*ha.NodeStats{}
	for _, e := range c.Runs[0].Trace.Events() { // the run where B crashes at 10.4 s
		if e.Kind == ha.EvStats {
			stats[e.Host] = e.Stats
		}
	}
	require.Contains(t, stats, "B.1")
	assert.Positive(t, stats["B.1"].Messages, "the new primary sends acks and floors")
	assert.Zero(t, stats["B.2"].Messages, "the next spare stays idle")
	// Without B.1's level-1 acks, A would retain everything after the crash
	// (about 9.6 s × 2000 tuples); with them, about a window plus the ack lag.
	assert.Less(t, stats["A"].PeakQueue, int64(3000))
}
