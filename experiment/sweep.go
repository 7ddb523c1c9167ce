package experiment

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/strategies"
)

// SweepParam is one swept parameter: a strategy parameter name (applied to
// every strategy that declares it) or an experiment path such as
// "source.rate", "faults[0].at" or "nodes[1].ops[0].tumbling.size".
type SweepParam struct {
	Name   string   `yaml:"name" json:"name"`
	Values []string `yaml:"values" json:"values"`
}

// SweepFile is a sweep spec as written in YAML. Every field is optional
// except params; see docs/sweeps.md.
type SweepFile struct {
	// Name names the sweep (default: the experiment's name).
	Name string `yaml:"name"`
	// Experiment is the experiment file the sweep varies (default: the
	// built-in experiment). A relative path is relative to the spec file.
	Experiment string `yaml:"experiment"`
	// Strategies to compare (default: the experiment's, else all).
	Strategies []string `yaml:"strategies"`
	// Seeds is the number of seeds per setting: the experiment's seed,
	// seed+1, ... (default 1). SeedList gives them explicitly instead.
	Seeds    int      `yaml:"seeds"`
	SeedList []uint64 `yaml:"seed_list"`
	// Params are the swept parameters; points are their cartesian product.
	Params []SweepParam `yaml:"params"`
}

// LoadSweepFile reads a sweep spec file.
func LoadSweepFile(path string) (*SweepFile, error) {
	b, err := ReadFile(path, ParseOptions{})
	if err != nil {
		return nil, err
	}
	return ParseSweepFile(b, path)
}

// ParseSweepFile decodes a sweep spec read from path; a relative
// experiment path is made relative to path's directory.
func ParseSweepFile(b []byte, path string) (*SweepFile, error) {
	var f SweepFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, path, err)
	}
	if f.Experiment != "" && !strings.HasPrefix(f.Experiment, "/") {
		if i := strings.LastIndexByte(path, '/'); i >= 0 {
			f.Experiment = path[:i+1] + f.Experiment
		}
	}
	return &f, nil
}

// Sweep is a resolved, validated sweep: the base experiment text, the
// swept parameters, the strategies and the seeds. Its points are the
// cartesian product of the parameter values (the first parameter varies
// slowest) times the seeds (fastest): point index = setting*len(Seeds) + seed index.
type Sweep struct {
	Name string `json:"name"`
	// Base is the experiment YAML every point starts from.
	Base       string       `json:"base"`
	Params     []SweepParam `json:"params"`
	Strategies []string     `json:"strategies"`
	Seeds      []uint64     `json:"seeds"`
	// Kinds says, per parameter, "strategy" or "experiment".
	Kinds []string `json:"kinds"`
	// AllowLarge checks every point against LargeLimits.
	AllowLarge bool `json:"allow_large,omitempty"`
}

// Parameter kinds (Sweep.Kinds).
const (
	ParamStrategy   = "strategy"
	ParamExperiment = "experiment"
)

// SweepPoint is one point of a sweep: a setting and a seed.
type SweepPoint struct {
	Index   int      `json:"index"`
	Setting int      `json:"setting"`
	Values  []string `json:"values"`
	Seed    uint64   `json:"seed"`
}

// NewSweep resolves a sweep: base is the experiment YAML, strategies the
// names to run (empty: the experiment's list, else every registered one),
// seeds the seed count (0: 1) unless seedList is given. It classifies each
// parameter and builds every point's experiment once so that an unknown
// path or a bad value is reported before anything runs (wrapping ErrConfig).
// One ParseOptions may follow: the limits every point is checked against.
func NewSweep(name, base string, params []SweepParam, names []string, seeds int, seedList []uint64, opts ...ParseOptions) (*Sweep, error) {
	var o ParseOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	e, err := ParseWith([]byte(base), "sweep experiment", o)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = e.Name
	}
	if len(names) == 0 {
		for _, s := range e.StrategyList() {
			names = append(names, s.Name)
		}
		if len(names) == 0 {
			names = strategies.Names(false)
		}
	}
	for _, n := range names {
		if _, err := strategies.Lookup(n); err != nil {
			return nil, err
		}
	}
	if len(params) == 0 {
		return nil, fmt.Errorf("%w: sweep: no parameter to sweep (give --param NAME=V1,V2 or params: in the spec)", ErrConfig)
	}
	seen := map[string]bool{}
	for _, p := range params {
		if p.Name == "" {
			return nil, fmt.Errorf("%w: sweep: a parameter has no name", ErrConfig)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%w: sweep: parameter %q given twice", ErrConfig, p.Name)
		}
		seen[p.Name] = true
		if len(p.Values) == 0 {
			return nil, fmt.Errorf("%w: sweep: parameter %q has no values", ErrConfig, p.Name)
		}
	}
	if seeds < 0 {
		return nil, fmt.Errorf("%w: sweep: seeds must be positive, got %d", ErrConfig, seeds)
	}
	if len(seedList) == 0 {
		seeds = max(seeds, 1)
		for i := range seeds {
			seedList = append(seedList, e.Seed+uint64(i))
		}
	}
	sw := &Sweep{Name: name, Base: base, Params: params, Strategies: slices.Clone(names), Seeds: slices.Clone(seedList), AllowLarge: o.AllowLarge}
	for _, p := range params {
		kind := ParamExperiment
		for _, n := range names {
			if declares(n, p.Name) {
				kind = ParamStrategy
			}
		}
		sw.Kinds = append(sw.Kinds, kind)
	}
	for i, p := range params {
		if sw.Kinds[i] == ParamExperiment && !strings.ContainsAny(p.Name, ".[") && !topLevelField(p.Name) {
			return nil, fmt.Errorf("%w: unknown sweep parameter %q: no strategy of this sweep (%s) declares it and it is not an experiment field (use a path such as source.rate or faults[0].at)",
				ErrConfig, p.Name, strings.Join(names, ", "))
		}
	}
	for s := range sw.Settings() {
		if _, err := sw.Experiment(SweepPoint{Setting: s, Values: sw.SettingValues(s), Seed: sw.Seeds[0]}); err != nil {
			return nil, err
		}
	}
	return sw, nil
}

// topLevelField reports whether name is a top-level key of the experiment file.
func topLevelField(name string) bool {
	t := reflect.TypeOf(Experiment{})
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag == name {
			return true
		}
	}
	return false
}

func declares(strategy, param string) bool {
	info, err := strategies.Lookup(strategy)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(info.Params, func(p strategies.Param) bool { return p.Name == param })
}

// Hash identifies the sweep's content (not its sharding): a resumed or
// merged sweep must have the same hash.
func (sw *Sweep) Hash() string {
	b, _ := json.Marshal(struct {
		V int
		S *Sweep
	}{1, sw})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// Settings is the number of parameter settings.
func (sw *Sweep) Settings() int {
	n := 1
	for _, p := range sw.Params {
		n *= len(p.Values)
	}
	return n
}

// SettingValues returns the parameter values of setting s.
func (sw *Sweep) SettingValues(s int) []string {
	vals := make([]string, len(sw.Params))
	for i := len(sw.Params) - 1; i >= 0; i-- {
		k := len(sw.Params[i].Values)
		vals[i] = sw.Params[i].Values[s%k]
		s /= k
	}
	return vals
}

// Len is the number of points.
func (sw *Sweep) Len() int { return sw.Settings() * len(sw.Seeds) }

// Point returns point i.
func (sw *Sweep) Point(i int) SweepPoint {
	s := i / len(sw.Seeds)
	return SweepPoint{Index: i, Setting: s, Values: sw.SettingValues(s), Seed: sw.Seeds[i%len(sw.Seeds)]}
}

// Shard returns the indices of the points of shard i of n (i in [0, n)):
// points i, i+n, i+2n, ... so that every shard gets a mix of settings.
func (sw *Sweep) Shard(i, n int) []int {
	var idx []int
	for k := i; k < sw.Len(); k += n {
		idx = append(idx, k)
	}
	return idx
}

// Experiment builds the experiment of a point: the base with each
// experiment-path parameter set on its YAML tree (re-validated by Parse),
// each strategy parameter given to every strategy that declares it, and
// the point's seed.
func (sw *Sweep) Experiment(p SweepPoint) (*Experiment, error) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(sw.Base), &root); err != nil {
		return nil, fmt.Errorf("%w: sweep experiment: %w", ErrConfig, err)
	}
	for i, prm := range sw.Params {
		if sw.Kinds[i] != ParamExperiment {
			continue
		}
		if err := SetPath(&root, prm.Name, p.Values[i]); err != nil {
			return nil, fmt.Errorf("%w: sweep parameter %q: %w", ErrConfig, prm.Name, err)
		}
	}
	text, err := yaml.Marshal(&root)
	if err != nil {
		return nil, fmt.Errorf("sweep experiment: %w", err)
	}
	// The point's text is generated: its lines are not the user's, so the
	// error names the point's parameter values instead.
	var set []string
	for i, prm := range sw.Params {
		set = append(set, prm.Name+"="+p.Values[i])
	}
	e, err := ParseWith(text, "sweep point "+strings.Join(set, ", "), ParseOptions{AllowLarge: sw.AllowLarge, NoLines: true})
	if err != nil {
		return nil, err
	}
	for i, prm := range sw.Params {
		if sw.Kinds[i] != ParamStrategy {
			continue
		}
		for _, n := range sw.Strategies {
			if !declares(n, prm.Name) {
				continue
			}
			setStrategyParam(e, n, prm.Name, p.Values[i])
			info, _ := strategies.Lookup(n)
			if _, err := strategies.Build(n, e.ParamsFor(n)); err != nil {
				return nil, fmt.Errorf("%w: sweep parameter %q = %q for %s: %w", ErrConfig, prm.Name, p.Values[i], info.Name, err)
			}
		}
	}
	e.Seed = p.Seed
	return e, nil
}

// setStrategyParam sets a parameter of strategy name in the experiment's
// strategy list, adding an entry when the experiment does not name it.
func setStrategyParam(e *Experiment, name, param, value string) {
	var v any = value
	if e.Strategy.Name == name {
		if e.Strategy.Params == nil {
			e.Strategy.Params = map[string]any{}
		}
		e.Strategy.Params[param] = v
		return
	}
	for i := range e.Strategies {
		if e.Strategies[i].Name == name {
			if e.Strategies[i].Params == nil {
				e.Strategies[i].Params = map[string]any{}
			}
			e.Strategies[i].Params[param] = v
			return
		}
	}
	e.Strategies = append(e.Strategies, StrategyConfig{Name: name, Params: map[string]any{param: v}})
}

var pathElem = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)((?:\[[0-9]+\])*)$`)

// SetPath sets the scalar at path ("source.rate", "faults[0].at",
// "nodes[1].ops[0].tumbling.size") in a YAML document tree to value. A
// missing mapping key is created (Parse then rejects names the experiment
// does not know); an out-of-range index or a step into a scalar is an error.
func SetPath(doc *yaml.Node, path, value string) error {
	n := doc
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return fmt.Errorf("empty document")
		}
		n = n.Content[0]
	}
	if path == "" {
		return fmt.Errorf("empty path")
	}
	parts := strings.Split(path, ".")
	for pi, part := range parts {
		m := pathElem.FindStringSubmatch(part)
		if m == nil {
			return fmt.Errorf("bad path element %q (want name or name[index])", part)
		}
		key := m[1]
		var idx []int
		for _, s := range strings.Split(strings.Trim(m[2], "[]"), "][") {
			if s == "" {
				continue
			}
			k, _ := strconv.Atoi(s)
			idx = append(idx, k)
		}
		last := pi == len(parts)-1 && len(idx) == 0
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: %s is not a mapping", path, strings.Join(parts[:pi], "."))
		}
		var child *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == key {
				child = n.Content[j+1]
				break
			}
		}
		if child == nil {
			child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if last {
				child = &yaml.Node{Kind: yaml.ScalarNode}
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, child)
		}
		n = child
		for k, ix := range idx {
			if n.Kind != yaml.SequenceNode {
				return fmt.Errorf("%s: %s is not a list", path, key)
			}
			if ix >= len(n.Content) {
				return fmt.Errorf("%s: index %d out of range (%s has %d entries)", path, ix, key, len(n.Content))
			}
			n = n.Content[ix]
			_ = k
		}
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("%s is not a single value (it is a %s)", path, kindName(n.Kind))
	}
	n.Value, n.Tag, n.Style = value, "", 0
	return nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

// ParseParamFlag parses "name=v1,v2,v3".
func ParseParamFlag(s string) (SweepParam, error) {
	name, vals, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return SweepParam{}, fmt.Errorf("%w: --param %q: want NAME=V1,V2,...", ErrConfig, s)
	}
	var p SweepParam
	p.Name = name
	for _, v := range strings.Split(vals, ",") {
		if v = strings.TrimSpace(v); v != "" {
			p.Values = append(p.Values, v)
		}
	}
	if len(p.Values) == 0 {
		return p, fmt.Errorf("%w: --param %s: no values", ErrConfig, name)
	}
	return p, nil
}
