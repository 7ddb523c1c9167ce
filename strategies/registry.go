package strategies

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
)

// Param documents one strategy parameter.
type Param struct {
	// Name is the YAML key.
	Name string
	// Type is "duration", "int", "float", "bool" or "string" (or a choice
	// list such as "full|incremental").
	Type string
	// Default is the default value as written in YAML.
	Default string
	// Doc is one sentence saying what it does, with its unit.
	Doc string
}

// Info describes a registered strategy.
type Info struct {
	Name string
	// Doc is a one-paragraph description.
	Doc string
	// Params are the accepted parameters.
	Params []Param
	// New builds the strategy from its parameters (already checked against
	// Params and filled with defaults).
	New func(p Params) (ha.Strategy, error)
	// Hidden strategies are left out of "all".
	Hidden bool
	// Lab marks a student's strategy of a teaching lab (lab 5's
	// my-strategy): it runs when named, for the lab's commands, but is
	// never listed, neither by Names nor among the known strategies of an
	// unknown-strategy error.
	Lab bool

	// The capabilities below are what the rest of streamha knows about a
	// strategy; each is optional (docs/strategies.md, "Adding a strategy").

	// Promise is the recovery it promises (soak, chaos check, conformance).
	Promise Promise
	// Soak draws its parameters for a soak case; nil leaves it out of the
	// soak's default strategies (it still runs when named, with defaults).
	Soak SoakDraw
	// Model is its analytic model of recovery time and overhead (reports).
	Model Model
	// Color fixes its colour in every figure, whichever strategies a run
	// compares: an index into the figures' palette, plus one. 0 leaves the
	// choice to reports: a stable one among the colours after the fixed ones.
	Color int
	// Timeline reads its own history out of a run's trace (checkpoints,
	// queues) for the run report's timeline figure; nil draws none.
	Timeline TimelineFunc
}

var registry = map[string]Info{}

// ErrUnknown is returned (wrapped) for an unknown strategy name.
var ErrUnknown = errors.New("unknown strategy")

// MaxNameLen bounds a strategy name, in bytes.
const MaxNameLen = 64

// ValidName reports whether name is in the strategy-name alphabet:
// lower-case ASCII letters, digits, '-' and '_', starting with a letter or
// digit, at most MaxNameLen bytes. Strategy names become file names
// (trace-<name>.jsonl), so readers of saved results check them too.
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameLen || name[0] == '-' || name[0] == '_' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Registered lists every registered strategy, hidden and lab ones
// included: the names of Names(true), then the lab strategies, sorted.
func Registered() []string {
	out := Names(true)
	var labs []string
	for n, i := range registry {
		if i.Lab {
			labs = append(labs, n)
		}
	}
	sort.Strings(labs)
	return append(out, labs...)
}

// Soaked lists the strategies the soak exercises by default: those with a
// Soak draw, in Names order (lab strategies only when named).
func Soaked() []string {
	var out []string
	for _, n := range Names(true) {
		if registry[n].Soak != nil {
			out = append(out, n)
		}
	}
	return out
}

// Register adds a strategy. It panics on a duplicate name or one outside
// the strategy-name alphabet (programming errors caught at init).
func Register(i Info) {
	if !ValidName(i.Name) {
		panic("strategies: invalid strategy name " + strconv.Quote(i.Name))
	}
	if _, dup := registry[i.Name]; dup {
		panic("strategies: duplicate registration of " + i.Name)
	}
	registry[i.Name] = i
}

// Lookup returns a registered strategy.
func Lookup(name string) (Info, error) {
	i, ok := registry[name]
	if !ok {
		return Info{}, fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(Names(true), ", "))
	}
	return i, nil
}

// Names lists registered strategies in a stable order: the baselines
// first, then the rest alphabetically. Hidden ones only when all is true;
// lab strategies never.
func Names(all bool) []string {
	var ns []string
	for n, i := range registry {
		if !i.Lab && (all || !i.Hidden) {
			ns = append(ns, n)
		}
	}
	rank := func(n string) int {
		switch n {
		case "none":
			return 0
		case "amnesia":
			return 1
		}
		return 2
	}
	sort.Slice(ns, func(a, b int) bool {
		if rank(ns[a]) != rank(ns[b]) {
			return rank(ns[a]) < rank(ns[b])
		}
		return ns[a] < ns[b]
	})
	return ns
}

// Build looks a strategy up, checks raw parameters against its Params
// (unknown names and bad values are errors naming the parameter) and
// constructs it.
func Build(name string, raw map[string]any) (ha.Strategy, error) {
	info, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	p, err := info.Parse(raw)
	if err != nil {
		return nil, err
	}
	s, err := info.New(p)
	if err != nil {
		return nil, fmt.Errorf("strategy %s: %w", name, err)
	}
	return s, nil
}

// Parse checks raw values against the strategy's parameters and fills defaults.
func (i Info) Parse(raw map[string]any) (Params, error) {
	p := Params{values: map[string]string{}}
	for _, d := range i.Params {
		p.values[d.Name] = d.Default
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		idx := slices.IndexFunc(i.Params, func(d Param) bool { return d.Name == k })
		if idx < 0 {
			var known []string
			for _, d := range i.Params {
				known = append(known, d.Name)
			}
			if len(known) == 0 {
				return p, fmt.Errorf("strategy.%s: unknown parameter (%s takes none)", k, i.Name)
			}
			return p, fmt.Errorf("strategy.%s: unknown parameter for %s (known: %s)", k, i.Name, strings.Join(known, ", "))
		}
		switch raw[k].(type) {
		case map[string]any, map[any]any, []any:
			return p, fmt.Errorf("strategy.%s: want a single value, not a list or a mapping", k)
		}
		v := fmt.Sprint(raw[k])
		if len(v) > maxParamLen {
			return p, fmt.Errorf("strategy.%s: value of %d bytes, at most %d allowed", k, len(v), maxParamLen)
		}
		if err := checkType(i.Params[idx].Type, v); err != nil {
			return p, fmt.Errorf("strategy.%s: %w", k, err)
		}
		p.values[k] = v
	}
	return p, nil
}

// Ranges of parameter values, whatever the strategy (docs/experiment.md).
const (
	maxParamLen      = 256
	maxParamDuration = 1000 * time.Hour
	maxParamInt      = 1 << 31
	maxParamFloat    = 1e15
)

func checkType(typ, v string) error {
	switch typ {
	case "duration":
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("want a duration such as 200ms, got %q", v)
		}
		if d < 0 {
			return fmt.Errorf("must not be negative, got %s", v)
		}
		if d > maxParamDuration {
			return fmt.Errorf("want at most %s, got %s", maxParamDuration, v)
		}
	case "int":
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("want an integer, got %q", v)
		}
		if n < 0 {
			return fmt.Errorf("must not be negative, got %d", n)
		}
		if n > maxParamInt {
			return fmt.Errorf("want at most %d, got %d", maxParamInt, n)
		}
	case "float":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("want a number, got %q", v)
		}
		if !(f >= 0 && f <= maxParamFloat) {
			return fmt.Errorf("want a finite number from 0 to %g, got %g", maxParamFloat, f)
		}
	case "bool":
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
	case "string", "":
	default:
		if strings.Contains(typ, "|") {
			if !slices.Contains(strings.Split(typ, "|"), v) {
				return fmt.Errorf("want one of %s, got %q", strings.ReplaceAll(typ, "|", ", "), v)
			}
		}
	}
	return nil
}

// Params are a strategy's checked parameter values.
type Params struct {
	values map[string]string
}

// String returns a parameter as text.
func (p Params) String(name string) string { return p.values[name] }

// Duration returns a duration parameter.
func (p Params) Duration(name string) time.Duration {
	d, _ := time.ParseDuration(p.values[name])
	return d
}

// Int returns an integer parameter.
func (p Params) Int(name string) int {
	n, _ := strconv.Atoi(p.values[name])
	return n
}

// Float returns a numeric parameter.
func (p Params) Float(name string) float64 {
	f, _ := strconv.ParseFloat(p.values[name], 64)
	return f
}

// Bool returns a boolean parameter.
func (p Params) Bool(name string) bool {
	b, _ := strconv.ParseBool(p.values[name])
	return b
}

// Values returns all values (defaults filled in), for reports.
func (p Params) Values() map[string]string {
	m := make(map[string]string, len(p.values))
	for k, v := range p.values {
		m[k] = v
	}
	return m
}
