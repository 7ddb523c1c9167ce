package experiment

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/strategies"
)

// Limits are the ranges an experiment's fields must lie in, so that a
// file cannot make a run that never ends or exhausts memory. Every range
// is documented in docs/experiment.md ("Ranges"); --allow-large
// (ParseOptions.AllowLarge) swaps the normal ranges for LargeLimits.
type Limits struct {
	MaxFileSize     int           // the experiment file, in bytes
	MaxDuration     time.Duration // duration
	MaxDrain        time.Duration // drain
	MaxRate         float64       // source.rate, tuples per second per stream
	MaxSourceTuples float64       // source.rate × duration
	MaxKeys         int           // source.keys
	MinBatch        time.Duration // source.batch
	MaxNodes        int           // nodes (fragments)
	MaxOps          int           // operators per node
	MaxSpares       int           // spares
	MaxFaults       int           // faults
}

// NormalLimits hold unless --allow-large is given.
var NormalLimits = Limits{
	MaxFileSize: 1 << 20,
	MaxDuration: time.Hour, MaxDrain: 10 * time.Minute,
	MaxRate: 1e5, MaxSourceTuples: 5e7, MaxKeys: 1e6, MinBatch: 100 * time.Microsecond,
	MaxNodes: 32, MaxOps: 32, MaxSpares: 8, MaxFaults: 100,
}

// LargeLimits hold with --allow-large: real big runs, still finite.
var LargeLimits = Limits{
	MaxFileSize: 64 << 20,
	MaxDuration: 1000 * time.Hour, MaxDrain: 1000 * time.Hour,
	MaxRate: 1e8, MaxSourceTuples: 1e12, MaxKeys: 1e9, MinBatch: time.Microsecond,
	MaxNodes: 1000, MaxOps: 1000, MaxSpares: 100, MaxFaults: 100000,
}

// Ranges that --allow-large does not change.
const (
	// MaxNameLen bounds the experiment's name and a node's name, in bytes.
	MaxNameLen = 64
	// MaxStrategies bounds the strategies an experiment lists.
	MaxStrategies = 16
	// MaxValue bounds the magnitude of the value distribution's parameters.
	MaxValue = 1e15
	// MaxSkew bounds source.skew (the Zipf exponent minus one).
	MaxSkew = 100
	// MaxDelay bounds network.latency, network.jitter and a delay fault's extra.
	MaxDelay = time.Minute
	// MaxCPUCost bounds each of cpu.per_op, cpu.per_byte and cpu.per_event.
	MaxCPUCost = time.Second
	// MinBandwidth is the lowest non-zero network.bandwidth, in bits per second.
	MinBandwidth = 1e3
	// MinHeartbeat and MaxDetectorTime bound detector.heartbeat and detector.timeout.
	MinHeartbeat    = time.Millisecond
	MaxDetectorTime = 10 * time.Minute
	// MaxSuspicionMult bounds detector.suspicion_mult.
	MaxSuspicionMult = 100
)

// nameRE is the alphabet of experiment and node names: they become file
// and host names.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// ParseOptions change how an experiment is checked.
type ParseOptions struct {
	// AllowLarge checks against LargeLimits instead of NormalLimits.
	AllowLarge bool
	// NoLines leaves line numbers out of errors: the text was generated (a
	// sweep point), so its lines would mean nothing to the user.
	NoLines bool
}

func (o ParseOptions) limits() Limits {
	if o.AllowLarge {
		return LargeLimits
	}
	return NormalLimits
}

func largeHint(o ParseOptions) string {
	if o.AllowLarge {
		return ""
	}
	return " (--allow-large raises it)"
}

// finite reports whether every x is a finite number.
func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// checkName checks an experiment or node name.
func checkName(field, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s: missing", field)
	case len(s) > MaxNameLen:
		return fmt.Errorf("%s: %d bytes, at most %d allowed", field, len(s), MaxNameLen)
	case !utf8.ValidString(s) || !nameRE.MatchString(s):
		return fmt.Errorf("%s: %q: want letters, digits, '-' and '_' only, starting with a letter or digit", field, s)
	}
	return nil
}

// validateRanges checks every field against its documented range; the
// structural checks are in Validate.
func (e *Experiment) validateRanges(l Limits) error {
	large := ""
	if l != LargeLimits {
		large = " (--allow-large raises it)"
	}
	if err := checkName("name", e.Name); err != nil {
		return err
	}
	if d := e.Duration.D(); d <= 0 || d > l.MaxDuration {
		return fmt.Errorf("duration: want more than 0 and at most %s%s, got %s", l.MaxDuration, large, d)
	}
	if d := e.Drain.D(); d < 0 || d > l.MaxDrain {
		return fmt.Errorf("drain: want at most %s%s, got %s", l.MaxDrain, large, d)
	}
	s := e.Source
	switch {
	case !finite(s.Rate) || s.Rate <= 0 || s.Rate > l.MaxRate:
		return fmt.Errorf("source.rate: want more than 0 and at most %g tuples/s%s, got %g", l.MaxRate, large, s.Rate)
	case s.Rate*e.Duration.D().Seconds() > l.MaxSourceTuples:
		return fmt.Errorf("source.rate: %g tuples/s for %s is %.3g tuples per stream, at most %g allowed%s",
			s.Rate, e.Duration.D(), s.Rate*e.Duration.D().Seconds(), l.MaxSourceTuples, large)
	case s.Keys < 1 || s.Keys > l.MaxKeys:
		return fmt.Errorf("source.keys: want 1 to %d%s, got %d", l.MaxKeys, large, s.Keys)
	case !finite(s.Skew) || s.Skew < 0 || s.Skew > MaxSkew:
		return fmt.Errorf("source.skew: want a number from 0 to %d, got %g", MaxSkew, s.Skew)
	case s.Batch.D() < l.MinBatch || s.Batch.D() > e.Duration.D():
		return fmt.Errorf("source.batch: want %s to the run's duration%s, got %s", l.MinBatch, large, s.Batch.D())
	}
	for _, v := range []struct {
		field string
		x     float64
	}{{"min", s.Value.Min}, {"max", s.Value.Max}, {"mean", s.Value.Mean}, {"std", s.Value.Std}} {
		if !finite(v.x) || math.Abs(v.x) > MaxValue {
			return fmt.Errorf("source.value.%s: want a finite number of magnitude at most %g, got %g", v.field, MaxValue, v.x)
		}
	}
	if len(e.Nodes) > l.MaxNodes {
		return fmt.Errorf("nodes: %d nodes, at most %d allowed%s", len(e.Nodes), l.MaxNodes, large)
	}
	for i, n := range e.Nodes {
		if err := checkName(fmt.Sprintf("nodes[%d].name", i), n.Name); err != nil {
			return err
		}
		if len(n.Ops) > l.MaxOps {
			return fmt.Errorf("nodes[%d].ops: %d operators, at most %d allowed%s", i, len(n.Ops), l.MaxOps, large)
		}
	}
	if e.Spares != nil && (*e.Spares < 0 || *e.Spares > l.MaxSpares) {
		return fmt.Errorf("spares: want 0 to %d%s, got %d", l.MaxSpares, large, *e.Spares)
	}
	if n := len(e.StrategyList()); n > MaxStrategies {
		return fmt.Errorf("strategies: %d strategies, at most %d allowed", n, MaxStrategies)
	}
	nw := e.Network
	switch {
	case nw.Latency.D() > MaxDelay:
		return fmt.Errorf("network.latency: want at most %s, got %s", MaxDelay, nw.Latency.D())
	case nw.Jitter.D() > MaxDelay:
		return fmt.Errorf("network.jitter: want at most %s, got %s", MaxDelay, nw.Jitter.D())
	case !finite(float64(nw.Bandwidth)) || (nw.Bandwidth != 0 && nw.Bandwidth < MinBandwidth):
		return fmt.Errorf("network.bandwidth: want 0 (unlimited) or at least %gbps, got %gbps", float64(MinBandwidth), float64(nw.Bandwidth))
	case !(nw.Loss >= 0 && nw.Loss < 1):
		return fmt.Errorf("network.loss: want a probability in [0, 1), got %g", nw.Loss)
	}
	for _, c := range []struct {
		field string
		d     Duration
	}{{"per_op", e.CPU.PerOp}, {"per_byte", e.CPU.PerByte}, {"per_event", e.CPU.PerEvent}} {
		if c.d.D() > MaxCPUCost {
			return fmt.Errorf("cpu.%s: want at most %s, got %s", c.field, MaxCPUCost, c.d.D())
		}
	}
	d := e.Detector
	switch {
	case d.Heartbeat.D() < MinHeartbeat || d.Heartbeat.D() > MaxDetectorTime:
		return fmt.Errorf("detector.heartbeat: want %s to %s, got %s", MinHeartbeat, MaxDetectorTime, d.Heartbeat.D())
	case d.Timeout.D() < MinHeartbeat || d.Timeout.D() > MaxDetectorTime:
		return fmt.Errorf("detector.timeout: want %s to %s, got %s", MinHeartbeat, MaxDetectorTime, d.Timeout.D())
	case d.SuspicionMult < 0 || d.SuspicionMult > MaxSuspicionMult:
		return fmt.Errorf("detector.suspicion_mult: want 0 to %d, got %d", MaxSuspicionMult, d.SuspicionMult)
	}
	if len(e.Faults) > l.MaxFaults {
		return fmt.Errorf("faults: %d faults, at most %d allowed%s", len(e.Faults), l.MaxFaults, large)
	}
	for i, f := range e.Faults {
		if f.For.D() > l.MaxDuration+l.MaxDrain {
			return fmt.Errorf("faults[%d].for: want at most %s%s, got %s", i, l.MaxDuration+l.MaxDrain, large, f.For.D())
		}
		for _, lf := range []struct {
			kind string
			f    *LinkFault
		}{{"delay", f.Delay}, {"loss", f.Loss}, {"corrupt", f.Corrupt}} {
			if lf.f == nil {
				continue
			}
			if !finite(lf.f.P) {
				return fmt.Errorf("faults[%d].%s.p: want a probability, got %g", i, lf.kind, lf.f.P)
			}
			if lf.f.Extra.D() > MaxDelay {
				return fmt.Errorf("faults[%d].%s.extra: want at most %s, got %s", i, lf.kind, MaxDelay, lf.f.Extra.D())
			}
		}
	}
	for _, sc := range e.StrategyList() {
		info, err := strategies.Lookup(sc.Name)
		if err != nil {
			return fmt.Errorf("strategy.name: %w", err)
		}
		p, err := info.Parse(sc.Params)
		if err != nil {
			return err
		}
		// Built once here so that a value only the constructor checks
		// (checkpoint_interval: 1ns) is a configuration error too.
		if _, err := info.New(p); err != nil {
			return fmt.Errorf("strategy.%w", err)
		}
	}
	return nil
}

// fieldLines maps the dotted path of every node of a YAML document
// ("source.rate", "faults[2].loss.p") to the line of its key, and the
// position of every value to its path.
type fieldLines struct {
	line map[string]int
	at   map[[2]int]string // (line, column) of a value → path
	val  map[[2]int]string // (line, column) of a scalar → its text
	hide bool              // the text is generated: name fields, not lines
}

func (fl fieldLines) valueAt(pos [2]int) string { return fl.val[pos] }

func indexLines(root *yaml.Node) fieldLines {
	fl := fieldLines{line: map[string]int{}, at: map[[2]int]string{}, val: map[[2]int]string{}}
	var walk func(n *yaml.Node, path string, line int)
	walk = func(n *yaml.Node, path string, line int) {
		if path != "" {
			fl.line[path] = line
			fl.at[[2]int{n.Line, n.Column}] = path
			if n.Kind == yaml.ScalarNode {
				fl.val[[2]int{n.Line, n.Column}] = n.Value
			}
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path, c.Line)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				walk(v, p, k.Line)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i), c.Line)
			}
		}
	}
	walk(root, "", 1)
	return fl
}

// lineOf returns the line of path or of its longest prefix in the file
// (a default filled in has no line of its own); 0 when none is found.
func (fl fieldLines) lineOf(path string) int {
	for p := path; p != ""; {
		if l, ok := fl.line[p]; ok {
			return l
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return 0
}

// fieldPathRE matches the field path an error message starts with.
var fieldPathRE = regexp.MustCompile(`^([a-z_]+(\[\d+\])*(\.[a-z_0-9]+(\[\d+\])*)*): `)

// located prefixes a validation error with the line of the field it names.
func (fl fieldLines) located(name string, err error) error {
	if fl.hide {
		return fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
	}
	if m := fieldPathRE.FindStringSubmatch(err.Error()); m != nil {
		if l := fl.lineOf(m[1]); l > 0 {
			return fmt.Errorf("%w: %s:%d: %w", ErrConfig, name, l, err)
		}
	}
	return fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
}

// valueError is an error of a value's own decoder, located at the value.
type valueError struct {
	line, col int
	msg       string
}

func (v *valueError) Error() string { return fmt.Sprintf("line %d: %s", v.line, v.msg) }
