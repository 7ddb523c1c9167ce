package ops

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
)

// Sentinel errors of New, matched with errors.Is.
var (
	// ErrUnknownOperator: the operator name is not in the library.
	ErrUnknownOperator = errors.New("unknown operator")
	// ErrUnknownParameter: the operator has no parameter of that name.
	ErrUnknownParameter = errors.New("unknown parameter")
	// ErrInvalidParameter: a parameter is missing, of the wrong type or out of range.
	ErrInvalidParameter = errors.New("invalid parameter")
)

// ParamError describes an invalid parameter value ("tumbling.size: must be a
// positive duration, got \"-1s\""). It matches ErrInvalidParameter.
type ParamError struct {
	Op, Param, Reason string
}

// Error implements error.
func (e *ParamError) Error() string { return e.Op + "." + e.Param + ": " + e.Reason }

// Is makes errors.Is(err, ErrInvalidParameter) true.
func (e *ParamError) Is(target error) bool { return target == ErrInvalidParameter }

// endOfTime is the watermark of an ended stream: after every window.
const endOfTime = math.MaxInt64 / 4

// LateCounter is implemented by the windowed operators (tumbling, sliding,
// join): Late is the number of tuples dropped because every window they
// belong to had already closed.
type LateCounter interface {
	Late() int
}

// OpDoc documents one operator for help output and generated docs.
type OpDoc struct {
	Name   string
	Class  ha.Class
	Doc    string
	Params []ParamDoc
}

// ParamDoc documents one parameter. Type is "float", "duration" or
// "enum(a|b|...)"; Default is empty when the parameter is required or has no
// default; Doc includes the unit.
type ParamDoc struct {
	Name, Type, Default, Doc string
}

type opSpec struct {
	doc   OpDoc
	build func(p *params) (ha.Operator, error)
}

var aggNames = []string{"count", "sum", "avg", "min", "max"}

var registry = []opSpec{
	{
		doc: OpDoc{Name: "filter", Class: ha.Repeatable,
			Doc: "keeps tuples whose value lies strictly between value_gt and value_lt (at least one is required); passes them unchanged",
			Params: []ParamDoc{
				{Name: "value_gt", Type: "float", Doc: "keep tuples with value > value_gt (no lower bound when unset)"},
				{Name: "value_lt", Type: "float", Doc: "keep tuples with value < value_lt (no upper bound when unset)"},
			}},
		build: buildFilter,
	},
	{
		doc: OpDoc{Name: "map", Class: ha.Repeatable,
			Doc: "value = value*scale + offset; keeps id, lineage, time and emit time",
			Params: []ParamDoc{
				{Name: "scale", Type: "float", Default: "1", Doc: "multiplier applied to the value"},
				{Name: "offset", Type: "float", Default: "0", Doc: "added to the value after scaling"},
			}},
		build: buildMap,
	},
	{
		doc: OpDoc{Name: "tumbling", Class: ha.ConvergentCapable,
			Doc: "per-key aggregate over tumbling event-time windows [k*size, (k+1)*size); emits one tuple per key and window when the watermark (max event time seen) reaches the window end",
			Params: []ParamDoc{
				{Name: "size", Type: "duration", Doc: "window length in event time, e.g. \"1s\" (required)"},
				{Name: "agg", Type: "enum(" + strings.Join(aggNames, "|") + ")", Default: "sum", Doc: "aggregate of the values in a window"},
			}},
		build: func(p *params) (ha.Operator, error) { return buildWindow(p, false) },
	},
	{
		doc: OpDoc{Name: "sliding", Class: ha.ConvergentCapable,
			Doc: "per-key aggregate over sliding event-time windows of length size starting every slide; each tuple belongs to size/slide windows",
			Params: []ParamDoc{
				{Name: "size", Type: "duration", Doc: "window length in event time, a multiple of slide (required)"},
				{Name: "slide", Type: "duration", Doc: "distance between window starts in event time (required; size/slide at most 1000)"},
				{Name: "agg", Type: "enum(" + strings.Join(aggNames, "|") + ")", Default: "sum", Doc: "aggregate of the values in a window"},
			}},
		build: func(p *params) (ha.Operator, error) { return buildWindow(p, true) },
	},
	{
		doc: OpDoc{Name: "running_sum", Class: ha.Deterministic,
			Doc: "per-key running sum since the start of the run; emits the new sum for every input (id key#n)"},
		build: func(*params) (ha.Operator, error) { return newRunningSum(), nil },
	},
	{
		doc: OpDoc{Name: "hash_chain", Class: ha.Deterministic,
			Doc: "per-key hash chain of the values in arrival order, as a tamper-evident log keeps: h_n = SHA-256(h_(n-1) ‖ value as 8 big-endian IEEE-754 bytes), h_0 = 32 zero bytes; emits the first 52 bits of h_n as an exact integer for every input (id key#n). Any change in the order of a key's inputs changes every later output of that key"},
		build: func(*params) (ha.Operator, error) { return newHashChain(), nil },
	},
	{
		doc: OpDoc{Name: "join", Class: ha.Repeatable,
			Doc: "equi-join on key of port 0 (left) and port 1 (right) within tumbling event-time windows; a window closes when both ports' event times have passed its end; value = left + right",
			Params: []ParamDoc{
				{Name: "window", Type: "duration", Doc: "tumbling window length in event time, e.g. \"1s\" (required)"},
			}},
		build: buildJoin,
	},
	{
		doc: OpDoc{Name: "union", Class: ha.Arbitrary,
			Doc: "merges ports 0 and 1 in arrival order (output on port 0); its output depends on the interleaving"},
		build: func(*params) (ha.Operator, error) { return &unionOp{}, nil },
	},
}

// Names lists the operator names in documentation order.
func Names() []string {
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = s.doc.Name
	}
	return names
}

// Docs lists every operator with its class and parameters, in documentation order.
func Docs() []OpDoc {
	docs := make([]OpDoc, len(registry))
	for i, s := range registry {
		docs[i] = s.doc
		docs[i].Params = slices.Clone(s.doc.Params)
	}
	return docs
}

// New builds an operator from its config name and parameters as decoded
// from YAML (values may be string, int, float64 or bool). Durations must be
// strings with a unit ("1s", "250ms"; a time.Duration is accepted too);
// plain integers are rejected. An unknown operator or parameter, a wrong
// type or an invalid value gives an error naming it, matching
// ErrUnknownOperator, ErrUnknownParameter or ErrInvalidParameter.
func New(name string, params map[string]any) (ha.Operator, error) {
	for _, s := range registry {
		if s.doc.Name != name {
			continue
		}
		p, err := newParams(s.doc, params)
		if err != nil {
			return nil, err
		}
		return s.build(p)
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownOperator, name, strings.Join(Names(), ", "))
}

// params reads typed parameters of one operator.
type params struct {
	op  string
	raw map[string]any
}

func newParams(doc OpDoc, raw map[string]any) (*params, error) {
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	slices.Sort(names) // report the first unknown one deterministically
	for _, k := range names {
		if !slices.ContainsFunc(doc.Params, func(p ParamDoc) bool { return p.Name == k }) {
			known := make([]string, len(doc.Params))
			for i, p := range doc.Params {
				known[i] = p.Name
			}
			hint := "it takes no parameters"
			if len(known) > 0 {
				hint = "known: " + strings.Join(known, ", ")
			}
			return nil, fmt.Errorf("%s: %w %q (%s)", doc.Name, ErrUnknownParameter, k, hint)
		}
	}
	return &params{op: doc.Name, raw: raw}, nil
}

func (p *params) errf(name, format string, args ...any) error {
	return &ParamError{Op: p.op, Param: name, Reason: fmt.Sprintf(format, args...)}
}

// float reads a number; ok is false when the parameter is absent.
func (p *params) float(name string) (v float64, ok bool, err error) {
	x, ok := p.raw[name]
	if !ok {
		return 0, false, nil
	}
	switch n := x.(type) {
	case float64:
		v = n
	case float32:
		v = float64(n)
	case int:
		v = float64(n)
	case int64:
		v = float64(n)
	case int32:
		v = float64(n)
	case uint64:
		v = float64(n)
	case uint32:
		v = float64(n)
	case uint:
		v = float64(n)
	default:
		return 0, true, p.errf(name, "must be a number, got %s", describe(x))
	}
	if math.IsNaN(v) {
		return 0, true, p.errf(name, "must be a number, got NaN")
	}
	// Finite and bounded: an infinite threshold or a scale of 1e308 gives
	// outputs of ±Inf, which no log or report can carry.
	if math.IsInf(v, 0) || math.Abs(v) > maxParam {
		return 0, true, p.errf(name, "must be a finite number of magnitude at most %g, got %g", maxParam, v)
	}
	return v, true, nil
}

// maxParam bounds the magnitude of a numeric operator parameter.
const maxParam = 1e15

// duration reads a required positive duration string.
func (p *params) duration(name string) (time.Duration, error) {
	x, ok := p.raw[name]
	if !ok {
		return 0, p.errf(name, "required (a duration such as \"1s\")")
	}
	var d time.Duration
	switch v := x.(type) {
	case string:
		var err error
		d, err = time.ParseDuration(v)
		if err != nil {
			return 0, p.errf(name, "must be a positive duration such as \"1s\" or \"250ms\", got %q", v)
		}
	case time.Duration:
		d = v
	default:
		return 0, p.errf(name, "must be a duration string with a unit such as \"1s\" or \"250ms\", got %s", describe(x))
	}
	if d <= 0 {
		return 0, p.errf(name, "must be a positive duration, got %q", x2s(x))
	}
	return d, nil
}

// enum reads one of allowed, or def when absent.
func (p *params) enum(name, def string, allowed []string) (string, error) {
	x, ok := p.raw[name]
	if !ok {
		return def, nil
	}
	s, isStr := x.(string)
	if !isStr || !slices.Contains(allowed, s) {
		return "", p.errf(name, "must be one of %s, got %s", strings.Join(allowed, ", "), describe(x))
	}
	return s, nil
}

func describe(x any) string {
	if s, ok := x.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%v (%T)", x, x)
}

func x2s(x any) string {
	if d, ok := x.(time.Duration); ok {
		return d.String()
	}
	return fmt.Sprint(x)
}

// floorDiv is a/b rounded towards minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
