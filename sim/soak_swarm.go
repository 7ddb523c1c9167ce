package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
)

// The swarm generator (swarm testing, as TigerBeetle's VOPR does): each
// case first draws a shape — which fault kinds are on and how often,
// how partitions group hosts, whether faults cluster in time or fall at
// the end of the stream and in the drain, how often a second failure
// races the first one's takeover, the query, the strategy's parameters —
// and then draws its faults from that shape. A generator that draws every
// fault from one fixed mix visits the same middle of the space every run;
// a shape with loss alone, or partitions alone, or eight clustered faults,
// reaches corners the mix never does.

// Swarm generator tuning.
const (
	// soakSwarmTail is how far before the end of the stream a "tail"
	// fault may start (it may also start in the drain).
	soakSwarmTail = 300 * time.Millisecond
	// soakDetectWindow is the detection window: the detector timeout plus
	// one heartbeat. A second failure within it races the first one's
	// takeover.
	soakDetectWindow = 250 * time.Millisecond
)

// swarmQueries are the swarm's queries: the classic soak's five and
// longer or two-input shapes (a join feeding a window through a map, a
// union feeding a window, a four-fragment chain, a sliding window).
var swarmQueries = append(slices.Clone(soakQueries),
	soakQuery{"chain", 1, "[{name: A, ops: [{filter: {value_gt: 0.1}}]}, {name: B, ops: [{map: {scale: 2}}]}, {name: C, ops: [{tumbling: {size: 500ms, agg: sum}}]}, {name: D, ops: [{map: {scale: 1}}]}]"},
	soakQuery{"sliding", 1, "[{name: A, ops: [{map: {scale: 1}}]}, {name: B, ops: [{sliding: {size: 600ms, slide: 200ms, agg: count}}]}, {name: C, ops: [{map: {scale: 1}}]}]"},
	soakQuery{"join-chain", 2, "[{name: J, ops: [{join: {window: 300ms}}]}, {name: M, ops: [{map: {scale: 1}}]}, {name: W, ops: [{tumbling: {size: 500ms, agg: count}}]}]"},
	soakQuery{"union-window", 2, "[{name: U, ops: [{union: {}}]}, {name: W, ops: [{tumbling: {size: 500ms, agg: count}}]}]"},
)

// SwarmQueries names the swarm generator's queries.
func SwarmQueries() []string {
	out := make([]string, len(swarmQueries))
	for i, q := range swarmQueries {
		out[i] = q.name
	}
	return out
}

// swarmKinds are the fault kinds a shape weighs.
var swarmKinds = []string{"crash", "pause", "partition", "delay", "loss", "corrupt"}

// partition groupings a shape weighs.
const (
	groupOneHost = iota // one host against every other
	groupPair           // one host against one other (a single link cut)
	groupSeveral        // several hosts of different fragments against the rest
	groupSplit          // a fragment split: upstream part and some of its hosts | the rest
	groupRandom         // every host on a random side
	groupKinds
)

var groupNames = [groupKinds]string{"one-host", "pair", "group", "split", "random"}

// soakShape is what a swarm case draws first; its faults are drawn from it.
type soakShape struct {
	kinds    map[string]int  // weight per fault kind (0: off)
	groups   [groupKinds]int // weight per partition grouping
	faults   int             // number of faults to draw
	cluster  time.Duration   // > 0: every fault starts within this span
	tail     int             // percent of faults at the end of the stream or in the drain
	race     int             // percent of host failures raced by a second one
	around   int             // percent of pauses and partitions lasting about the detection time
	primary  int             // percent of host choices that take the initial primary
	lossP    float64         // loss probability of a loss fault
	longLoss bool            // loss lasts 0.5–2.5 s (else 30–820 ms)
	longPart bool            // partitions may last up to 1.5 s
}

// String is the shape in one line, for the experiment file's header.
func (s *soakShape) String() string {
	var kinds, groups []string
	for _, k := range swarmKinds {
		if s.kinds[k] > 0 {
			kinds = append(kinds, fmt.Sprintf("%s×%d", k, s.kinds[k]))
		}
	}
	for g, w := range s.groups {
		if w > 0 {
			groups = append(groups, fmt.Sprintf("%s×%d", groupNames[g], w))
		}
	}
	return fmt.Sprintf("faults %d [%s] partitions [%s] cluster %s tail %d%% race %d%% around-detection %d%% primary %d%% loss p=%g long=%t long-partitions=%t",
		s.faults, strings.Join(kinds, " "), strings.Join(groups, " "), s.cluster, s.tail, s.race, s.around, s.primary, s.lossP, s.longLoss, s.longPart)
}

// pickOf draws one of xs.
func pickOf[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// drawShape draws a shape: probabilities include 0 and the extremes.
func drawShape(r *rand.Rand) *soakShape {
	s := &soakShape{kinds: map[string]int{}}
	for _, k := range swarmKinds {
		if k == "corrupt" {
			s.kinds[k] = pickOf(r, 0, 0, 0, 0, 0, 1)
			continue
		}
		s.kinds[k] = pickOf(r, 0, 0, 1, 3, 9)
	}
	if s.kinds["crash"]+s.kinds["pause"]+s.kinds["partition"]+s.kinds["delay"]+s.kinds["loss"] == 0 {
		s.kinds[pickOf(r, "crash", "pause", "partition", "loss")] = 1
	}
	for g := range s.groups {
		s.groups[g] = pickOf(r, 0, 1, 3)
	}
	if s.groups == [groupKinds]int{} {
		s.groups[r.IntN(groupKinds)] = 1
	}
	s.faults = pickOf(r, 1, 1, 2, 2, 3, 4, 6, 8)
	if r.IntN(3) == 0 {
		s.cluster = time.Duration(pickOf(r, 20, 100, 300, 800)) * time.Millisecond
	}
	s.tail = pickOf(r, 0, 0, 0, 5, 20, 100)
	s.race = pickOf(r, 0, 0, 20, 60)
	s.around = pickOf(r, 0, 30, 80)
	s.primary = pickOf(r, 30, 60, 90, 100)
	s.lossP = pickOf(r, 0.05, 0.2, 0.5, 1)
	s.longPart = r.IntN(2) == 0
	s.longLoss = r.IntN(3) == 0
	return s
}

// weighted draws a key of w with probability proportional to its weight.
func weighted(r *rand.Rand, keys []string, w map[string]int) string {
	total := 0
	for _, k := range keys {
		total += w[k]
	}
	n := r.IntN(total)
	for _, k := range keys {
		if n < w[k] {
			return k
		}
		n -= w[k]
	}
	return keys[len(keys)-1]
}

// GenerateSwarmSoakCase draws case run of the swarm soak with seed for
// strategy: a shape, then a query, source, strategy parameters and the
// faults from the shape. The drain is long enough for the liveness bound
// after the last fault (SoakLivenessBound).
func GenerateSwarmSoakCase(seed uint64, strategy string, run uint64) (*SoakCase, error) {
	r := experiment.Seeded(seed, "swarm", strategy, strconv.FormatUint(run, 10))
	shape := drawShape(r)
	q := swarmQueries[r.IntN(len(swarmQueries))]
	e, st, err := drawSoakExperiment(r, soakDraw{prefix: "swarm", durBase: 2500, durSteps: 4, rateSteps: 6}, q, strategy, seed, run)
	if err != nil {
		return nil, err
	}
	g := &swarmGen{r: r, e: e, shape: shape}
	g.hosts(max(1, st.Replicas()))
	e.Faults = g.faults()
	// Unless the shape put a fault at the end of the stream, the stream
	// goes on after the last heal long enough for the liveness phase to
	// expect outputs from inputs the core can reach.
	if heal := lastHeal(e.Faults); !g.tailDrawn {
		if need := heal + SoakLivenessReach + spanOf(q.name) + 300*time.Millisecond; need > e.Duration.D() {
			e.Duration = experiment.Duration((need + 100*time.Millisecond - 1).Truncate(100 * time.Millisecond))
		}
	}
	// The liveness bound must fit in the run after the last fault heals.
	if need := lastHeal(e.Faults) + SoakLivenessBound; need > e.End() {
		e.Drain = experiment.Duration((need - e.Duration.D() + 100*time.Millisecond - 1).Truncate(100 * time.Millisecond))
	}
	e, err = reparse(e)
	if err != nil {
		return nil, fmt.Errorf("swarm case %s/%d/%d: %w", strategy, seed, run, err)
	}
	return &SoakCase{Strategy: strategy, Seed: seed, Run: run, Query: q.name, Shape: shape.String(), Experiment: e}, nil
}

// swarmGen draws one case's faults from its shape.
type swarmGen struct {
	r     *rand.Rand
	e     *experiment.Experiment
	shape *soakShape
	frags [][]string
	ends  []string // sources and sink
	all   []string
	t0    time.Duration // the cluster's start
	// tailDrawn reports whether a fault was put at the end of the stream.
	tailDrawn bool
}

func (g *swarmGen) hosts(replicas int) {
	for i := range g.e.Nodes {
		g.frags = append(g.frags, g.e.FragHosts(i, replicas))
	}
	g.ends = []string{"src"}
	if g.e.Source.Streams == 2 {
		g.ends = append(g.ends, "src2")
	}
	g.ends = append(g.ends, "sink")
	g.all = slices.Concat(append(slices.Clone(g.frags), g.ends)...)
}

// at draws a fault's start: anywhere from 200 ms to the end of the stream,
// within the cluster if the shape clusters, or at the end of the stream
// and in the first half second of the drain for tail faults.
func (g *swarmGen) at() time.Duration {
	r, dur := g.r, g.e.Duration.D()
	tenMs := func(lo, hi time.Duration) time.Duration {
		return lo + time.Duration(r.IntN(int((hi-lo)/(10*time.Millisecond))+1))*10*time.Millisecond
	}
	switch {
	case r.IntN(100) < g.shape.tail:
		g.tailDrawn = true
		return tenMs(dur-soakSwarmTail, dur+500*time.Millisecond)
	case g.shape.cluster > 0:
		return (g.t0 + time.Duration(r.Int64N(int64(g.shape.cluster)))).Truncate(time.Millisecond)
	case r.IntN(10) == 0:
		return tenMs(200*time.Millisecond, dur)
	}
	return tenMs(soakFirstFault, dur)
}

// host draws a host of fragment hs: the initial primary with the shape's
// bias, else its first backup or any other host.
func (g *swarmGen) host(hs []string) string {
	switch n := g.r.IntN(100); {
	case n < g.shape.primary:
		return hs[0]
	case n%2 == 0:
		return hs[1]
	}
	return hs[g.r.IntN(len(hs))]
}

// span draws how long a pause or partition lasts: about the detection time
// (within 70 ms of timeout + heartbeat) with the shape's share, else short
// (below any detection) or long.
func (g *swarmGen) span(long bool) time.Duration {
	r := g.r
	if r.IntN(100) < g.shape.around {
		return time.Duration(180+10*r.IntN(15)) * time.Millisecond
	}
	if r.IntN(2) == 0 {
		return time.Duration(20+10*r.IntN(13)) * time.Millisecond
	}
	if long {
		return time.Duration(300+50*r.IntN(25)) * time.Millisecond
	}
	return time.Duration(300+50*r.IntN(8)) * time.Millisecond
}

func (g *swarmGen) faults() []experiment.FaultConfig {
	r := g.r
	dur := g.e.Duration.D()
	g.t0 = soakFirstFault + time.Duration(r.Int64N(int64(dur-soakFirstFault)))
	var out []experiment.FaultConfig
	kinds := slices.Clone(swarmKinds)
	for len(out) < g.shape.faults {
		f := experiment.FaultConfig{At: experiment.Duration(g.at())}
		fi := r.IntN(len(g.frags))
		switch weighted(r, kinds, g.shape.kinds) {
		case "crash":
			f.Crash = g.host(g.frags[fi])
		case "pause":
			f.Pause, f.For = g.host(g.frags[fi]), experiment.Duration(g.span(true))
		case "partition":
			f.Partition, f.For = g.partition(fi), experiment.Duration(g.span(g.shape.longPart))
		case "delay":
			from, to := g.link()
			f.Delay, f.For = &experiment.LinkFault{From: from, To: to, Extra: ms(1 + r.IntN(300))}, ms(100+50*r.IntN(28))
		case "loss":
			from, to := g.link()
			f.Loss, f.For = &experiment.LinkFault{From: from, To: to, P: g.shape.lossP}, ms(30+10*r.IntN(80))
			if g.shape.longLoss {
				f.For = ms(500 + 50*r.IntN(41))
			}
		case "corrupt":
			f.Corrupt, f.For = &experiment.LinkFault{From: g.host(g.frags[fi]), P: float64(1+r.IntN(4)) / 4}, ms(100+10*r.IntN(50))
		}
		out = append(out, f)
		if (f.Crash != "" || f.Pause != "") && r.IntN(100) < g.shape.race {
			out = append(out, g.racer(f, fi))
		}
	}
	out = slices.DeleteFunc(out, func(f experiment.FaultConfig) bool { return f.At.D() >= g.e.End()-100*time.Millisecond })
	slices.SortStableFunc(out, func(a, b experiment.FaultConfig) int { return int(a.At - b.At) })
	return out
}

// racer is a second host failure soon after f's: of the host next in line
// in f's fragment within the detection window (it races the takeover), or
// of a neighbour fragment or any fragment within the detection window
// plus a recovery (it fails during f's recovery).
func (g *swarmGen) racer(f experiment.FaultConfig, fi int) experiment.FaultConfig {
	r := g.r
	h := f.Crash + f.Pause
	within := func(d time.Duration) experiment.Duration {
		return f.At + experiment.Duration(time.Duration(r.IntN(int(d/(10*time.Millisecond))+1))*10*time.Millisecond)
	}
	at := within(soakDetectWindow + 350*time.Millisecond)
	var target string
	switch n := r.IntN(3); {
	case n == 0:
		hs := g.frags[fi]
		target = hs[(slices.Index(hs, h)+1)%len(hs)]
		at = within(soakDetectWindow)
	case n == 1 && len(g.frags) > 1:
		nb := fi + 1
		if nb >= len(g.frags) || (fi > 0 && r.IntN(2) == 0) {
			nb = fi - 1
		}
		target = g.host(g.frags[nb])
	default:
		target = g.host(g.frags[r.IntN(len(g.frags))])
	}
	if r.IntN(3) == 0 {
		return experiment.FaultConfig{At: at, Pause: target, For: experiment.Duration(g.span(true))}
	}
	return experiment.FaultConfig{At: at, Crash: target}
}

// link draws a link fault's ends (empty = any host).
func (g *swarmGen) link() (string, string) {
	from, to := "", ""
	if g.r.IntN(3) != 0 {
		from = g.all[g.r.IntN(len(g.all))]
	}
	if g.r.IntN(3) != 0 {
		to = g.all[g.r.IntN(len(g.all))]
	}
	return from, to
}

// partition draws a partition's groups with the shape's grouping weights.
func (g *swarmGen) partition(fi int) [][]string {
	r := g.r
	total := 0
	for _, w := range g.shape.groups {
		total += w
	}
	kind, n := 0, r.IntN(total)
	for k, w := range g.shape.groups {
		if n < w {
			kind = k
			break
		}
		n -= w
	}
	rest := func(in []string) []string {
		return slices.DeleteFunc(slices.Clone(g.all), func(h string) bool { return slices.Contains(in, h) })
	}
	switch kind {
	case groupOneHost:
		h := g.host(g.frags[fi])
		return [][]string{{h}, rest([]string{h})}
	case groupPair:
		h := g.host(g.frags[fi])
		other := g.all[r.IntN(len(g.all))]
		if other == h {
			other = g.frags[fi][(slices.Index(g.frags[fi], h)+1)%len(g.frags[fi])]
		}
		return [][]string{{h}, {other}}
	case groupSeveral:
		// Two to four hosts, of different fragments, sometimes with an
		// end (a source or the sink), cut off from everyone else.
		var in []string
		for _, j := range r.Perm(len(g.frags))[:min(len(g.frags), 2+r.IntN(3))] {
			in = append(in, g.host(g.frags[j]))
		}
		if r.IntN(3) == 0 {
			in = append(in, g.ends[r.IntN(len(g.ends))])
		}
		if len(in) == 1 { // a one-fragment query: the fragment's host and a backup
			in = append(in, g.frags[fi][(slices.Index(g.frags[fi], in[0])+1)%len(g.frags[fi])])
		}
		return [][]string{in, rest(in)}
	case groupSplit:
		// The sources and the fragments upstream of fi with some of fi's
		// hosts, against the rest of fi's hosts, the fragments downstream
		// and the sink: {src, A*, B} | {B.1, B.2, C*, sink}.
		var up []string
		up = append(up, g.ends[:len(g.ends)-1]...)
		for j := range fi {
			up = append(up, g.frags[j]...)
		}
		hs := slices.Clone(g.frags[fi])
		r.Shuffle(len(hs), func(a, b int) { hs[a], hs[b] = hs[b], hs[a] })
		up = append(up, hs[:1+r.IntN(len(hs)-1)]...)
		return [][]string{up, rest(up)}
	default:
		var a, b []string
		for _, h := range g.all {
			if r.IntN(2) == 0 {
				a = append(a, h)
			} else {
				b = append(b, h)
			}
		}
		if len(a) == 0 || len(b) == 0 {
			h := g.host(g.frags[fi])
			return [][]string{{h}, rest([]string{h})}
		}
		return [][]string{a, b}
	}
}

// lastHeal is when the last fault of a schedule ends (a crash ends when it
// happens).
func lastHeal(faults []experiment.FaultConfig) time.Duration {
	var end time.Duration
	for _, f := range faults {
		end = max(end, f.At.D()+f.For.D())
	}
	return end
}

// The soak's generators.
const (
	// GeneratorSwarm draws a shape per case, then its faults (the default).
	GeneratorSwarm = "swarm"
	// GeneratorClassic draws every case from one fixed mix, seventeen in
	// twenty within the standby strategies' fault model.
	GeneratorClassic = "classic"
)

// Generators names the soak's generators.
func Generators() []string { return []string{GeneratorSwarm, GeneratorClassic} }

// GenerateSoakCaseWith draws case run with the named generator.
func GenerateSoakCaseWith(gen string, seed uint64, strategy string, run uint64) (*SoakCase, error) {
	switch gen {
	case GeneratorSwarm:
		return GenerateSwarmSoakCase(seed, strategy, run)
	case GeneratorClassic:
		return GenerateSoakCase(seed, strategy, run)
	}
	return nil, fmt.Errorf("soak generator %q: unknown (known: %s)", gen, strings.Join(Generators(), ", "))
}

// spanOf is the longest stretch of event time before an output's own
// event time that its inputs come from, per swarm query: a window's size
// (its output carries the window's end), a join's window, or both for a
// join feeding a window.
func spanOf(query string) time.Duration {
	switch query {
	case "convergent", "chain", "union-window":
		return 500 * time.Millisecond
	case "sliding":
		return 600 * time.Millisecond
	case "join", "join-chain":
		return 800 * time.Millisecond
	}
	return 0
}
