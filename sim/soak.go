package sim

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// The randomized fault soak: GenerateSoakCase draws a short experiment with
// a random fault schedule for one strategy, CheckSoakCase runs it and checks
// the invariants (soak_check.go), ShrinkSoakCase reduces a failing one to a
// minimal experiment (soak_shrink.go). Everything is a pure function of
// (soak seed, strategy, run index): a failure is reproduced from its
// experiment file alone.

// Soak tuning, shared by generation and the fault-model check.
const (
	// SoakRecoveryWindow is how long after a host failure (a crash, or the
	// end of a pause) a fragment needs before it can take the next one
	// within the fault model: detection (timeout + heartbeat phase ≤
	// 250 ms), the takeover, the replay and a full checkpoint or state
	// transfer to the new backup, with margin.
	SoakRecoveryWindow = 1500 * time.Millisecond
	// soakFirstFault is the earliest fault: the first checkpoints and
	// acknowledgements are in place by then.
	soakFirstFault = 500 * time.Millisecond
	// soakDrain is the drain of every soak run: enough for any in-model
	// recovery (replay and catch-up) to deliver everything.
	soakDrain = 2 * time.Second
)

// soakQuery is one query of the soak, per operator class.
type soakQuery struct {
	name    string
	streams int
	nodes   string // YAML flow list of nodes
}

// soakQueries cover every operator class: repeatable (filter, map),
// convergent-capable (tumbling window), deterministic (running sum), the
// two-input join, and arbitrary (union).
var soakQueries = []soakQuery{
	{"repeatable", 1, "[{name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}, {name: B, ops: [{map: {scale: 1}}]}]"},
	{"convergent", 1, "[{name: A, ops: [{filter: {value_gt: 0.1}}]}, {name: B, ops: [{tumbling: {size: 500ms, agg: sum}}]}, {name: C, ops: [{map: {scale: 1}}]}]"},
	{"deterministic", 1, "[{name: A, ops: [{map: {scale: 2}}]}, {name: B, ops: [{running_sum: {}}]}]"},
	{"join", 2, "[{name: J, ops: [{join: {window: 300ms}}]}, {name: W, ops: [{tumbling: {size: 500ms, agg: count}}]}]"},
	{"arbitrary", 2, "[{name: A, ops: [{union: {}}, {running_sum: {}}]}, {name: B, ops: [{map: {scale: 1}}]}]"},
}

// SoakQueries names the soak's queries.
func SoakQueries() []string {
	out := make([]string, len(soakQueries))
	for i, q := range soakQueries {
		out[i] = q.name
	}
	return out
}

// SoakStrategies are the strategies the soak exercises by default: every
// registered one with a soak draw (strategies.Soaked).
func SoakStrategies() []string { return strategies.Soaked() }

// SoakCase is one randomized soak run: an experiment with one strategy
// and a random fault schedule.
type SoakCase struct {
	// Strategy is the strategy under test (its parameters are in Experiment).
	Strategy string
	// Seed and Run identify the case: GenerateSoakCase(Seed, Strategy, Run).
	Seed uint64
	Run  uint64
	// Query is the name of the soak query.
	Query string
	// Shape is the swarm shape the faults were drawn from ("" for the
	// classic generator).
	Shape string
	// Planted re-introduces fixed protocol bugs (the soak's self-test and
	// the hidden --plant flag); zero in every real soak.
	Planted ha.Planted
	// HashTrace makes the check record the faulty run's trace hash
	// (SoakResult.TraceHash), for the determinism recheck.
	HashTrace bool
	// Experiment is the complete experiment, faults included.
	Experiment *experiment.Experiment
}

// ID names the case ("passive-standby/7/1234": strategy, soak seed, run).
func (c *SoakCase) ID() string { return fmt.Sprintf("%s/%d/%d", c.Strategy, c.Seed, c.Run) }

// soakParams draws the strategy parameters of a case with the strategy's
// own draw (strategies.Info.Soak); a strategy without one runs with its
// defaults.
func soakParams(r *rand.Rand, strategy string) map[string]any {
	p := map[string]any{}
	if info, err := strategies.Lookup(strategy); err == nil && info.Soak != nil {
		maps.Copy(p, info.Soak(r))
	}
	return p
}

// ms returns a Duration of a whole number of milliseconds.
func ms(v int) experiment.Duration { return experiment.Duration(time.Duration(v) * time.Millisecond) }

// soakDraw is what a soak generator varies in the experiments it draws:
// the name's prefix, the duration (durBase + 500 ms × 0..durSteps-1) and
// the rate (200 + 100 × 0..rateSteps-1 tuples/s).
type soakDraw struct {
	prefix                       string
	durBase, durSteps, rateSteps int
}

// drawSoakExperiment draws the experiment of one soak case, without
// faults: q's nodes, the strategy's parameters, the source and the
// network, in one fixed order of draws from r (a case is a pure function
// of its seed, strategy and run).
func drawSoakExperiment(r *rand.Rand, d soakDraw, q soakQuery, strategy string, seed, run uint64) (*experiment.Experiment, ha.Strategy, error) {
	var nodes []experiment.NodeConfig
	if err := yaml.Unmarshal([]byte(q.nodes), &nodes); err != nil {
		return nil, nil, fmt.Errorf("%s query %s: %w", d.prefix, q.name, err)
	}
	params := soakParams(r, strategy)
	st, err := strategies.Build(strategy, params)
	if err != nil {
		return nil, nil, err
	}
	spares := 2
	e := &experiment.Experiment{
		Name:     fmt.Sprintf("%s-%s-%d-%d", d.prefix, strategy, seed, run),
		Seed:     r.Uint64N(1 << 31),
		Duration: ms(d.durBase + 500*r.IntN(d.durSteps)),
		Drain:    experiment.Duration(soakDrain),
		Source: experiment.SourceConfig{Rate: float64(200 + 100*r.IntN(d.rateSteps)), Keys: 4 << r.IntN(4), Streams: q.streams,
			Value: experiment.ValueConfig{Dist: "uniform", Max: 1}},
		Nodes:    nodes,
		Strategy: experiment.StrategyConfig{Name: strategy, Params: params},
		Spares:   &spares,
		Network:  experiment.NetworkConfig{Latency: ms(1), Jitter: experiment.Duration(time.Duration(r.IntN(5)) * 100 * time.Microsecond), Bandwidth: 1e9},
		Detector: experiment.DetectorConfig{Heartbeat: ms(50), Timeout: ms(200)},
	}
	if r.IntN(4) == 0 {
		e.Source.Arrival = "poisson"
	}
	return e, st, nil
}

// GenerateSoakCase draws case run of the soak with seed for strategy: a
// query, source, network jitter, strategy parameters and 1–4 faults
// (crashes, crashes during a recovery, pauses, partitions, delays, losses
// and corruptions). Hosts are chosen among the hosts the strategy has.
func GenerateSoakCase(seed uint64, strategy string, run uint64) (*SoakCase, error) {
	r := experiment.Seeded(seed, "soak", strategy, strconv.FormatUint(run, 10))
	q := soakQueries[r.IntN(len(soakQueries))]
	e, st, err := drawSoakExperiment(r, soakDraw{prefix: "soak", durBase: 3000, durSteps: 5, rateSteps: 9}, q, strategy, seed, run)
	if err != nil {
		return nil, err
	}
	e.Faults = soakFaults(r, e, max(1, st.Replicas()))
	// Round-trip through YAML: the case is exactly what its file says.
	e, err = reparse(e)
	if err != nil {
		return nil, fmt.Errorf("soak case %s/%d/%d: %w", strategy, seed, run, err)
	}
	return &SoakCase{Strategy: strategy, Seed: seed, Run: run, Query: q.name, Experiment: e}, nil
}

// reparse writes e as YAML and parses it back (validating it).
func reparse(e *experiment.Experiment) (*experiment.Experiment, error) {
	b, err := yaml.Marshal(e)
	if err != nil {
		return nil, err
	}
	return experiment.Parse(b, e.Name)
}

// soakFaults draws the fault schedule.
func soakFaults(r *rand.Rand, e *experiment.Experiment, replicas int) []experiment.FaultConfig {
	var frags [][]string
	for i := range e.Nodes {
		frags = append(frags, e.FragHosts(i, replicas))
	}
	ends := []string{"src", "sink"}
	if e.Source.Streams == 2 {
		ends = append(ends, "src2")
	}
	all := slices.Concat(append(frags, ends)...)
	last := int(e.Duration.D()/time.Millisecond) - 300
	first := int(soakFirstFault / time.Millisecond)
	at := func() experiment.Duration { return ms(first + 10*r.IntN((last-first)/10)) }
	fragHost := func(hs []string) string {
		if r.IntN(10) < 6 {
			return hs[0] // the initial primary
		}
		return hs[1+r.IntN(len(hs)-1)]
	}
	link := func() (string, string) {
		from, to := "", ""
		if r.IntN(3) != 0 {
			from = all[r.IntN(len(all))]
		}
		if r.IntN(3) != 0 {
			to = all[r.IntN(len(all))]
		}
		return from, to
	}
	n := 1 + r.IntN(4)
	if r.IntN(20) < 17 {
		return modelFaults(r, e, frags, n, at, fragHost, link)
	}
	var out []experiment.FaultConfig
	var lastCrash *experiment.FaultConfig
	for len(out) < n {
		fi := r.IntN(len(frags))
		f := experiment.FaultConfig{At: at()}
		switch k := r.IntN(100); {
		case k < 18: // crash
			f.Crash = fragHost(frags[fi])
		case k < 30 && lastCrash != nil: // a crash during the recovery from the previous one
			f.At = lastCrash.At + ms(150+10*r.IntN(60))
			base, _, _ := strings.Cut(lastCrash.Crash, ".")
			hs := frags[slices.IndexFunc(e.Nodes, func(n experiment.NodeConfig) bool { return n.Name == base })]
			if r.IntN(3) == 0 {
				hs = frags[fi] // another fragment
			}
			f.Crash = hs[r.IntN(len(hs))]
		case k < 36: // back-to-back crashes of one fragment's hosts
			f.Crash = frags[fi][0]
			out = append(out, f)
			f = experiment.FaultConfig{At: f.At + ms(10*r.IntN(30)), Crash: frags[fi][1]}
		case k < 54: // pause, shorter or longer than the detector timeout
			f.Pause, f.For = fragHost(frags[fi]), ms(50+10*r.IntN(120))
		case k < 64: // partition of a fragment host from a neighbour
			h := fragHost(frags[fi])
			var other string
			switch r.IntN(4) {
			case 0:
				other = frags[fi][(slices.Index(frags[fi], h)+1)%len(frags[fi])] // its backup or next in line
			case 1:
				other = ends[r.IntN(len(ends))]
			default:
				other = all[r.IntN(len(all))]
			}
			if other == h {
				continue
			}
			f.Partition, f.For = [][]string{{h}, {other}}, ms(100+10*r.IntN(90))
		case k < 80:
			from, to := link()
			f.Delay, f.For = &experiment.LinkFault{From: from, To: to, Extra: ms(1 + r.IntN(200))}, ms(200+10*r.IntN(130))
		case k < 92:
			from, to := link()
			f.Loss, f.For = &experiment.LinkFault{From: from, To: to, P: float64(1+r.IntN(10)) / 20}, ms(100+10*r.IntN(70))
		default:
			h := fragHost(frags[fi])
			f.Corrupt, f.For = &experiment.LinkFault{From: h, P: float64(1+r.IntN(4)) / 4}, ms(200+10*r.IntN(80))
		}
		if f.Crash != "" {
			c := f
			lastCrash = &c
		}
		out = append(out, f)
	}
	end := e.Duration + e.Drain
	out = slices.DeleteFunc(out, func(f experiment.FaultConfig) bool { return f.At > end })
	slices.SortStableFunc(out, func(a, b experiment.FaultConfig) int { return int(a.At - b.At) })
	return out
}

// modelFaults draws n faults that tend to stay within the fault model of
// the standby strategies (17 cases in 20, so that the precise invariant
// is exercised on most runs): crashes — of one fragment, of adjacent
// fragments at once, of several fragments together —, pauses, partitions,
// delays and loss, each fragment's failures SoakRecoveryWindow apart.
func modelFaults(r *rand.Rand, e *experiment.Experiment, frags [][]string, n int, at func() experiment.Duration,
	fragHost func([]string) string, link func() (string, string)) []experiment.FaultConfig {
	var out []experiment.FaultConfig
	busy := make([][][2]experiment.Duration, len(frags)) // per fragment: failure intervals
	for tries := 0; len(out) < n && tries < 4*n; tries++ {
		fi := r.IntN(len(frags))
		f := experiment.FaultConfig{At: at()}
		switch k := r.IntN(100); {
		case k < 35:
			f.Crash = fragHost(frags[fi])
		case k < 45 && fi+1 < len(frags): // adjacent fragments within a few link latencies
			g := experiment.FaultConfig{At: f.At + ms(r.IntN(5)), Crash: fragHost(frags[fi+1])}
			if !fits(busy, fi+1, g) {
				continue
			}
			busy[fi+1] = append(busy[fi+1], [2]experiment.Duration{g.At, g.At})
			out = append(out, g)
			f.Crash = fragHost(frags[fi])
		case k < 65:
			f.Pause, f.For = fragHost(frags[fi]), ms(50+10*r.IntN(100))
		case k < 75: // a partition cutting one fragment host off, short or past the detection
			h := fragHost(frags[fi])
			var rest []string
			for _, x := range hostsForSoak(e, frags) {
				if x != h {
					rest = append(rest, x)
				}
			}
			f.Partition, f.For = [][]string{{h}, rest}, ms(50+10*r.IntN(50))
			if f.For.D() <= 150*time.Millisecond {
				out = append(out, f) // shorter than any detection: no failure
				continue
			}
		case k < 88:
			from, to := link()
			f.Delay, f.For = &experiment.LinkFault{From: from, To: to, Extra: ms(1 + r.IntN(200))}, ms(200+10*r.IntN(130))
			out = append(out, f)
			continue
		default:
			from, to := link()
			f.Loss, f.For = &experiment.LinkFault{From: from, To: to, P: float64(1+r.IntN(4)) / 20}, ms(100+10*r.IntN(70))
			out = append(out, f)
			continue
		}
		if !fits(busy, fi, f) {
			continue
		}
		busy[fi] = append(busy[fi], [2]experiment.Duration{f.At, f.At + f.For})
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b experiment.FaultConfig) int { return int(a.At - b.At) })
	return out
}

// fits reports whether failure f of fragment fi keeps SoakRecoveryWindow
// from the fragment's failures in busy.
func fits(busy [][][2]experiment.Duration, fi int, f experiment.FaultConfig) bool {
	w := experiment.Duration(SoakRecoveryWindow)
	return !slices.ContainsFunc(busy[fi], func(iv [2]experiment.Duration) bool { return f.At < iv[1]+w && iv[0] < f.At+f.For+w })
}

// hostsForSoak lists every host of a soak experiment: the fragments'
// hosts, the sources and the sink.
func hostsForSoak(e *experiment.Experiment, frags [][]string) []string {
	hs := slices.Concat(frags...)
	hs = append(hs, "src", "sink")
	if e.Source.Streams == 2 {
		hs = append(hs, "src2")
	}
	return hs
}
