package experiment

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/ops"
	"go.yaml.in/yaml/v3"
)

// ErrConfig marks an invalid experiment (the CLI exits with status 2).
var ErrConfig = errors.New("invalid experiment")

// Experiment is an experiment file. Every field is documented in docs/experiment.md.
type Experiment struct {
	Name     string       `yaml:"name"`
	Seed     uint64       `yaml:"seed"`
	Duration Duration     `yaml:"duration"`
	Drain    Duration     `yaml:"drain"`
	Source   SourceConfig `yaml:"source"`
	Nodes    []NodeConfig `yaml:"nodes"`
	// Strategy is the strategy to run (name plus parameters).
	Strategy StrategyConfig `yaml:"strategy,omitempty"`
	// Strategies lists several strategies to compare.
	Strategies []StrategyConfig `yaml:"strategies,omitempty"`
	// Spares is the number of idle hosts per node available for
	// takeovers (default 2).
	Spares  *int  `yaml:"spares,omitempty"`
	Fencing *bool `yaml:"fencing,omitempty"`
	// TraceEmits adds one trace event per tuple emitted by any host.
	TraceEmits bool           `yaml:"trace_emits,omitempty"`
	Network    NetworkConfig  `yaml:"network"`
	CPU        CPUConfig      `yaml:"cpu"`
	Detector   DetectorConfig `yaml:"detector"`
	Faults     []FaultConfig  `yaml:"faults"`

	// opts are the options the experiment was parsed with (its limits).
	opts ParseOptions
}

// SetOptions changes the options Validate checks against (for an
// experiment not read from a file, such as Default()).
func (e *Experiment) SetOptions(o ParseOptions) { e.opts = o }

// Options returns the options the experiment is checked with.
func (e *Experiment) Options() ParseOptions { return e.opts }

// SourceConfig configures the source(s).
type SourceConfig struct {
	Rate    float64     `yaml:"rate"`
	Keys    int         `yaml:"keys"`
	Skew    float64     `yaml:"skew"`
	Value   ValueConfig `yaml:"value"`
	Arrival string      `yaml:"arrival"`
	Batch   Duration    `yaml:"batch"`
	Streams int         `yaml:"streams"`
}

// ValueConfig is the value distribution.
type ValueConfig struct {
	Dist string  `yaml:"dist"`
	Min  float64 `yaml:"min"`
	Max  float64 `yaml:"max"`
	Mean float64 `yaml:"mean"`
	Std  float64 `yaml:"std"`
}

// NodeConfig is one fragment: a name and its operators.
type NodeConfig struct {
	Name string                      `yaml:"name"`
	Ops  []map[string]map[string]any `yaml:"ops"`
}

// StrategyConfig is a strategy name with its parameters inline.
type StrategyConfig struct {
	Name   string
	Params map[string]any
}

// UnmarshalYAML reads {name: X, param: value, ...}.
func (s *StrategyConfig) UnmarshalYAML(n *yaml.Node) error {
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return fmt.Errorf("line %d: strategy must be a mapping such as {name: passive-standby}", n.Line)
	}
	name, _ := m["name"].(string)
	if name == "" {
		return fmt.Errorf("line %d: strategy.name: missing", n.Line)
	}
	delete(m, "name")
	s.Name, s.Params = name, m
	return nil
}

// MarshalYAML writes the inline form.
func (s StrategyConfig) MarshalYAML() (any, error) {
	m := map[string]any{"name": s.Name}
	for k, v := range s.Params {
		m[k] = v
	}
	return m, nil
}

// IsZero lets omitempty drop an unset strategy.
func (s StrategyConfig) IsZero() bool { return s.Name == "" }

// NetworkConfig is the network model.
type NetworkConfig struct {
	Latency   Duration  `yaml:"latency"`
	Jitter    Duration  `yaml:"jitter"`
	Bandwidth Bandwidth `yaml:"bandwidth"`
	Loss      float64   `yaml:"loss"`
}

// CPUConfig is the CPU model.
type CPUConfig struct {
	PerOp    Duration `yaml:"per_op"`
	PerByte  Duration `yaml:"per_byte"`
	PerEvent Duration `yaml:"per_event"`
}

// DetectorConfig is the failure-detector model.
type DetectorConfig struct {
	// Model is "timeout" (declare dead after timeout + a heartbeat phase)
	// or "memberlist" (SWIM: probe interval plus a suspicion timeout that
	// grows with log10 of the cluster size, as hashicorp/memberlist does).
	Model         string   `yaml:"model,omitempty"`
	Heartbeat     Duration `yaml:"heartbeat"`
	Timeout       Duration `yaml:"timeout"`
	SuspicionMult int      `yaml:"suspicion_mult,omitempty"`
}

// FaultConfig is one fault: exactly one of Crash, Pause, Partition, Delay,
// Loss, Corrupt.
type FaultConfig struct {
	At        Duration   `yaml:"at"`
	For       Duration   `yaml:"for,omitempty"`
	Crash     string     `yaml:"crash,omitempty"`
	Pause     string     `yaml:"pause,omitempty"`
	Partition [][]string `yaml:"partition,omitempty"`
	Delay     *LinkFault `yaml:"delay,omitempty"`
	Loss      *LinkFault `yaml:"loss,omitempty"`
	// Corrupt flips one byte of the Body of strategy messages (checkpoints,
	// state transfers) on the selected links with probability P.
	Corrupt *LinkFault `yaml:"corrupt,omitempty"`
}

// Kind names the fault's kind ("crash", "pause", "partition", "delay",
// "loss" or "corrupt"; "" when none is set).
func (f FaultConfig) Kind() string {
	switch {
	case f.Crash != "":
		return "crash"
	case f.Pause != "":
		return "pause"
	case f.Partition != nil:
		return "partition"
	case f.Delay != nil:
		return "delay"
	case f.Loss != nil:
		return "loss"
	case f.Corrupt != nil:
		return "corrupt"
	}
	return ""
}

// LinkFault selects links (from/to, empty = any) and the extra delay or loss probability.
type LinkFault struct {
	From  string   `yaml:"from,omitempty"`
	To    string   `yaml:"to,omitempty"`
	Extra Duration `yaml:"extra,omitempty"`
	P     float64  `yaml:"p,omitempty"`
}

// DefaultYAML is the built-in default experiment: source → A (filter +
// map) → B (keyed tumbling-window sum) → C (map) → sink, with a crash of B
// in the middle of the run.
const DefaultYAML = `name: default
seed: 42
duration: 20s
drain: 3s
source: {rate: 2000, keys: 16, value: {dist: uniform, min: 0, max: 1}}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 1s, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
spares: 2
network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
cpu: {per_op: 2us, per_byte: 2ns, per_event: 1us}
detector: {heartbeat: 50ms, timeout: 200ms}
faults:
  - {at: 10.4s, crash: B}
`

// Default returns the built-in default experiment.
func Default() *Experiment {
	e, err := Parse([]byte(DefaultYAML), "default")
	if err != nil {
		panic("built-in default experiment is invalid: " + err.Error())
	}
	return e
}

// StrategyList returns the strategies the file names (strategy, then strategies).
func (e *Experiment) StrategyList() []StrategyConfig {
	var l []StrategyConfig
	if e.Strategy.Name != "" {
		l = append(l, e.Strategy)
	}
	return append(l, e.Strategies...)
}

// ParamsFor returns the file's parameters for strategy name (nil if none).
func (e *Experiment) ParamsFor(name string) map[string]any {
	for _, s := range e.StrategyList() {
		if s.Name == name {
			return s.Params
		}
	}
	return nil
}

// SourceSpec is the source of stream (0 or 1) as the runtimes generate it.
func (e *Experiment) SourceSpec(stream int) ha.SourceSpec {
	s := e.Source
	return ha.SourceSpec{
		Rate: s.Rate, Keys: s.Keys, Skew: s.Skew, Value: s.Value.Dist,
		Min: s.Value.Min, Max: s.Value.Max, Mean: s.Value.Mean, Std: s.Value.Std,
		Poisson: s.Arrival == "poisson", Duration: e.Duration.D(), Batch: s.Batch.D(),
	}
}

// FragHosts returns the host names of fragment i under a strategy with r replicas.
func (e *Experiment) FragHosts(i, replicas int) []string {
	name := e.Nodes[i].Name
	hs := []string{name}
	for k := 1; k < replicas+*e.Spares; k++ {
		hs = append(hs, name+"."+strconv.Itoa(k))
	}
	return hs
}

// Topology builds the deployment for a strategy.
func (e *Experiment) Topology(st ha.Strategy) *ha.Topology {
	t := &ha.Topology{Sources: []string{"src"}, Sink: "sink"}
	if e.Source.Streams == 2 {
		t.Sources = append(t.Sources, "src2")
	}
	for i, n := range e.Nodes {
		specs := n.Ops
		inputs := 1
		if i == 0 {
			inputs = e.Source.Streams
		}
		t.Frags = append(t.Frags, ha.Fragment{
			Name: n.Name, Hosts: e.FragHosts(i, max(1, st.Replicas())), Inputs: inputs,
			NewOps: func() ([]ha.Operator, error) {
				out := make([]ha.Operator, 0, len(specs))
				for _, spec := range specs {
					for opName, params := range spec {
						op, err := ops.New(opName, params)
						if err != nil {
							return nil, err
						}
						out = append(out, op)
					}
				}
				return out, nil
			},
		})
	}
	return t
}

// QueryClass is the weakest class of the query's operators.
func (e *Experiment) QueryClass() ha.Class {
	c := ha.Repeatable
	for _, n := range e.Nodes {
		for _, spec := range n.Ops {
			for opName, params := range spec {
				if op, err := ops.New(opName, params); err == nil {
					c = ha.Weakest(c, op.Class())
				}
			}
		}
	}
	return c
}

// NoFencing reports whether the experiment turns fencing off.
func (e *Experiment) NoFencing() bool { return e.Fencing != nil && !*e.Fencing }

// End is when the run stops (duration + drain).
func (e *Experiment) End() time.Duration { return e.Duration.D() + e.Drain.D() }
