package labs

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/why"

	_ "github.com/streamha/streamha/activestandby"
	_ "github.com/streamha/streamha/passivestandby"
	_ "github.com/streamha/streamha/upstreambackup"
)

// The tests below assert, lab by lab, every claim the handout and the
// teacher's notes make about the runs they describe. They share the
// simulations of the checks (simulate runs each once per process); the
// stories come from `streamha why`'s package.

func get(t *testing.T, n int) *Lab {
	t.Helper()
	l, err := Get(n)
	require.NoError(t, err)
	return l
}

func simulated(t *testing.T, l *Lab, file, strategy string) *run {
	t.Helper()
	r, err := l.simulate(file, strategy)
	require.NoError(t, err)
	return r
}

func story(t *testing.T, l *Lab, file, strategy string, pick func(*why.Run) (string, error)) *why.Story {
	t.Helper()
	e, err := l.experiment(file)
	require.NoError(t, err)
	r, err := why.Rerun(e, strategy)
	require.NoError(t, err)
	id, err := pick(r)
	require.NoError(t, err)
	st, err := r.Story(id)
	require.NoError(t, err)
	return st
}

// kinds are the kinds of the events of a trace with host (any host when "").
func kinds(tr *ha.Trace, host string) []ha.EventKind {
	var out []ha.EventKind
	for _, e := range tr.Events() {
		if host == "" || e.Host == host {
			out = append(out, e.Kind)
		}
	}
	return out
}

func TestLab1Claims(t *testing.T) {
	t.Parallel()
	l := get(t, 1)
	e, err := l.experiment("experiment.yaml")
	require.NoError(t, err)
	// src → A (filter) → B (1 s tumbling-window sum per key) → C (map) → sink
	chain := opChain(e)
	assert.Equal(t, []string{"A:filter", "B:tumbling", "C:map"}, chain)
	r := simulated(t, l, "experiment.yaml", "amnesia")
	// Amnesia restarts the fragment on a spare: a takeover by B.1 after B's crash.
	assert.Contains(t, kinds(r.sr.Trace, "B"), ha.EvCrash)
	assert.Contains(t, kinds(r.sr.Trace, "B.1"), ha.EvTakeover)
	assert.Contains(t, kinds(r.sr.Trace, ""), ha.EvDetect)
	// Every explanation says how many inputs were lost, and the
	// sentences together tell every damaged output (one each, or "N
	// outputs of window …" for a group).
	rec := r.rec()
	told := 0
	for _, x := range rec.Explanations {
		assert.Regexp(t, `\(\d+ inputs lost\)`, x)
		if m := regexp.MustCompile(`^(\d+) outputs `).FindStringSubmatch(x); m != nil {
			n, _ := strconv.Atoi(m[1])
			told += n
		} else {
			told++
		}
	}
	require.Equal(t, rec.Wrong+rec.Missing, told)
	// why --first-wrong: the tuples it reflects and lacks, with event
	// times, the host that made it, the crash, detection and takeover.
	st := story(t, l, "experiment.yaml", "amnesia", (*why.Run).FirstWrong)
	require.NotNil(t, st.Lineage)
	assert.NotEmpty(t, st.Lineage.First)
	assert.Equal(t, "B.1", st.Lineage.MadeBy)
	assert.True(t, slices.ContainsFunc(st.Differences, func(d string) bool { return strings.HasPrefix(d, "lacks ") && strings.Contains(d, "event times") }))
	var evs []string
	for _, e := range st.Events {
		evs = append(evs, e.Kind)
	}
	assert.Subset(t, evs, []string{"crash", "detect", "takeover"})
	// Teacher's notes: one wrong output per key, nothing missing; the
	// lacking tuples end where B.1 took over.
	assert.Equal(t, 0, rec.Missing)
	keys := map[string]bool{}
	for _, id := range r.statusIDs(classify.StatusWrong) {
		k, _, _ := strings.Cut(id, "|")
		keys[k] = true
	}
	assert.Len(t, keys, rec.Wrong)
}

func TestLab2Claims(t *testing.T) {
	t.Parallel()
	l := get(t, 2)
	r := simulated(t, l, "experiment.yaml", "upstream-backup")
	assert.Positive(t, r.replayed("A"), "A replays its queue")
	assert.Contains(t, kinds(r.sr.Trace, "A"), ha.EvTrim, "the trace has A's trim events")
	assert.Equal(t, "rollback/repeating", r.label())
	for _, x := range r.rec().Explanations {
		if !strings.HasPrefix(x, "…") {
			assert.Regexp(t, `^(output \S+ emitted twice: at .* and at |\d+ outputs emitted twice, repeated at .* after the replay of \d+ tuples from A to B\.1)`, x)
		}
	}
	d := simulated(t, l, "experiment-dedup.yaml", "upstream-backup")
	assert.Equal(t, "precise", d.label())
	// The duplicates are fewer than the replayed tuples (the handout's
	// discussion question takes it as given).
	assert.Less(t, int64(r.rec().Duplicates), r.replayed("A"))
	// why --first-duplicate: both copies, the host of the second (the
	// restarted B numbers its output afresh) and the replay.
	st := story(t, l, "experiment.yaml", "upstream-backup", (*why.Run).FirstDuplicate)
	require.Len(t, st.Delivered, 2)
	assert.Contains(t, st.Summary, "emitted again by B.1")
	assert.Contains(t, st.Summary, "A replays to B.1")
	var bSeq, b1Seq uint64
	for _, h := range st.Hops {
		switch h.Host {
		case "B":
			bSeq = h.Seq
		case "B.1":
			b1Seq = h.Seq
		}
	}
	assert.Less(t, b1Seq, bSeq, "B.1 numbers its output afresh")
}

func TestLab3Claims(t *testing.T) {
	t.Parallel()
	l := get(t, 3)
	assert.Len(t, Lab3Intervals, 6)
	assert.Len(t, Lab3CrashTimes, 10, "60 points")
	pts, err := lab3Sweep(l)
	require.NoError(t, err)
	first, last := pts[0], pts[len(pts)-1]
	assert.Greater(t, first.cpuPct, last.cpuPct, "the failure-free overhead shrinks with the interval")
	assert.Greater(t, last.addedMs, first.addedMs, "the expected recovery grows with the interval")
	// The cost has a minimum inside the range that stands out of the
	// noise: both neighbours cost more than two standard errors more.
	best := 0
	for i, p := range pts {
		if p.cost < pts[best].cost {
			best = i
		}
	}
	require.Greater(t, best, 0, "the minimum is not at the smallest interval")
	require.Less(t, best, len(pts)-1, "the minimum is not at the largest interval")
	for _, n := range []lab3Point{pts[best-1], pts[best+1]} {
		noise := 2 * math.Hypot(pts[best].addedSE, n.addedSE) / 10
		assert.Greater(t, n.cost-pts[best].cost, noise, "%s's cost stands above the minimum at %s by more than the noise", n.interval, pts[best].interval)
	}
	// Every crash phase gives its own point: the ten added latencies of
	// an interval are not all equal.
	for _, p := range pts {
		assert.Positive(t, p.addedSE, "%s: the crash times fall at different phases", p.interval)
	}
}

func TestLab4Claims(t *testing.T) {
	t.Parallel()
	l := get(t, 4)
	e, err := l.experiment("experiment.yaml")
	require.NoError(t, err)
	chain := opChain(e)
	assert.Equal(t, []string{"A:union", "A:hash_chain", "B:map"}, chain)
	assert.Equal(t, 2, e.Source.Streams)

	r := simulated(t, l, "experiment.yaml", "active-standby")
	assert.Equal(t, "rollback/divergent", r.label(), "the chains never coincide again")
	require.Positive(t, r.rec().Wrong)
	assert.Equal(t, 0, r.rec().Missing, "no input is lost")
	assert.Equal(t, int64(0), r.rec().LostInputs)
	// Wrong to the end of the run: every key's last delivery is wrong, and
	// every wrong value is an exact integer below 2^52 far from the right one.
	tail := lab4TailOf(r)
	assert.NotEmpty(t, tail.stillWrongKeys)
	assert.Equal(t, ms(r.obs.At(r.obs.Len()-1).T), tail.lastWrongMs, "the run's last delivery is wrong")
	assert.Greater(t, tail.minDiff, 1.0, "a semantic difference, not rounding")
	for i, s := range r.cls.Status {
		if s == classify.StatusWrong {
			v := r.obs.At(i).Tuple.Value
			require.Equal(t, math.Trunc(v), v)
			require.Less(t, v, float64(1<<52))
		}
	}
	// The explanation the handout quotes, and A.1's replay to B.
	require.NotEmpty(t, r.cls.Explanations)
	assert.Contains(t, r.cls.Explanations[0], "outputs wrong, delivered at ")
	assert.True(t, slices.ContainsFunc(r.sr.Trace.Events(), func(e ha.Event) bool {
		return e.Kind == ha.EvReplayStart && e.Host == "A.1" && e.Peer == "B" && e.N > 0
	}), "A.1 replays to B what B has not acknowledged")

	// why --first-wrong: made by A.1, brought to B by its replay after the
	// takeover; the same number of source tuples, and the step at which
	// A.1's chain of the key first took another input lies inside the delay.
	st := story(t, l, "experiment.yaml", "active-standby", (*why.Run).FirstWrong)
	require.NotNil(t, st.Lineage)
	require.NotNil(t, st.RefLineage)
	assert.Equal(t, st.RefLineage.Count, st.Lineage.Count)
	assert.Equal(t, "A.1", st.Lineage.MadeBy)
	assert.Equal(t, "A", st.RefLineage.MadeBy)
	assert.True(t, slices.ContainsFunc(st.Hops, func(h why.Hop) bool { return h.Host == "A.1" && strings.Contains(h.Fate, "replay to B") }))
	assert.True(t, slices.ContainsFunc(st.Events, func(e why.Context) bool { return e.Kind == "takeover" && strings.HasPrefix(e.Text, "A.1 ") }))
	require.NotNil(t, st.Reordered)
	assert.Equal(t, "A.1", st.Reordered.Host)
	assert.NotEqual(t, st.ID, st.Reordered.ID, "the step lies before the delivery")
	assert.True(t, slices.ContainsFunc(st.Differences, func(d string) bool { return strings.Contains(d, "in another order from "+st.Reordered.ID+" on") }))
	ro, err := lab4Reordered(l)
	require.NoError(t, err)
	assert.Equal(t, st.Reordered, ro, "the check's q4 is what why shows")

	// The delay ends before the crash.
	var delayStart, delayEnd, crash time.Duration
	for _, f := range e.Faults {
		switch {
		case f.Delay != nil:
			assert.Equal(t, "A.1", f.Delay.To)
			delayStart, delayEnd = time.Duration(f.At), time.Duration(f.At)+time.Duration(f.For)
		case f.Crash != "":
			assert.Equal(t, "A", f.Crash)
			crash = time.Duration(f.At)
		}
	}
	assert.Less(t, delayEnd, crash)
	assert.GreaterOrEqual(t, st.Reordered.TMs, ms(delayStart))
	assert.Less(t, st.Reordered.TMs, ms(delayEnd))

	s := simulated(t, l, "experiment-ship.yaml", "active-standby")
	assert.Equal(t, "precise", s.label())
	assert.Greater(t, *s.sr.Run.Overhead.MessagesRatio, *r.sr.Run.Overhead.MessagesRatio, "shipping costs messages")

	// The discussion's variants. A running sum forgets the order once both
	// tuples are in: the same run is precise. A restored passive backup
	// merges the two replays by event time, the live order on a network
	// without jitter (precise, logged or not); with jitter the live order
	// differs and the chain keeps the difference (divergent, logged or not:
	// the input A never processed is merged by event time).
	b, err := l.File("experiment.yaml")
	require.NoError(t, err)
	variant := func(name, from, to, strategy string) string {
		t.Helper()
		e, err := experiment.Parse([]byte(strings.Replace(string(b), from, to, 1)), name)
		require.NoError(t, err)
		cmp, err := sim.Compare(e, []string{strategy})
		require.NoError(t, err)
		return cmp.Runs[0].Run.Recovery.Label()
	}
	const as = "strategy: {name: active-standby, ship_decisions: false}"
	assert.Equal(t, "precise", variant("running-sum", "{hash_chain: {}}", "{running_sum: {}}", "active-standby"))
	const ps, psLogged = "strategy: {name: passive-standby}", "strategy: {name: passive-standby, log_nondeterminism: true}"
	assert.Equal(t, "precise", variant("passive", as, ps, "passive-standby"))
	assert.Equal(t, "precise", variant("passive-logged", as, psLogged, "passive-standby"))
	jitter := func(name, to string) string {
		t.Helper()
		y := strings.Replace(strings.Replace(string(b), as, to, 1), "jitter: 0s", "jitter: 300us", 1)
		require.NotEqual(t, string(b), y)
		e, err := experiment.Parse([]byte(y), name)
		require.NoError(t, err)
		cmp, err := sim.Compare(e, []string{"passive-standby"})
		require.NoError(t, err)
		return cmp.Runs[0].Run.Recovery.Label()
	}
	assert.Equal(t, "rollback/divergent", jitter("passive-jitter", ps))
	assert.Equal(t, "rollback/divergent", jitter("passive-logged-jitter", psLogged))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func TestLab6Claims(t *testing.T) {
	t.Parallel()
	r := simulated(t, get(t, 6), "experiment.yaml", Lab6Strategy)
	assert.NotNil(t, r.rec().RecoveryMs, "the simulated run recovers")
	assert.NotNil(t, r.rec().DetectionMs)
}

func TestLab7Claims(t *testing.T) {
	t.Parallel()
	l := get(t, 7)
	on := simulated(t, l, "experiment.yaml", "amnesia")
	off := simulated(t, l, "experiment-nofence.yaml", "amnesia")
	for _, r := range []*run{on, off} {
		k := kinds(r.sr.Trace, "")
		assert.Contains(t, k, ha.EvPause)
		assert.Contains(t, k, ha.EvResume)
		assert.NotContains(t, k, ha.EvCrash, "B was only paused")
		var epoch uint64
		for _, e := range r.sr.Trace.Events() {
			if e.Kind == ha.EvTakeover && e.Host == "B.1" {
				epoch = e.Epoch
			}
		}
		assert.Positive(t, epoch, "B.1 takes over at a new epoch")
		// B learns it was superseded, with or without fencing.
		assert.True(t, slices.ContainsFunc(r.sr.Trace.Events(), func(e ha.Event) bool {
			return e.Kind == ha.EvFenced && e.Host == "B" && strings.Contains(e.Note, "superseded")
		}))
		// Both experiments run long enough for the output to come back.
		assert.False(t, r.rec().NotRecovered)
		assert.NotNil(t, r.rec().RecoveryMs)
	}
	// With fencing, C's epoch check drops B's stale data: a fenced event
	// of C per message, counted in C's fenced_dropped.
	fencedC := 0
	for _, e := range on.sr.Trace.Events() {
		if e.Kind == ha.EvFenced && e.Host == "C" && e.Peer == "B" && e.N > 0 {
			fencedC++
		}
	}
	assert.Positive(t, fencedC)
	assert.Equal(t, int64(fencedC), hostStat(on.sr.Trace, "C", func(s *ha.NodeStats) int64 { return s.Fenced }))
	// Without: C accepts B's numbering, drops B.1's lower seqs as
	// duplicates and traces an input gap where the numberings meet.
	assert.Zero(t, hostStat(off.sr.Trace, "C", func(s *ha.NodeStats) int64 { return s.Fenced }))
	assert.Positive(t, hostStat(off.sr.Trace, "C", func(s *ha.NodeStats) int64 { return s.Duplicates }))
	assert.Contains(t, kinds(off.sr.Trace, "C"), ha.EvGap)
	assert.Greater(t, off.rec().Missing, on.rec().Missing)
	// The output comes back when B.1's numbering passes the last seq C
	// accepted from B: the first output after the silence is B.1's, and
	// B.1's output just before it was dropped by C as a duplicate of a
	// seq it had accepted from B.
	e, err := l.experiment("experiment-nofence.yaml")
	require.NoError(t, err)
	wr, err := why.Rerun(e, "amnesia")
	require.NoError(t, err)
	var resumed time.Duration
	for _, ev := range wr.Faulty.Events() {
		if ev.Kind == ha.EvResume && ev.Host == "B" {
			resumed = ev.T
		}
	}
	require.Positive(t, resumed)
	var first ha.Delivery
	for _, d := range off.obs.All() {
		if d.T > resumed+time.Duration(off.rec().UnavailableMs*float64(time.Millisecond))/2 {
			first = d
			break
		}
	}
	require.NotZero(t, first.T, "the output comes back within the run")
	back, err := wr.Story(first.Tuple.ID.String())
	require.NoError(t, err)
	var seq uint64
	for _, h := range back.Hops {
		if h.Host == "B.1" {
			seq = h.Seq
			assert.Equal(t, "accepted by C", h.Fate)
		}
	}
	require.Positive(t, seq, "the first output back is B.1's")
	var before string
	for _, ev := range wr.Faulty.Events() {
		if ev.Kind == ha.EvEmit && ev.Host == "B.1" && ev.Seq == seq-1 {
			before = ev.Tuple.ID.String()
		}
	}
	prev, err := wr.Story(before)
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(prev.Hops, func(h why.Hop) bool {
		return h.Host == "B.1" && h.Seq == seq-1 && strings.Contains(h.Fate, "duplicate seq") && strings.Contains(h.Fate, "from B (")
	}), "B.1's previous output was dropped as a duplicate of B's numbering: %+v", prev.Hops)
	// why --missing: B.1's copy dropped by C as a duplicate seq.
	st := story(t, l, "experiment-nofence.yaml", "amnesia", (*why.Run).FirstMissing)
	assert.Contains(t, st.Summary, "B.1's copy")
	assert.Contains(t, st.Summary, "dropped by C as a duplicate seq")
}

// opChain lists e's operators as fragment:operator in chain order.
func opChain(e *experiment.Experiment) []string {
	var chain []string
	for _, n := range e.Nodes {
		for _, op := range n.Ops {
			for name := range op {
				chain = append(chain, n.Name+":"+name)
			}
		}
	}
	return chain
}

// TestLab3SweepFileIsTheChecksSweep checks that the sweep the handout
// runs (sweep.yaml) is the one the check computes.
func TestLab3SweepFileIsTheChecksSweep(t *testing.T) {
	l := get(t, 3)
	b, err := l.File("sweep.yaml")
	require.NoError(t, err)
	spec, err := experiment.ParseSweepFile(b, "sweep.yaml")
	require.NoError(t, err)
	require.Len(t, spec.Params, 2)
	assert.Equal(t, "experiment.yaml", spec.Experiment)
	assert.Equal(t, "checkpoint_interval", spec.Params[0].Name)
	assert.Equal(t, Lab3Intervals, spec.Params[0].Values)
	assert.Equal(t, "faults[0].at", spec.Params[1].Name)
	assert.Equal(t, Lab3CrashTimes, spec.Params[1].Values)
}
