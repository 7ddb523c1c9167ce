package reports

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamha/streamha/ha/metrics"
)

// Stat summarises one figure over seeds. Mean and CI95 are 0 when N is 0.
type Stat struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	// CI95 is the half-width of the 95 % confidence interval of the mean
	// (Student's t; 0 for a single value).
	CI95 float64 `json:"ci95"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// tTable is the two-sided 97.5 % quantile of Student's t for 1..30 degrees
// of freedom.
var tTable = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// NewStat summarises xs, ignoring NaN.
func NewStat(xs []float64) Stat {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	s := Stat{N: len(v)}
	if s.N == 0 {
		return s
	}
	s.Min, s.Max = slices.Min(v), slices.Max(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	s.Mean = sum / float64(s.N)
	if s.N > 1 {
		ss := 0.0
		for _, x := range v {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		sd := math.Sqrt(ss / float64(s.N-1))
		t := 1.96
		if s.N-1 <= len(tTable) {
			t = tTable[s.N-2]
		}
		s.CI95 = t * sd / math.Sqrt(float64(s.N))
	}
	return s
}

// meanOrNaN is the mean, NaN when there is no value.
func (s Stat) meanOrNaN() float64 {
	if s.N == 0 {
		return math.NaN()
	}
	return s.Mean
}

// SweepRow aggregates one strategy at one setting over its seeds: one row
// of the sweep table, results.csv and results.json.
type SweepRow struct {
	Setting  int      `json:"setting"`
	Values   []string `json:"values"`
	Strategy string   `json:"strategy"`
	Seeds    int      `json:"seeds"`
	// Types counts the recovery labels over seeds ("gap": 5).
	Types map[string]int `json:"types"`
	// RecoveryMs is over the seeds that recovered only; NotRecovered
	// counts the others, never averaged in, and ObservedMs is how long
	// after the fault those runs were watched (their recovery is longer).
	RecoveryMs   Stat `json:"recovery_ms"`
	NotRecovered int  `json:"not_recovered"`
	ObservedMs   Stat `json:"observed_ms"`
	// EpisodeRecoveryMs is over every fault episode of every seed that
	// recovered, one point each; EpisodesNotRecovered counts the episodes
	// that did not (censored, never averaged in).
	EpisodeRecoveryMs    Stat `json:"episode_recovery_ms"`
	EpisodesNotRecovered int  `json:"episodes_not_recovered"`
	DetectionMs          Stat `json:"detection_ms"`
	Missing              Stat `json:"missing"`
	Duplicates           Stat `json:"duplicates"`
	Wrong                Stat `json:"wrong"`
	LostInputs           Stat `json:"lost_inputs"`
	UnavailableMs        Stat `json:"unavailable_ms"`
	AddedLatencyMs       Stat `json:"max_added_latency_ms"`
	CPURatio             Stat `json:"cpu_ratio"`
	BytesRatio           Stat `json:"bytes_ratio"`
	MessagesRatio        Stat `json:"messages_ratio"`
	PeakQueueBytes       Stat `json:"peak_queue_bytes"`
	CheckpointMB         Stat `json:"checkpoint_mb"`
	// Model is the first-principles estimate at this setting (first seed).
	Model map[string]float64 `json:"model,omitempty"`
}

// TypesLabel is "gap 5" or "precise 3, rollback/repeating 2".
func (r SweepRow) TypesLabel() string {
	keys := make([]string, 0, len(r.Types))
	for k := range r.Types {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if r.Types[keys[a]] != r.Types[keys[b]] {
			return r.Types[keys[a]] > r.Types[keys[b]]
		}
		return keys[a] < keys[b]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + strconv.Itoa(r.Types[k])
	}
	return strings.Join(parts, ", ")
}

func fp(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Aggregate groups sweep points into rows ordered by setting, then by the
// order of the strategies in the points.
func Aggregate(points []PointResult) []SweepRow {
	type key struct {
		setting  int
		strategy string
	}
	runs := map[key][]metrics.Run{}
	values := map[int][]string{}
	var order []key
	var strategies []string
	for _, p := range points {
		values[p.Setting] = p.Values
		for _, r := range p.Result.Runs {
			k := key{p.Setting, r.Strategy}
			if _, ok := runs[k]; !ok {
				order = append(order, k)
			}
			if !slices.Contains(strategies, r.Strategy) {
				strategies = append(strategies, r.Strategy)
			}
			runs[k] = append(runs[k], r)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		if order[a].setting != order[b].setting {
			return order[a].setting < order[b].setting
		}
		return slices.Index(strategies, order[a].strategy) < slices.Index(strategies, order[b].strategy)
	})
	rows := make([]SweepRow, 0, len(order))
	for _, k := range order {
		rs := runs[k]
		row := SweepRow{Setting: k.setting, Values: values[k.setting], Strategy: k.strategy, Seeds: len(rs), Types: map[string]int{}, Model: rs[0].Model}
		col := func(f func(metrics.Run) float64) Stat {
			xs := make([]float64, len(rs))
			for i, r := range rs {
				xs[i] = f(r)
			}
			return NewStat(xs)
		}
		for _, r := range rs {
			l := RecoveryLabel(r.Recovery)
			if r.Recovery.Type == metrics.NotRecoveredType {
				l = "not recovered by end of run" // the outstanding count differs by seed
			}
			row.Types[l]++
		}
		row.RecoveryMs = col(func(r metrics.Run) float64 { return fp(r.Recovery.RecoveryMs) })
		for _, r := range rs {
			if r.Recovery.NotRecovered {
				row.NotRecovered++
			}
		}
		row.EpisodeRecoveryMs, row.EpisodesNotRecovered = episodeStat(rs)
		row.ObservedMs = col(func(r metrics.Run) float64 {
			if !r.Recovery.NotRecovered {
				return math.NaN()
			}
			return fp(r.Recovery.ObservedMs)
		})
		row.DetectionMs = col(func(r metrics.Run) float64 { return fp(r.Recovery.DetectionMs) })
		row.Missing = col(func(r metrics.Run) float64 { return float64(r.Recovery.Missing) })
		row.Duplicates = col(func(r metrics.Run) float64 { return float64(r.Recovery.Duplicates) })
		row.Wrong = col(func(r metrics.Run) float64 { return float64(r.Recovery.Wrong) })
		row.LostInputs = col(func(r metrics.Run) float64 { return float64(r.Recovery.LostInputs) })
		row.UnavailableMs = col(func(r metrics.Run) float64 { return r.Recovery.UnavailableMs })
		row.AddedLatencyMs = col(func(r metrics.Run) float64 { return r.Recovery.MaxAddedLatencyMs })
		row.CPURatio = col(func(r metrics.Run) float64 { return fp(r.Overhead.CPURatio) })
		row.BytesRatio = col(func(r metrics.Run) float64 { return fp(r.Overhead.BytesRatio) })
		row.MessagesRatio = col(func(r metrics.Run) float64 { return fp(r.Overhead.MessagesRatio) })
		row.PeakQueueBytes = col(func(r metrics.Run) float64 { return float64(r.Overhead.PeakQueueBytes) })
		row.CheckpointMB = col(func(r metrics.Run) float64 { return float64(r.Overhead.CheckpointBytes) / 1e6 })
		rows = append(rows, row)
	}
	return rows
}

// axisKind says how a swept parameter's values are placed on an axis.
type axisKind int

const (
	axisCategory axisKind = iota // positions 0, 1, 2, ... labelled with the values
	axisDuration                 // milliseconds
	axisNumber
)

// paramAxis maps a parameter's values to x positions.
type paramAxis struct {
	name   string
	kind   axisKind
	values []string
	pos    []float64
}

func newParamAxis(name string, values []string) paramAxis {
	a := paramAxis{name: name, values: values, kind: axisDuration}
	for _, v := range values {
		if _, err := time.ParseDuration(v); err != nil {
			a.kind = axisNumber
			break
		}
	}
	if a.kind == axisNumber {
		for _, v := range values {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				a.kind = axisCategory
				break
			}
		}
	}
	for i, v := range values {
		switch a.kind {
		case axisDuration:
			d, _ := time.ParseDuration(v)
			a.pos = append(a.pos, float64(d)/float64(time.Millisecond))
		case axisNumber:
			f, _ := strconv.ParseFloat(v, 64)
			a.pos = append(a.pos, f)
		default:
			a.pos = append(a.pos, float64(i))
		}
	}
	return a
}

// label is the axis label.
func (a paramAxis) label() string {
	if a.kind == axisDuration {
		return a.name + " (ms)"
	}
	return a.name
}

// x returns the position of a value (NaN when unknown).
func (a paramAxis) x(v string) float64 {
	if i := slices.Index(a.values, v); i >= 0 {
		return a.pos[i]
	}
	return math.NaN()
}

// episodeStat is the recovery time over every recovered fault episode of
// runs, and the number of episodes that did not recover.
func episodeStat(runs []metrics.Run) (Stat, int) {
	var xs []float64
	not := 0
	for _, r := range runs {
		for _, e := range r.Recovery.Episodes {
			switch {
			case e.RecoveryMs != nil:
				xs = append(xs, *e.RecoveryMs)
			case e.NotRecovered:
				not++
			}
		}
	}
	return NewStat(xs), not
}
