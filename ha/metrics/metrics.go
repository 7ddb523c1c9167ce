package metrics

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
)

// Result is the file streamha writes as result.json.
type Result struct {
	Seed       uint64 `json:"seed"`
	Experiment string `json:"experiment"`
	Mode       string `json:"mode"` // "sim" or "cluster"
	// QueryClass is the weakest operator class of the query.
	QueryClass string `json:"query_class"`
	// Faults describes the fault schedule in words.
	Faults []string `json:"faults"`
	// Command reproduces the run.
	Command string `json:"command,omitempty"`
	// Note says what is and is not reproducible (cluster runs).
	Note string `json:"note,omitempty"`
	// Config is the experiment as YAML.
	Config string `json:"config,omitempty"`
	// Baseline is the no-HA failure-free run's overhead figures.
	Baseline Overhead `json:"baseline"`
	Runs     []Run    `json:"runs"`
}

// Run is one strategy's outcome.
type Run struct {
	Strategy string            `json:"strategy"`
	Params   map[string]string `json:"params"`
	Recovery Recovery          `json:"recovery"`
	Overhead Overhead          `json:"overhead"`
	// Model is the first-principles estimate printed beside the measured figures (optional).
	Model map[string]float64 `json:"model,omitempty"`
	// Extra holds strategy-specific figures (chosen checkpoint interval, ...).
	Extra map[string]any `json:"extra,omitempty"`
	// Anomalies names the file of the run directory that lists every
	// anomaly, one JSON object a line (Recovery.Explanations stops after
	// the first ones); "" when there was none or nothing was written.
	Anomalies string `json:"anomalies,omitempty"`
}

// Recovery is what the failure did to the output.
type Recovery struct {
	Type       string `json:"type"`
	Subtype    string `json:"subtype"`
	Missing    int    `json:"missing"`
	Duplicates int    `json:"duplicates"`
	Wrong      int    `json:"wrong"`
	Spurious   int    `json:"spurious"`
	// LostInputs is the number of distinct source tuples whose effect is
	// missing from the output (at most Emitted); LostLineage the
	// lineage-weighted shortfall summed over output ids, which counts a
	// tuple once per output it was missing from.
	LostInputs  int64 `json:"lost_inputs"`
	LostLineage int64 `json:"lost_lineage"`
	// Emitted is the number of source tuples the sources generated (0
	// when unknown); UnmatchedInputs those that reach no output even in
	// the failure-free run (filtered out, or without a join partner).
	Emitted         int64    `json:"emitted,omitempty"`
	UnmatchedInputs int64    `json:"unmatched_inputs,omitempty"`
	ConvergedAtMs   *float64 `json:"converged_at_ms"`
	DetectionMs     *float64 `json:"detection_ms"`
	// RecoveryMs is nil when the run ended before the sink recovered
	// (NotRecovered) or when nothing failed.
	RecoveryMs *float64 `json:"recovery_ms"`
	// NotRecovered is true when the sink had not recovered by the end of
	// the run; ObservedMs is then how long after the fault the run ended.
	NotRecovered bool     `json:"not_recovered"`
	ObservedMs   *float64 `json:"observed_ms,omitempty"`
	// Outstanding counts the expected outputs not yet delivered by a run
	// that ended while still catching up (not counted as Missing).
	Outstanding       int      `json:"outstanding,omitempty"`
	MaxAddedLatencyMs float64  `json:"max_added_latency_ms"`
	UnavailableMs     float64  `json:"unavailable_ms"`
	Delivered         int      `json:"delivered"`
	Expected          int      `json:"expected"`
	Explanations      []string `json:"explanations"`
	// Episodes are the run's fault episodes, each timed from its own start
	// (docs/semantics.md, "Fault episodes"); RecoveryMs, NotRecovered,
	// ObservedMs and DetectionMs above are those of the worst episode: the
	// first that did not recover, or else the one that took longest.
	Episodes     []Episode `json:"episodes,omitempty"`
	EpisodeCount int       `json:"episode_count,omitempty"`
	// ToleranceMs is how late against the strategy's own failure-free run
	// an output could arrive and still count as on time.
	ToleranceMs float64 `json:"tolerance_ms,omitempty"`
	// DueFrom says what each output's due time was read from: "own" (the
	// strategy's own failure-free run), "pre-fault" (a real run without
	// one: its own deliveries before the first fault) or "reference"
	// (the failure-free no-HA run O_e).
	DueFrom string `json:"due_from,omitempty"`
}

// NotRecoveredType is the recovery type of a run that ended while still
// catching up: its missing outputs were outstanding, not lost.
const NotRecoveredType = "not-recovered"

// Label is the recovery as one word or type/subtype ("rollback/repeating"),
// or "not recovered by end of run (N outstanding)".
func (r Recovery) Label() string {
	if r.Type == NotRecoveredType {
		return fmt.Sprintf("not recovered by end of run (%d outstanding)", r.Outstanding)
	}
	return classify.Label(r.Type, r.Subtype)
}

// RecoveryText is the recovery time as the table prints it: "221.0", or
// "not recovered (> 9.7 s)", or "" when nothing failed.
func (r Recovery) RecoveryText() string {
	return recoveryText(r.RecoveryMs, r.NotRecovered, r.ObservedMs)
}

// RecoveryCell is RecoveryText with the number of fault episodes when
// there were several: "224.2 (2)", "not recovered (> 9.7 s) (3)".
func (r Recovery) RecoveryCell() string {
	t := r.RecoveryText()
	if r.EpisodeCount > 1 {
		t += fmt.Sprintf(" (%d)", r.EpisodeCount)
	}
	return t
}

func recoveryText(rec *float64, notRecovered bool, observed *float64) string {
	switch {
	case rec != nil:
		return fmt.Sprintf("%.1f", *rec)
	case notRecovered && observed != nil:
		return fmt.Sprintf("not recovered (> %.1f s)", *observed/1e3)
	case notRecovered:
		return "not recovered"
	}
	return ""
}

// Overhead is a strategy's failure-free cost and its ratio to the no-HA run.
type Overhead struct {
	Messages int64   `json:"messages"`
	Bytes    int64   `json:"bytes"`
	CPUMs    float64 `json:"cpu"`
	// ProcessCPUMs is the nodes' process CPU time in real runs (see
	// ha.NodeStats.ProcessCPU); 0 when simulated.
	ProcessCPUMs    float64 `json:"process_cpu_ms,omitempty"`
	PeakQueue       int64   `json:"peak_queue"`
	PeakQueueBytes  int64   `json:"peak_queue_bytes"`
	CheckpointBytes int64   `json:"checkpoint_bytes"`
	LatencyP50Ms    float64 `json:"latency_p50_ms"`
	LatencyP99Ms    float64 `json:"latency_p99_ms"`
	// Ratios to the no-HA failure-free run (nil when the baseline is 0).
	MessagesRatio *float64 `json:"messages_ratio,omitempty"`
	BytesRatio    *float64 `json:"bytes_ratio,omitempty"`
	CPURatio      *float64 `json:"cpu_ratio,omitempty"`
	// ProcessCPURatio is ProcessCPUMs over the baseline's (real runs).
	ProcessCPURatio *float64 `json:"process_cpu_ratio,omitempty"`
	PeakQueueRatio  *float64 `json:"peak_queue_ratio,omitempty"`
	// Rounds is how many repeated measurements the figures are the medians
	// of (MedianOverhead); 0 for one measurement.
	Rounds int `json:"rounds,omitempty"`
	// CPURatioRange and ProcessCPURatioRange are the smallest and largest
	// of the rounds' ratios (Rounds > 1).
	CPURatioRange        *Range `json:"cpu_ratio_range,omitempty"`
	ProcessCPURatioRange *Range `json:"process_cpu_ratio_range,omitempty"`
	// Nodes are per-host figures.
	Nodes []NodeFigures `json:"nodes,omitempty"`
}

// Range is the smallest and the largest of repeated measurements.
type Range struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// NodeFigures are one host's counters.
type NodeFigures struct {
	Host            string  `json:"host"`
	Role            string  `json:"role"`
	Messages        int64   `json:"messages"`
	Bytes           int64   `json:"bytes"`
	CPUMs           float64 `json:"cpu_ms"`
	ProcessCPUMs    float64 `json:"process_cpu_ms,omitempty"`
	PeakQueue       int64   `json:"peak_queue"`
	PeakQueueBytes  int64   `json:"peak_queue_bytes"`
	CheckpointBytes int64   `json:"checkpoint_bytes"`
}

// Outputs converts deliveries for the classifier.
func Outputs(ds *ha.Deliveries) []classify.Output {
	out := make([]classify.Output, ds.Len())
	for i, d := range ds.All() {
		out[i] = outputOf(d)
	}
	return out
}

// outputOf is a delivery as the classifier's text form.
func outputOf(d ha.Delivery) classify.Output {
	return classify.Output{
		ID: d.Tuple.ID.String(), Key: ha.KeyName(d.Tuple.Key),
		Value: classify.CanonicalFloat(d.Tuple.Value),
		N:     int64(d.Tuple.Lineage.N), HasN: true,
		T: ms(d.T), HasT: true,
	}
}

// Classify classifies observed deliveries against expected ones, reading
// both logs in place (classify.ClassifySource): the same verdict as
// classify.Classify(Outputs(exp), Outputs(obs), marks), without building
// about 110 bytes of strings per output first.
func Classify(exp, obs *ha.Deliveries, marks []classify.Mark) classify.Result {
	return classify.ClassifySource[ha.OutputID, uint32](deliverySource{exp.Reader()}, deliverySource{obs.Reader()}, marks)
}

// deliverySource is a delivery log as a classify.Source: ids are
// ha.OutputIDs, keys the tuple keys, and the value identity is the value's
// bits, with every zero and every NaN made one (their canonical texts are
// "0" and "NaN"); OutputID.String, KeyName and CanonicalFloat are
// injective otherwise, so identities are equal exactly when texts are.
// The classifier reads each log mostly in order, through a DeliveryReader.
type deliverySource struct{ ds *ha.DeliveryReader }

func (s deliverySource) Len() int                     { return s.ds.Len() }
func (s deliverySource) ID(i int) ha.OutputID         { return s.ds.ID(i) }
func (s deliverySource) Output(i int) classify.Output { return outputOf(s.ds.At(i)) }

func (s deliverySource) Entry(i int) classify.Entry[uint32] {
	d := s.ds.At(i)
	return classify.Entry[uint32]{Key: d.Tuple.Key, Value: valueIdentity(d.Tuple.Value),
		N: int64(d.Tuple.Lineage.N), HasN: true, T: ms(d.T), HasT: true}
}

// valueIdentity maps a value to a number equal for equal canonical texts.
func valueIdentity(v float64) uint64 {
	switch {
	case v == 0:
		return 0
	case math.IsNaN(v):
		return 0x7ff8000000000001
	}
	return math.Float64bits(v)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ptr(f float64) *float64 { return &f }

// FirstFault returns the fault that recovery is measured from: the first
// crash, or when nothing crashed, the first pause or partition that some
// node detected (a pause shorter than the detector timeout is invisible
// to the strategies and is not a failure they recover from).
func FirstFault(trace *ha.Trace) (time.Duration, string, bool) {
	for _, e := range trace.Events() {
		if e.Kind == ha.EvCrash {
			return e.T, e.Host, true
		}
	}
	var pending []ha.Event
	for _, e := range trace.Events() {
		switch e.Kind {
		case ha.EvPause, ha.EvPartition:
			pending = append(pending, e)
		case ha.EvDetect:
			for _, f := range pending {
				if f.Kind == ha.EvPartition || f.Host == e.Peer {
					return f.T, f.Host, true
				}
			}
		}
	}
	return 0, "", false
}

// Marks turns fault, detection, takeover and replay events into classifier marks.
// A replay is marked only when it goes to a host that sends output on: a
// first host of its fragment (no "." in its name), the sink, or a host that
// has taken over. A replay that brings a new secondary or backup up to date
// delivers nothing, and naming it would blame it for what the sink got at
// the same moment from the new primary.
func Marks(trace *ha.Trace) []classify.Mark {
	var marks []classify.Mark
	detected := map[string]bool{}
	tookOver := map[string]bool{}
	for _, e := range trace.Events() {
		switch e.Kind {
		case ha.EvCrash:
			marks = append(marks, classify.Mark{At: ms(e.T), Label: "the crash of " + e.Host})
		case ha.EvPause:
			marks = append(marks, classify.Mark{At: ms(e.T), Until: ms(e.T + time.Duration(e.N)), Label: "the pause of " + e.Host})
		case ha.EvPartition:
			marks = append(marks, classify.Mark{At: ms(e.T), Label: "the partition " + e.Note})
		case ha.EvDetect:
			if !detected[e.Peer] {
				detected[e.Peer] = true
				marks = append(marks, classify.Mark{At: ms(e.T), Label: fmt.Sprintf("the detection of %s's failure", e.Peer)})
			}
		case ha.EvTakeover:
			tookOver[e.Host] = true
			marks = append(marks, classify.Mark{At: ms(e.T), Label: fmt.Sprintf("the takeover by %s (epoch %d)", e.Host, e.Epoch)})
		case ha.EvReplayStart:
			if e.N > 0 && (!strings.Contains(e.Peer, ".") || tookOver[e.Peer]) {
				marks = append(marks, classify.Mark{At: ms(e.T), Label: fmt.Sprintf("the replay of %d tuples from %s to %s", e.N, e.Host, e.Peer)})
			}
		}
	}
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].At < marks[j].At })
	return marks
}

// Shortfalls is, per expected id (numbered as in x, the classifier's
// index of exp against obs), how many source tuples its last delivered
// copy lacks against its failure-free lineage count: all of them when it
// was never delivered, 0 when nothing is missing.
func Shortfalls(exp, obs *ha.Deliveries, x classify.Index) []int64 {
	lastN := make([]uint32, len(x.First)) // n of the last observed copy, 0 = never delivered
	for i, d := range obs.All() {
		if id := x.Observed[i]; id >= 0 {
			lastN[id] = d.Tuple.Lineage.N
		}
	}
	short := make([]int64, len(x.First))
	er := exp.Reader() // x.First is in expected order
	for id, first := range x.First {
		short[id] = max(0, int64(er.At(int(first)).Tuple.Lineage.N)-int64(lastN[id]))
	}
	return short
}

// firstLatency is the failure-free latency of expected id d: that of its
// first delivery, read through er, a reader of the expected log.
func firstLatency(er *ha.DeliveryReader, x classify.Index, d int32) time.Duration {
	return er.At(int(x.First[d])).Latency()
}

func quantile(xs []time.Duration, q float64) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return sortedQuantile(s, q)
}

// sortedQuantile is the q-quantile of s, sorted in increasing order.
func sortedQuantile(s []time.Duration, q float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func maxAdded(exp, obs *ha.Deliveries, x classify.Index) float64 {
	seen := make([]bool, len(x.First))
	var worst time.Duration
	er := exp.Reader() // observed outputs mostly follow the expected order
	for i, d := range obs.All() {
		id := x.Observed[i]
		if id < 0 || seen[id] {
			continue
		}
		seen[id] = true
		worst = max(worst, d.Latency()-firstLatency(er, x, id))
	}
	return ms(worst)
}

func maxGap(ds *ha.Deliveries, until time.Duration) time.Duration {
	var g, prev time.Duration
	for i, d := range ds.All() {
		if d.T > until {
			break
		}
		if i > 0 {
			g = max(g, d.T-prev)
		}
		prev = d.T
	}
	return g
}

// unavailable is the longest interval without output beyond the normal
// (failure-free) longest inter-output gap, up to the last expected output.
func unavailable(exp, obs *ha.Deliveries) float64 {
	if exp.Len() == 0 {
		return 0
	}
	lastExp, _ := exp.Last()
	end := lastExp.T
	normal := maxGap(exp, end)
	g := maxGap(obs, end)
	if last, ok := obs.Last(); ok && last.T < end {
		g = max(g, end-last.T)
	}
	if obs.Len() == 0 {
		g = end
	}
	return ms(max(0, g-normal))
}

// OverheadOf sums the end-of-run counters of a failure-free run; baseline,
// when non-nil, fills the ratios.
func OverheadOf(trace *ha.Trace, baseline *Overhead) Overhead {
	var o Overhead
	for _, e := range trace.Events() {
		if e.Kind != ha.EvStats || e.Stats == nil {
			continue
		}
		s := e.Stats
		o.Messages += s.Messages
		o.Bytes += s.Bytes
		o.CPUMs += float64(s.CPU) / 1e6
		o.ProcessCPUMs += float64(s.ProcessCPU) / 1e6
		o.PeakQueue = max(o.PeakQueue, s.PeakQueue)
		o.PeakQueueBytes = max(o.PeakQueueBytes, s.PeakQueueBytes)
		o.CheckpointBytes += s.CheckpointBytes
		o.Nodes = append(o.Nodes, NodeFigures{
			Host: e.Host, Role: s.Role, Messages: s.Messages, Bytes: s.Bytes, CPUMs: float64(s.CPU) / 1e6,
			ProcessCPUMs: float64(s.ProcessCPU) / 1e6,
			PeakQueue:    s.PeakQueue, PeakQueueBytes: s.PeakQueueBytes, CheckpointBytes: s.CheckpointBytes,
		})
	}
	lat := trace.Latencies() // a copy: sorted in place
	slices.Sort(lat)
	o.LatencyP50Ms = ms(sortedQuantile(lat, 0.5))
	o.LatencyP99Ms = ms(sortedQuantile(lat, 0.99))
	if baseline != nil {
		o.MessagesRatio = ratio(float64(o.Messages), float64(baseline.Messages))
		o.BytesRatio = ratio(float64(o.Bytes), float64(baseline.Bytes))
		o.CPURatio = ratio(o.CPUMs, baseline.CPUMs)
		if o.ProcessCPUMs > 0 { // measured in real runs only
			o.ProcessCPURatio = ratio(o.ProcessCPUMs, baseline.ProcessCPUMs)
		}
		o.PeakQueueRatio = ratio(float64(o.PeakQueue), float64(baseline.PeakQueue))
	}
	return o
}

// MedianOverhead combines repeated measurements of one configuration
// (real runs, whose timing varies from run to run): every count and time is
// the median over the rounds, every ratio the median of the rounds' own
// ratios (each round against its own baseline, so a machine that is slower
// for a while slows both sides of a ratio), and the CPU ratios keep their
// range. Per-host figures are medians over the rounds that host took part
// in, in the order hosts first appear. One round is returned as it is.
func MedianOverhead(rounds []Overhead) Overhead {
	if len(rounds) == 0 {
		return Overhead{}
	}
	if len(rounds) == 1 {
		return rounds[0]
	}
	med := func(f func(*Overhead) float64) float64 { return medianBy(rounds, f) }
	medInt := func(f func(*Overhead) int64) int64 { return medianIntBy(rounds, f) }
	o := Overhead{
		Messages:        medInt(func(o *Overhead) int64 { return o.Messages }),
		Bytes:           medInt(func(o *Overhead) int64 { return o.Bytes }),
		CPUMs:           med(func(o *Overhead) float64 { return o.CPUMs }),
		ProcessCPUMs:    med(func(o *Overhead) float64 { return o.ProcessCPUMs }),
		PeakQueue:       medInt(func(o *Overhead) int64 { return o.PeakQueue }),
		PeakQueueBytes:  medInt(func(o *Overhead) int64 { return o.PeakQueueBytes }),
		CheckpointBytes: medInt(func(o *Overhead) int64 { return o.CheckpointBytes }),
		LatencyP50Ms:    med(func(o *Overhead) float64 { return o.LatencyP50Ms }),
		LatencyP99Ms:    med(func(o *Overhead) float64 { return o.LatencyP99Ms }),
		Rounds:          len(rounds),
	}
	o.MessagesRatio, _ = medianRatio(rounds, func(o *Overhead) *float64 { return o.MessagesRatio })
	o.BytesRatio, _ = medianRatio(rounds, func(o *Overhead) *float64 { return o.BytesRatio })
	o.CPURatio, o.CPURatioRange = medianRatio(rounds, func(o *Overhead) *float64 { return o.CPURatio })
	o.ProcessCPURatio, o.ProcessCPURatioRange = medianRatio(rounds, func(o *Overhead) *float64 { return o.ProcessCPURatio })
	o.PeakQueueRatio, _ = medianRatio(rounds, func(o *Overhead) *float64 { return o.PeakQueueRatio })
	o.Nodes = medianNodes(rounds)
	return o
}

// medianRatio is the median and range of the rounds' non-nil ratios f
// (nil when no round has one).
func medianRatio(rounds []Overhead, f func(*Overhead) *float64) (*float64, *Range) {
	var xs []float64
	for i := range rounds {
		if p := f(&rounds[i]); p != nil {
			xs = append(xs, *p)
		}
	}
	if len(xs) == 0 {
		return nil, nil
	}
	m := math.Round(Median(xs)*1000) / 1000
	return &m, &Range{Min: slices.Min(xs), Max: slices.Max(xs)}
}

// medianNodes is the per-host median of the rounds' node figures.
func medianNodes(rounds []Overhead) []NodeFigures {
	var (
		order  []string
		byHost = map[string][]NodeFigures{}
	)
	for _, r := range rounds {
		for _, n := range r.Nodes {
			if _, ok := byHost[n.Host]; !ok {
				order = append(order, n.Host)
			}
			byHost[n.Host] = append(byHost[n.Host], n)
		}
	}
	if len(order) == 0 {
		return nil
	}
	out := make([]NodeFigures, 0, len(order))
	for _, h := range order {
		ns := byHost[h]
		med := func(f func(*NodeFigures) float64) float64 { return medianBy(ns, f) }
		medInt := func(f func(*NodeFigures) int64) int64 { return medianIntBy(ns, f) }
		out = append(out, NodeFigures{
			Host: h, Role: ns[len(ns)-1].Role,
			Messages:        medInt(func(n *NodeFigures) int64 { return n.Messages }),
			Bytes:           medInt(func(n *NodeFigures) int64 { return n.Bytes }),
			CPUMs:           med(func(n *NodeFigures) float64 { return n.CPUMs }),
			ProcessCPUMs:    med(func(n *NodeFigures) float64 { return n.ProcessCPUMs }),
			PeakQueue:       medInt(func(n *NodeFigures) int64 { return n.PeakQueue }),
			PeakQueueBytes:  medInt(func(n *NodeFigures) int64 { return n.PeakQueueBytes }),
			CheckpointBytes: medInt(func(n *NodeFigures) int64 { return n.CheckpointBytes }),
		})
	}
	return out
}

// medianBy is the median of f over xs.
func medianBy[T any](xs []T, f func(*T) float64) float64 {
	vs := make([]float64, len(xs))
	for i := range xs {
		vs[i] = f(&xs[i])
	}
	return Median(vs)
}

// medianIntBy is the median of f over xs, rounded to an integer.
func medianIntBy[T any](xs []T, f func(*T) int64) int64 {
	return int64(math.Round(medianBy(xs, func(x *T) float64 { return float64(f(x)) })))
}

// Median is the median of xs (the mean of the middle two for an even
// count; 0 for none); xs is left as it is.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ratio(a, b float64) *float64 {
	if b == 0 {
		return nil
	}
	return ptr(math.Round(a/b*1000) / 1000)
}
