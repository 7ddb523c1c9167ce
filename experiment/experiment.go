package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/ops"
)

// ErrConfig marks an invalid experiment (the CLI exits with status 2).
var ErrConfig = errors.New("invalid experiment")

// Duration is a YAML duration written with a unit ("200ms", "1s").
type Duration time.Duration

// UnmarshalYAML parses a duration string and rejects negative values.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if n.Kind != yaml.ScalarNode || n.Decode(&s) != nil {
		return &valueError{n.Line, n.Column, "want a duration such as 200ms"}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &valueError{n.Line, n.Column, fmt.Sprintf("want a duration such as 200ms, got %.80q", s)}
	}
	if v < 0 {
		return &valueError{n.Line, n.Column, fmt.Sprintf("must not be negative, got %s", s)}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// D converts to time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Bandwidth is a YAML bit rate ("1Gbps", "100Mbps", "0" = unlimited).
type Bandwidth float64

// UnmarshalYAML parses a bit rate.
func (b *Bandwidth) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if n.Kind != yaml.ScalarNode || n.Decode(&s) != nil {
		return &valueError{n.Line, n.Column, "want a bit rate such as 1Gbps"}
	}
	v, err := ParseBandwidth(s)
	if err != nil {
		return &valueError{n.Line, n.Column, err.Error()}
	}
	*b = Bandwidth(v)
	return nil
}

// MarshalYAML writes the rate in bits per second with a unit.
func (b Bandwidth) MarshalYAML() (any, error) {
	return strconv.FormatFloat(float64(b), 'g', -1, 64) + "bps", nil
}

// ParseBandwidth parses "1Gbps", "250Mbps", "10kbps", "800bps" or "0".
func ParseBandwidth(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "0" || t == "" || t == "unlimited" {
		return 0, nil
	}
	mult := 1.0
	for _, u := range []struct {
		suf string
		m   float64
	}{{"Gbps", 1e9}, {"Mbps", 1e6}, {"kbps", 1e3}, {"Kbps", 1e3}, {"bps", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSuffix(t, u.suf), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("want a bit rate such as 1Gbps, got %q", s)
	}
	return v * mult, nil
}

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

// ReadFile reads an experiment (or sweep) file of at most the size the
// options allow; a larger one, or one that never ends, is an error
// after one byte more than the bound is read.
func ReadFile(path string, o ParseOptions) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	defer f.Close()
	max := o.limits().MaxFileSize
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, path, err)
	}
	if len(b) > max {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes%s", ErrConfig, path, max, largeHint(o))
	}
	return b, nil
}

// Load reads and validates an experiment file.
func Load(path string) (*Experiment, error) { return LoadWith(path, ParseOptions{}) }

// LoadWith is Load with options.
func LoadWith(path string, o ParseOptions) (*Experiment, error) {
	b, err := ReadFile(path, o)
	if err != nil {
		return nil, err
	}
	return ParseWith(b, path, o)
}

// Parse decodes and validates an experiment; name is used in errors.
// Missing fields take the defaults of the built-in experiment's models;
// unknown fields are errors.
func Parse(b []byte, name string) (*Experiment, error) { return ParseWith(b, name, ParseOptions{}) }

// ParseWith is Parse with options. Errors name the file, the line and
// the field: "FILE:LINE: FIELD: problem".
func ParseWith(b []byte, name string, o ParseOptions) (*Experiment, error) {
	if max := o.limits().MaxFileSize; len(b) > max {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes%s", ErrConfig, name, max, largeHint(o))
	}
	var root yaml.Node
	docs := yaml.NewDecoder(bytes.NewReader(b))
	if err := docs.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s: empty file", ErrConfig, name)
		}
		return nil, fmt.Errorf("%w: %w", ErrConfig, explainYAMLError(name, err, b, !o.NoLines))
	}
	var second yaml.Node
	if err := docs.Decode(&second); err == nil {
		return nil, fmt.Errorf("%w: %s:%d: a second YAML document: an experiment file holds one", ErrConfig, name, second.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s: after the first document: %w", ErrConfig, name, err)
	}
	fl := indexLines(&root)
	fl.hide = o.NoLines
	e := &Experiment{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(e); err != nil {
		if ve := (*valueError)(nil); errors.As(err, &ve) {
			return nil, fl.decodeError(name, err)
		}
		// Unknown fields and wrong types: the YAML's own words, never a
		// Go type name.
		return nil, fmt.Errorf("%w: %w", ErrConfig, explainYAMLError(name, err, b, !o.NoLines))
	}
	e.opts = o
	e.fillDefaults()
	if err := e.Validate(); err != nil {
		return nil, fl.located(name, err)
	}
	return e, nil
}

// decodeError names the field of a decoding error.
func (fl fieldLines) decodeError(name string, err error) error {
	var ve *valueError
	if errors.As(err, &ve) {
		p, ok := fl.at[[2]int{ve.line, ve.col}]
		switch {
		case ok && fl.hide:
			return fmt.Errorf("%w: %s: %s: %s", ErrConfig, name, p, ve.msg)
		case ok:
			return fmt.Errorf("%w: %s:%d: %s: %s", ErrConfig, name, ve.line, p, ve.msg)
		}
		return fmt.Errorf("%w: %s:%d: %s", ErrConfig, name, ve.line, ve.msg)
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, 0, len(te.Errors))
		for _, m := range te.Errors {
			msgs = append(msgs, fl.nameLine(m))
		}
		return fmt.Errorf("%w: %s: %s", ErrConfig, name, strings.Join(msgs, "; "))
	}
	return fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
}

// nameLine adds the field to one of yaml's "line N: problem" messages:
// the field on that line whose value the message quotes, else the first.
func (fl fieldLines) nameLine(m string) string {
	var line int
	if _, err := fmt.Sscanf(m, "line %d:", &line); err != nil {
		return m
	}
	var paths []string
	for pos, p := range fl.at {
		if pos[0] == line {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return m
	}
	slices.Sort(paths)
	pick := paths[0]
	for _, p := range paths {
		if strings.Contains(m, "field "+p[strings.LastIndexAny(p, ".]")+1:]+" ") {
			pick = p
		}
	}
	if i := strings.Index(m, "`"); i >= 0 {
		if j := strings.Index(m[i+1:], "`"); j >= 0 {
			quoted := m[i+1 : i+1+j]
			for pos, p := range fl.at {
				if pos[0] == line && fl.valueAt(pos) == quoted {
					pick = p
				}
			}
		}
	}
	return fmt.Sprintf("%s (field %s)", m, pick)
}

func (e *Experiment) fillDefaults() {
	if e.Name == "" {
		e.Name = DefaultName
	}
	if e.Spares == nil {
		spares := DefaultSpares
		e.Spares = &spares
	}
	if e.Duration == 0 {
		e.Duration = Duration(DefaultDuration)
	}
	if e.Drain == 0 {
		e.Drain = Duration(DefaultDrain)
	}
	s := &e.Source
	if s.Value.Dist == "" {
		s.Value.Dist = DefaultValueDist
		if s.Value.Max == 0 && s.Value.Min == 0 {
			s.Value.Max = DefaultValueMax
		}
	}
	if s.Arrival == "" {
		s.Arrival = DefaultArrival
	}
	if s.Batch == 0 {
		s.Batch = Duration(DefaultBatch)
	}
	if s.Streams == 0 {
		s.Streams = DefaultStreams
	}
	if e.CPU == (CPUConfig{}) {
		e.CPU = CPUConfig{PerOp: Duration(DefaultPerOp), PerByte: Duration(DefaultPerByte), PerEvent: Duration(DefaultPerEvent)}
	}
	d := &e.Detector
	if d.Heartbeat == 0 {
		d.Heartbeat = Duration(DefaultHeartbeat)
	}
	if d.Timeout == 0 {
		d.Timeout = Duration(DefaultTimeout)
	}
	if d.Model == "" {
		d.Model = DefaultModel
	}
	if d.SuspicionMult == 0 {
		d.SuspicionMult = DefaultSuspicionMult
	}
}

// Validate checks the experiment: every field against its range (see
// Limits; the options it was parsed with choose which), then the
// structure. Errors start with the field's path.
func (e *Experiment) Validate() error {
	if err := e.validateRanges(e.opts.limits()); err != nil {
		return err
	}
	if err := e.SourceSpec(0).Validate(); err != nil {
		return err
	}
	switch e.Source.Arrival {
	case "constant", "poisson":
	default:
		return fmt.Errorf("source.arrival: want constant or poisson, got %q", e.Source.Arrival)
	}
	if e.Source.Streams < 1 || e.Source.Streams > 2 {
		return fmt.Errorf("source.streams: want 1 or 2, got %d", e.Source.Streams)
	}
	if len(e.Nodes) == 0 {
		return fmt.Errorf("nodes: at least one node is needed")
	}
	if *e.Spares < 0 {
		return fmt.Errorf("spares: must not be negative, got %d", *e.Spares)
	}
	seen := map[string]bool{}
	for i, n := range e.Nodes {
		switch {
		case n.Name == "":
			return fmt.Errorf("nodes[%d].name: missing", i)
		case strings.ContainsAny(n.Name, ". \t/"):
			return fmt.Errorf("nodes[%d].name: %q must not contain '.', '/' or spaces", i, n.Name)
		case n.Name == "src" || n.Name == "src2" || n.Name == "sink":
			return fmt.Errorf("nodes[%d].name: %q is reserved", i, n.Name)
		case seen[n.Name]:
			return fmt.Errorf("nodes[%d].name: %q defined twice", i, n.Name)
		}
		seen[n.Name] = true
		if len(n.Ops) == 0 {
			return fmt.Errorf("nodes[%d].ops: node %s has no operators", i, n.Name)
		}
		for j, spec := range n.Ops {
			if len(spec) != 1 {
				return fmt.Errorf("nodes[%d].ops[%d]: want exactly one operator per entry, such as {map: {scale: 2}}", i, j)
			}
			for opName, params := range spec {
				if (opName == "union" || opName == "join") && (i != 0 || j != 0 || e.Source.Streams != 2) {
					return fmt.Errorf("nodes[%d].ops[%d]: %s needs two input streams: make it the first operator of the first node and set source.streams: 2", i, j, opName)
				}
				if _, err := ops.New(opName, params); err != nil {
					return fmt.Errorf("nodes[%d].ops[%d]: %w", i, j, err)
				}
			}
		}
	}
	switch e.Detector.Model {
	case "timeout", "memberlist":
	default:
		return fmt.Errorf("detector.model: want timeout or memberlist, got %q", e.Detector.Model)
	}
	if e.Detector.SuspicionMult < 0 {
		return fmt.Errorf("detector.suspicion_mult: must not be negative, got %d", e.Detector.SuspicionMult)
	}
	for i, f := range e.Faults {
		if err := e.validateFault(i, f); err != nil {
			return err
		}
	}
	return nil
}

func (e *Experiment) validateFault(i int, f FaultConfig) error {
	kinds := 0
	for _, set := range []bool{f.Crash != "", f.Pause != "", f.Partition != nil, f.Delay != nil, f.Loss != nil, f.Corrupt != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf("faults[%d]: want exactly one of crash, pause, partition, delay, loss, corrupt", i)
	}
	if f.At.D() > e.End() {
		return fmt.Errorf("faults[%d].at: %s is after the end of the run (%s)", i, f.At.D(), e.End())
	}
	check := func(field, host string, allowEnds bool) error {
		if host == "" {
			return nil
		}
		if e.knownHost(host) {
			return nil
		}
		if allowEnds && (host == "src" || host == "src2" || host == "sink") {
			return nil
		}
		if host == "src" || host == "src2" || host == "sink" {
			return fmt.Errorf("faults[%d].%s: %s cannot fail (sources and the sink are outside the protected query)", i, field, host)
		}
		return fmt.Errorf("faults[%d].%s: unknown node %q (nodes: %s)", i, field, host, strings.Join(e.nodeNames(), ", "))
	}
	if err := check("crash", f.Crash, false); err != nil {
		return err
	}
	if err := check("pause", f.Pause, false); err != nil {
		return err
	}
	if f.Pause != "" || f.Partition != nil || f.Delay != nil || f.Loss != nil || f.Corrupt != nil {
		if f.For <= 0 {
			return fmt.Errorf("faults[%d].for: a pause, partition, delay, loss or corrupt needs a positive duration", i)
		}
	}
	for gi, g := range f.Partition {
		for _, h := range g {
			if err := check(fmt.Sprintf("partition[%d]", gi), h, true); err != nil {
				return err
			}
		}
	}
	if f.Partition != nil && len(f.Partition) < 2 {
		return fmt.Errorf("faults[%d].partition: want at least two groups, such as [[A], [B]]", i)
	}
	for _, lf := range []*LinkFault{f.Delay, f.Loss, f.Corrupt} {
		if lf == nil {
			continue
		}
		if err := check("from", lf.From, true); err != nil {
			return err
		}
		if err := check("to", lf.To, true); err != nil {
			return err
		}
	}
	if f.Loss != nil && !(f.Loss.P > 0 && f.Loss.P <= 1) {
		return fmt.Errorf("faults[%d].loss.p: want a probability in (0, 1], got %g", i, f.Loss.P)
	}
	if f.Corrupt != nil && !(f.Corrupt.P > 0 && f.Corrupt.P <= 1) {
		return fmt.Errorf("faults[%d].corrupt.p: want a probability in (0, 1], got %g", i, f.Corrupt.P)
	}
	if f.Delay != nil && f.Delay.Extra <= 0 {
		return fmt.Errorf("faults[%d].delay.extra: must be positive", i)
	}
	return nil
}

// knownHost accepts a node name or a replica/spare name "B.1", "B.2", ...
func (e *Experiment) knownHost(h string) bool {
	base, suffix, hasDot := strings.Cut(h, ".")
	for _, n := range e.Nodes {
		if n.Name == base {
			if !hasDot {
				return true
			}
			k, err := strconv.Atoi(suffix)
			return err == nil && k >= 1
		}
	}
	return false
}

func (e *Experiment) nodeNames() []string {
	var ns []string
	for _, n := range e.Nodes {
		ns = append(ns, n.Name)
	}
	return ns
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

// Schedule resolves the fault schedule against topo, the deployment of
// strategy: every host a fault names must exist in it.
func (e *Experiment) Schedule(topo *ha.Topology, strategy string) ([]Fault, error) {
	var out []Fault
	hosts := topo.Hosts()
	for i, f := range e.Faults {
		sf := Fault{At: f.At.D(), For: f.For.D()}
		switch {
		case f.Crash != "":
			sf.Kind, sf.Host = FaultCrash, f.Crash
		case f.Pause != "":
			sf.Kind, sf.Host = FaultPause, f.Pause
		case f.Partition != nil:
			sf.Kind, sf.Groups = FaultPartition, f.Partition
		case f.Delay != nil:
			sf.Kind, sf.From, sf.To, sf.Delay = FaultDelay, f.Delay.From, f.Delay.To, f.Delay.Extra.D()
		case f.Loss != nil:
			sf.Kind, sf.From, sf.To, sf.Loss = FaultLoss, f.Loss.From, f.Loss.To, f.Loss.P
		case f.Corrupt != nil:
			sf.Kind, sf.From, sf.To, sf.Loss = FaultCorrupt, f.Corrupt.From, f.Corrupt.To, f.Corrupt.P
		}
		for _, h := range append([]string{sf.Host, sf.From, sf.To}, slices.Concat(sf.Groups...)...) {
			if h != "" && !slices.Contains(hosts, h) {
				return nil, fmt.Errorf("%w: faults[%d]: node %q does not exist under strategy %s (it has %d hosts per node: raise spares)",
					ErrConfig, i, h, strategy, len(topo.Frags[0].Hosts))
			}
		}
		out = append(out, sf)
	}
	return out, nil
}

// NoFencing reports whether the experiment turns fencing off.
func (e *Experiment) NoFencing() bool { return e.Fencing != nil && !*e.Fencing }

// FaultDescriptions describes the fault schedule in words.
func (e *Experiment) FaultDescriptions() []string {
	out := []string{}
	for _, f := range e.Faults {
		at := f.At.D().String()
		switch {
		case f.Crash != "":
			out = append(out, fmt.Sprintf("crash %s at %s", f.Crash, at))
		case f.Pause != "":
			out = append(out, fmt.Sprintf("pause %s at %s for %s", f.Pause, at, f.For.D()))
		case f.Partition != nil:
			var gs []string
			for _, g := range f.Partition {
				gs = append(gs, "["+strings.Join(g, " ")+"]")
			}
			out = append(out, fmt.Sprintf("partition %s at %s for %s", strings.Join(gs, " | "), at, f.For.D()))
		case f.Delay != nil:
			out = append(out, fmt.Sprintf("delay %s→%s +%s at %s for %s", any1(f.Delay.From), any1(f.Delay.To), f.Delay.Extra.D(), at, f.For.D()))
		case f.Loss != nil:
			out = append(out, fmt.Sprintf("loss %s→%s p=%g at %s for %s", any1(f.Loss.From), any1(f.Loss.To), f.Loss.P, at, f.For.D()))
		case f.Corrupt != nil:
			out = append(out, fmt.Sprintf("corrupt %s→%s p=%g at %s for %s", any1(f.Corrupt.From), any1(f.Corrupt.To), f.Corrupt.P, at, f.For.D()))
		}
	}
	return out
}

func any1(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

// End is when the run stops (duration + drain).
func (e *Experiment) End() time.Duration { return e.Duration.D() + e.Drain.D() }
