package experiment_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	// Strategy blocks are checked against the registered strategies.
	"github.com/streamha/streamha/experiment"
	_ "github.com/streamha/streamha/strategies/all"
)

// TestHostileExperiments holds every experiment-file case of issue 26 as a
// regression: each is a configuration error (exit status 2) naming the
// file, the line and the field — none runs forever, exhausts memory or
// is accepted silently.
func TestHostileExperiments(t *testing.T) {
	const base = "name: x\nsource: {rate: 100, keys: 4}\nnodes:\n  - {name: A, ops: [{map: {scale: 2}}]}\n"
	many := func(n int, item string) string { return strings.TrimSuffix(strings.Repeat(item+", ", n), ", ") }
	cases := []struct {
		name, yaml, want string
	}{
		{"infinite skew hung rand.Zipf", "name: x\nsource: {rate: 100, keys: 4, skew: .inf}\nnodes: [{name: A, ops: [{map: {}}]}]\n", "x.yaml:2: source.skew:"},
		{"NaN skew", "name: x\nsource: {rate: 100, keys: 4, skew: .nan}\nnodes: [{name: A, ops: [{map: {}}]}]\n", "x.yaml:2: source.skew:"},
		{"rate 1e12", "name: x\nsource: {rate: 1e12, keys: 4}\nnodes: [{name: A, ops: [{map: {}}]}]\n", "x.yaml:2: source.rate:"},
		{"rate 1e300", "name: x\nsource: {rate: 1e300, keys: 4}\nnodes: [{name: A, ops: [{map: {}}]}]\n", "x.yaml:2: source.rate:"},
		{"rate NaN", "name: x\nsource: {rate: .nan, keys: 4}\nnodes: [{name: A, ops: [{map: {}}]}]\n", "x.yaml:2: source.rate:"},
		{"duration 100000h", base + "duration: 100000h\n", "x.yaml:5: duration:"},
		{"duration 2562047h named no field", base + "duration: 2562047h\n", "x.yaml:5: duration:"},
		{"drain 100000h", base + "drain: 100000h\n", "x.yaml:5: drain:"},
		{"a billion spares", base + "spares: 1000000000\n", "x.yaml:5: spares:"},
		{"200,000 operators", "name: x\nsource: {rate: 100, keys: 4}\nnodes:\n  - {name: A, ops: [" + many(200000, "{map: {}}") + "]}\n", "x.yaml: larger than 1048576 bytes (--allow-large raises it)"},
		{"33 operators in a node", "name: x\nsource: {rate: 100, keys: 4}\nnodes:\n  - {name: A, ops: [" + many(33, "{map: {}}") + "]}\n", "x.yaml:4: nodes[0].ops: 33 operators, at most 32"},
		{"33 nodes", "name: x\nsource: {rate: 100, keys: 4}\nnodes: [" + many(33, "{name: A, ops: [{map: {}}]}") + "]\n", "x.yaml:3: nodes: 33 nodes, at most 32"},
		{"200,000 faults", base + "faults: [" + many(200000, "{at: 1s, crash: A}") + "]\n", "x.yaml: larger than 1048576 bytes"},
		{"101 faults", base + "faults: [" + many(101, "{at: 1s, crash: A}") + "]\n", "x.yaml:5: faults: 101 faults, at most 100"},
		{"a 2 MB node name", "name: x\nsource: {rate: 100, keys: 4}\nnodes:\n  - {name: " + strings.Repeat("n", 2<<20) + ", ops: [{map: {}}]}\n", "x.yaml: larger than"},
		{"a 500 kB node name", "name: x\nsource: {rate: 100, keys: 4}\nnodes:\n  - {name: " + strings.Repeat("n", 500<<10) + ", ops: [{map: {}}]}\n", "x.yaml:4: nodes[0].name: 512000 bytes"},
		{"a 65-byte experiment name", "name: " + strings.Repeat("n", 65) + "\nsource: {rate: 100, keys: 4}\nnodes: [{name: A, ops: [{map: {}}]}]\n", "x.yaml:1: name: 65 bytes"},
		{"node name with a newline", "name: x\nsource: {rate: 100, keys: 4}\nnodes:\n  - {name: \"A\\nB\", ops: [{map: {}}]}\n", "x.yaml:4: nodes[0].name:"},
		{"node name with a NUL", "name: x\nsource: {rate: 100, keys: 4}\nnodes:\n  - {name: \"A\\0\", ops: [{map: {}}]}\n", "x.yaml:4: nodes[0].name:"},
		{"network loss NaN", base + "network: {loss: .nan}\n", "x.yaml:5: network.loss:"},
		{"NaN distribution bound", "name: x\nsource: {rate: 100, keys: 4, value: {dist: uniform, min: .nan, max: 1}}\nnodes: [{name: A, ops: [{map: {}}]}]\n", "x.yaml:2: source.value.min:"},
		{"infinite distribution bound", "name: x\nsource: {rate: 100, keys: 4, value: {dist: uniform, min: 0, max: .inf}}\nnodes: [{name: A, ops: [{map: {}}]}]\n", "x.yaml:2: source.value.max:"},
		{"a second YAML document", base + "---\nname: y\n", "x.yaml:5: a second YAML document"},
		{"checkpoint_interval -1s", base + "strategy:\n  name: passive-standby\n  checkpoint_interval: -1s\n", "x.yaml:7: strategy.checkpoint_interval:"},
		{"checkpoint_interval 1ns", base + "strategy:\n  name: passive-standby\n  checkpoint_interval: 1ns\n", "x.yaml:7: strategy.checkpoint_interval:"},
		{"checkpoint_interval a list", base + "strategy:\n  name: passive-standby\n  checkpoint_interval: [1s, 2s]\n", "x.yaml:7: strategy.checkpoint_interval:"},
		{"a strategy duration of NaN hours", base + "strategy: {name: upstream-backup, ack_interval: 1e300h}\n", "x.yaml:5: strategy.ack_interval:"},
		{"a fault probability of NaN", base + "faults: [{at: 1s, for: 1s, loss: {to: A, p: .nan}}]\n", "x.yaml:5: faults[0].loss.p:"},
		{"a duration given as a list", base + "drain: [1s]\n", "x.yaml:5: drain: want a duration"},
		{"a batch of 1ns", "name: x\nsource: {rate: 100, keys: 4, batch: 1ns}\nnodes: [{name: A, ops: [{map: {}}]}]\n", "x.yaml:2: source.batch:"},
		{"bandwidth of 1 bps", base + "network: {bandwidth: 1bps}\n", "x.yaml:5: network.bandwidth:"},
		{"a million keys too many", "name: x\nsource: {rate: 100, keys: 2000000000}\nnodes: [{name: A, ops: [{map: {}}]}]\n", "x.yaml:2: source.keys:"},
		{"more strategies than allowed", base + "strategies: [" + many(20, "{name: amnesia}") + "]\n", "x.yaml:5: strategies:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := experiment.Parse([]byte(tc.yaml), "x.yaml")
			require.Error(t, err)
			require.ErrorIs(t, err, experiment.ErrConfig)
			msg := err.Error()
			require.Contains(t, msg, tc.want)
			require.Less(t, len(msg), 400, "the error quotes at most a bounded part of the input")
		})
	}
}

// TestLoadReadsABoundedPrefix is the 300 MB name of issue 26 and a file
// that never ends: Load reads one byte past the size bound, no more.
func TestLoadReadsABoundedPrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = f.WriteString("name: ")
	require.NoError(t, err)
	require.NoError(t, f.Truncate(300<<20)) // sparse: a 300 MB name of NULs
	require.NoError(t, f.Close())
	for _, p := range []string{path, "/dev/zero"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		_, err := experiment.Load(p)
		require.ErrorIs(t, err, experiment.ErrConfig, p)
		require.Contains(t, err.Error(), "larger than 1048576 bytes", p)
	}
}

// TestAllowLarge checks the escape hatch: a big but finite run is refused
// by default, naming --allow-large, and accepted with it; an infinite or
// absurd value stays refused.
func TestAllowLarge(t *testing.T) {
	big := "name: big\nduration: 2h\nsource: {rate: 1000000, keys: 4}\nnodes:\n" +
		strings.Repeat("", 0) + "  - {name: A, ops: [{map: {}}]}\nspares: 20\n"
	_, err := experiment.Parse([]byte(big), "big.yaml")
	require.ErrorIs(t, err, experiment.ErrConfig)
	require.Contains(t, err.Error(), "--allow-large")
	e, err := experiment.ParseWith([]byte(big), "big.yaml", experiment.ParseOptions{AllowLarge: true})
	require.NoError(t, err)
	require.Equal(t, 20, *e.Spares)
	for _, v := range []string{"rate: .inf", "rate: 1e300"} {
		_, err := experiment.ParseWith([]byte(fmt.Sprintf("name: x\nsource: {%s, keys: 4}\nnodes: [{name: A, ops: [{map: {}}]}]\n", v)), "x.yaml", experiment.ParseOptions{AllowLarge: true})
		require.ErrorIs(t, err, experiment.ErrConfig, v)
	}
}
