package experiment_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
)

func TestParseRejectsBadExperiments(t *testing.T) {
	base := "source: {rate: 100, keys: 2}\nnodes: [{name: A, ops: [{map: {scale: 1}}]}]\n"
	cases := []struct {
		name, yaml, want string
	}{
		{"malformed yaml", "nodes: [", "did not find expected"},
		{"empty", "", "empty file"},
		{"unknown field", base + "colour: red\n", "colour: unknown field"},
		{"unknown operator", "source: {rate: 100, keys: 2}\nnodes: [{name: A, ops: [{fliter: {}}]}]\n", `nodes[0].ops[0]: unknown operator "fliter"`},
		{"unknown op param", "source: {rate: 100, keys: 2}\nnodes: [{name: A, ops: [{map: {sclae: 1}}]}]\n", `unknown parameter "sclae"`},
		{"unknown strategy", base + "strategy: {name: paxos}\n", `unknown strategy "paxos"`},
		{"unknown strategy param", base + "strategy: {name: amnesia, interval: 1s}\n", "strategy.interval: unknown parameter"},
		{"negative duration", base + "duration: -1s\n", "must not be negative"},
		{"bad duration", base + "network: {latency: fast}\n", `want a duration such as 200ms, got "fast"`},
		{"negative rate", "source: {rate: -5, keys: 2}\nnodes: [{name: A, ops: [{map: {}}]}]\n", "exp.yaml:1: source.rate: want more than 0"},
		{"no nodes", "source: {rate: 100, keys: 2}\n", "nodes: at least one node"},
		{"duplicate node", "source: {rate: 100, keys: 2}\nnodes: [{name: A, ops: [{map: {}}]}, {name: A, ops: [{map: {}}]}]\n", `nodes[1].name: "A" defined twice`},
		{"reserved node", "source: {rate: 100, keys: 2}\nnodes: [{name: sink, ops: [{map: {}}]}]\n", "reserved"},
		{"unknown node in fault", base + "faults: [{at: 1s, crash: Z}]\n", `faults[0].crash: unknown node "Z"`},
		{"crash the source", base + "faults: [{at: 1s, crash: src}]\n", "src cannot fail"},
		{"pause without for", base + "faults: [{at: 1s, pause: A}]\n", "faults[0].for"},
		{"two kinds in one fault", base + "faults: [{at: 1s, crash: A, pause: A, for: 1s}]\n", "exactly one of"},
		{"fault after end", base + "faults: [{at: 99s, crash: A}]\n", "after the end of the run"},
		{"union needs two streams", "source: {rate: 100, keys: 2}\nnodes: [{name: A, ops: [{union: {}}]}]\n", "needs two input streams"},
		{"bad loss", base + "network: {loss: 1.5}\n", "network.loss"},
		{"bad bandwidth", base + "network: {bandwidth: fast}\n", "bit rate"},
		{"negative spares", base + "spares: -1\n", "spares"},
		{"unknown detector model", base + "detector: {model: phi}\n", "detector.model"},
		{"two ops in one entry", "source: {rate: 100, keys: 2}\nnodes: [{name: A, ops: [{map: {}, filter: {value_gt: 1}}]}]\n", "exactly one operator"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := experiment.Parse([]byte(tc.yaml), "exp.yaml")
			require.Error(t, err)
			require.ErrorIs(t, err, experiment.ErrConfig)
			require.Contains(t, err.Error(), "exp.yaml")
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := experiment.Load(filepath.Join(t.TempDir(), "nope.yaml"))
	require.ErrorIs(t, err, experiment.ErrConfig)
	require.Contains(t, err.Error(), "nope.yaml")
}

func TestDefaultsAndExamplesParse(t *testing.T) {
	e := experiment.Default()
	require.Equal(t, "default", e.Name)
	require.Len(t, e.Nodes, 3)
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	require.NoError(t, err)
	for _, f := range files {
		if filepath.Base(f)[:5] == "sweep" {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			_, err = experiment.Parse(b, f)
			require.NoError(t, err)
		})
	}
}

func TestParseBandwidth(t *testing.T) {
	for in, want := range map[string]float64{"1Gbps": 1e9, "250Mbps": 250e6, "10kbps": 1e4, "800bps": 800, "0": 0, "1.5Gbps": 1.5e9} {
		got, err := experiment.ParseBandwidth(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"-1Gbps", "x", "1Tbps"} {
		_, err := experiment.ParseBandwidth(bad)
		require.Error(t, err, bad)
	}
}
