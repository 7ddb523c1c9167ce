package passivestandby_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/passivestandby"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// exp describes a short test experiment; zero fields take the defaults
// of baseYAML.
type exp struct {
	seed       uint64
	source     string // flow mapping of source:
	nodes      string // YAML list items of nodes:
	spares     int
	network    string // flow mapping of network:
	cpu        string // flow mapping of cpu: ("" = default)
	strategy   string // extra strategy parameters, "k: v, k: v"
	faults     string // YAML list items of faults:
	duration   string
	fencingOff bool
}

const defaultNodes = `
  - {name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}
  - {name: B, ops: [{running_sum: {}}]}
  - {name: C, ops: [{map: {scale: 1}}]}`

func (x exp) yaml() string {
	if x.seed == 0 {
		x.seed = 1
	}
	if x.source == "" {
		x.source = "{rate: 1000, keys: 64}"
	}
	if x.nodes == "" {
		x.nodes = defaultNodes
	}
	if x.spares == 0 {
		x.spares = 2
	}
	if x.network == "" {
		x.network = "{latency: 1ms, jitter: 100us, bandwidth: 1Gbps}"
	}
	if x.duration == "" {
		x.duration = "5s"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: ps-test\nseed: %d\nduration: %s\ndrain: 1s\nsource: %s\nnodes:%s\nspares: %d\nnetwork: %s\n",
		x.seed, x.duration, x.source, x.nodes, x.spares, x.network)
	if x.cpu != "" {
		fmt.Fprintf(&b, "cpu: %s\n", x.cpu)
	}
	if x.fencingOff {
		b.WriteString("fencing: false\n")
	}
	st := "name: " + passivestandby.Name
	if x.strategy != "" {
		st += ", " + x.strategy
	}
	fmt.Fprintf(&b, "strategy: {%s}\n", st)
	if x.faults != "" {
		fmt.Fprintf(&b, "faults:%s\n", x.faults)
	}
	return b.String()
}

func (x exp) parse(t *testing.T) *experiment.Experiment {
	t.Helper()
	e, err := experiment.Parse([]byte(x.yaml()), t.Name())
	require.NoError(t, err, x.yaml())
	return e
}

// run compares passive standby against the failure-free reference.
func run(t *testing.T, x exp) sim.StrategyRun {
	t.Helper()
	c, err := sim.Compare(x.parse(t), []string{passivestandby.Name})
	require.NoError(t, err)
	require.Len(t, c.Runs, 1)
	return c.Runs[0]
}

// simTrace runs the experiment under passive standby alone, with its
// faults or without, and returns the trace.
func simTrace(t *testing.T, x exp, failureFree bool) *ha.Trace {
	t.Helper()
	e := x.parse(t)
	st, err := strategies.Build(passivestandby.Name, e.ParamsFor(passivestandby.Name))
	require.NoError(t, err)
	cfg, err := sim.ConfigFor(e, st, failureFree)
	require.NoError(t, err)
	out, err := sim.Run(cfg)
	require.NoError(t, err)
	return out.Trace
}

// events returns the trace events of a kind (and host, when not "").
func events(trace *ha.Trace, kind ha.EventKind, host string) []ha.Event {
	var out []ha.Event
	for _, e := range trace.Events() {
		if e.Kind == kind && (host == "" || e.Host == host) {
			out = append(out, e)
		}
	}
	return out
}

// firstAfter returns the first event of the list at or after at.
func firstAfter(evs []ha.Event, at time.Duration) (ha.Event, bool) {
	for _, e := range evs {
		if e.T >= at {
			return e, true
		}
	}
	return ha.Event{}, false
}

// lastBefore returns the last event of the list strictly before at.
func lastBefore(evs []ha.Event, at time.Duration) (ha.Event, bool) {
	var out ha.Event
	found := false
	for _, e := range evs {
		if e.T < at {
			out, found = e, true
		}
	}
	return out, found
}

func requirePrecise(t *testing.T, r metrics.Recovery) {
	t.Helper()
	require.Equal(t, "precise", r.Type, "explanations: %v", r.Explanations)
	require.Zero(t, r.Missing)
	require.Zero(t, r.Duplicates)
	require.Zero(t, r.Wrong)
	require.Zero(t, r.Spurious)
	require.Zero(t, r.LostInputs)
	require.Equal(t, r.Expected, r.Delivered)
	require.Positive(t, r.Delivered)
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func dur(d time.Duration) string { return d.String() }
