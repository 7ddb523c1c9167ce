package why

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
)

// Story is the causal story of one output id.
type Story struct {
	ID       string `json:"id"`
	Strategy string `json:"strategy"`
	// Verdict is the classifier's: "correct", "duplicate", "wrong",
	// "spurious" or "missing" (the worst over the id's deliveries).
	Verdict string `json:"verdict"`
	// Summary is one sentence: what happened to the id and why.
	Summary string `json:"summary"`
	// Delivered are the id's deliveries in this run, Expected those of the
	// failure-free run.
	Delivered []Delivery `json:"delivered"`
	Expected  []Delivery `json:"expected"`
	// Lineage and RefLineage are the source tuples the first (expected:
	// the only) delivered copy reflects.
	Lineage    *Lineage `json:"lineage,omitempty"`
	RefLineage *Lineage `json:"ref_lineage,omitempty"`
	// Reordered is set when the copy reflects the same number of source
	// tuples as the failure-free one but has another value, and its id is
	// a step of a running aggregate (key#n): the first step of the key at
	// which the host that made the copy added another source tuple than
	// the failure-free run did, where its state of the key began to differ.
	Reordered *Reorder `json:"reordered,omitempty"`
	// Hops are every emit of the id on its way, in time order, with what
	// the next stage did with it; RefHops the same in the failure-free run.
	Hops    []Hop `json:"hops"`
	RefHops []Hop `json:"ref_hops"`
	// Events are the fault and recovery events on the id's path until its
	// last delivery (or the end of the run), repeated ones merged.
	Events []Context `json:"events"`
	// Counters are the end-of-run filter counters of the hosts on the path
	// (only those that are not zero).
	Counters []Counter `json:"counters,omitempty"`
	// Differences says, line by line, how the id differs from the
	// failure-free run.
	Differences []string `json:"differences"`

	pick   int     // the delivered copy the story is about
	madeBy string  // the host that made that copy (for a further copy: where it left the first one's path)
	madeAt float64 // when (ms)
}

// Delivery is one delivery of the id at the sink.
type Delivery struct {
	TMs     float64 `json:"t_ms"`
	Seq     uint64  `json:"seq"`
	Value   float64 `json:"value"`
	Sources int64   `json:"sources"`
	Status  string  `json:"status"`
	// From is the host whose emit this copy is (same seq, value and lineage).
	From string `json:"from,omitempty"`
}

// Hop is one emit of the id by a host.
type Hop struct {
	TMs     float64 `json:"t_ms"`
	Host    string  `json:"host"`
	Role    string  `json:"role"`
	Epoch   uint64  `json:"epoch"`
	Seq     uint64  `json:"seq"`
	Value   float64 `json:"value"`
	Sources int64   `json:"sources"`
	// Fate is what the next stage did with this copy: "delivered",
	// "accepted by B", "dropped by B as a duplicate seq (dup_dropped)",
	// "fenced by B (stale epoch)", "in an input gap of B", "not sent
	// (secondary)", "not delivered".
	Fate string `json:"fate"`
}

// Lineage names the source tuples a copy reflects.
type Lineage struct {
	Count int64 `json:"count"`
	// Range is set when the tuples are a contiguous run (in event time)
	// of the key's source tuples: First … Last.
	First  string  `json:"first,omitempty"`
	Last   string  `json:"last,omitempty"`
	FromMs float64 `json:"from_ms,omitempty"`
	ToMs   float64 `json:"to_ms,omitempty"`
	// Newest is, for a running aggregate (id key#n), the source tuple
	// added at this step: the lineage of key#n less that of key#(n-1).
	Newest string `json:"newest,omitempty"`
	// MadeBy is the host whose operator made this copy.
	MadeBy string `json:"made_by,omitempty"`
	// Ids are the tuples when known, in event-time order, and idT their
	// event times in ms.
	Ids []string `json:"-"`
	idT []float64
}

// Reorder is the first step of a key's running aggregate at which a host
// added another source tuple than the failure-free run.
type Reorder struct {
	ID        string  `json:"id"`   // the step, key#x
	TMs       float64 `json:"t_ms"` // when the host emitted it
	Host      string  `json:"host"`
	Newest    string  `json:"newest"`     // the source tuple the host added
	RefNewest string  `json:"ref_newest"` // the one the failure-free run added
}

// Context is a fault or recovery event (or a run of equal ones).
type Context struct {
	TMs   float64 `json:"t_ms"`
	Until float64 `json:"until_ms,omitempty"`
	Count int     `json:"count"`
	Kind  string  `json:"kind"`
	Text  string  `json:"text"`
}

// Counter is one non-zero end-of-run filter counter of a host.
type Counter struct {
	Host  string `json:"host"`
	Name  string `json:"name"` // dup_dropped, fenced_dropped, input_gaps
	Value int64  `json:"value"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// FirstWrong is the id of the first delivery the classifier labelled wrong.
func (r *Run) FirstWrong() (string, error) { return r.first(classify.StatusWrong, "wrong") }

// FirstDuplicate is the id of the first duplicate delivery.
func (r *Run) FirstDuplicate() (string, error) {
	return r.first(classify.StatusDuplicate, "duplicate")
}

func (r *Run) first(st classify.Status, name string) (string, error) {
	for i, s := range r.Classes.Status {
		if s == st {
			return r.obs.At(i).Tuple.ID.String(), nil
		}
	}
	return "", fmt.Errorf("%w: the %s run has no %s output (%s)", ErrUsage, r.Strategy, name, r.Recovery.Label())
}

// FirstMissing is the first expected id never delivered.
func (r *Run) FirstMissing() (string, error) {
	if len(r.Classes.MissingIDs) == 0 {
		return "", fmt.Errorf("%w: the %s run has no missing output (%s)", ErrUsage, r.Strategy, r.Recovery.Label())
	}
	return r.Classes.MissingIDs[0], nil
}

// Story tells the story of output id.
func (r *Run) Story(id string) (*Story, error) {
	st := &Story{ID: id, Strategy: r.Strategy, Hops: []Hop{}, RefHops: []Hop{}, Events: []Context{}, Differences: []string{}}
	var obsIdx []int
	for i, d := range r.obs.All() {
		if d.Tuple.ID.String() == id {
			obsIdx = append(obsIdx, i)
		}
	}
	var refIdx []int
	for i, d := range r.exp.All() {
		if d.Tuple.ID.String() == id {
			refIdx = append(refIdx, i)
		}
	}
	if len(obsIdx) == 0 && len(refIdx) == 0 {
		return nil, fmt.Errorf("%w: no output %q in either run of %s (ids look like k03|w=9s, k02#120 or s0:42; 'streamha why --first-wrong' or --missing starts from the first anomaly)", ErrUsage, id, r.Strategy)
	}
	frags := map[string]bool{}
	for _, f := range r.pipeline {
		frags[f] = true
	}
	fs, rs := scanTrace(r.Faulty, id, frags), scanTrace(r.Reference, id, frags)

	// Deliveries and the verdict.
	worst := "correct"
	rank := map[string]int{"correct": 0, "duplicate": 1, "spurious": 2, "wrong": 3, "missing": 4}
	for _, i := range obsIdx {
		d := r.obs.At(i)
		status := statusName(r.Classes.Status[i])
		if rank[status] > rank[worst] {
			worst = status
		}
		st.Delivered = append(st.Delivered, delivery(d, status, fs))
	}
	for _, i := range refIdx {
		st.Expected = append(st.Expected, delivery(r.exp.At(i), "expected", rs))
	}
	if len(obsIdx) == 0 {
		worst = "missing"
	}
	st.Verdict = worst

	// The copy in question: the first that is not correct, else the first.
	pick := 0
	for j, d := range st.Delivered {
		if d.Status != "correct" {
			pick = j
			break
		}
	}
	st.pick = pick
	// Lineages, from the inputs of the stage that made the id.
	if len(obsIdx) > 0 {
		d := r.obs.At(obsIdx[pick])
		host, t := r.maker(fs, d)
		st.Lineage = fs.lineage(d.Tuple.ID, d.Tuple.Lineage, host, r.upstream(host), t)
		st.madeBy, st.madeAt = host, ms(t)
		if pick > 0 {
			// A further copy: where its path leaves the first copy's.
			first := r.chain(fs, r.obs.At(obsIdx[0]))
			for _, e := range r.chain(fs, d) {
				if !slices.ContainsFunc(first, func(f emitted) bool { return f.host == e.host && f.t == e.t }) {
					st.madeBy, st.madeAt = e.host, ms(e.t)
					break
				}
			}
		}
	}
	if len(refIdx) > 0 {
		d := r.exp.At(refIdx[0])
		host, t := r.maker(rs, d)
		st.RefLineage = rs.lineage(d.Tuple.ID, d.Tuple.Lineage, host, r.upstream(host), t)
		if len(obsIdx) > 0 {
			st.Reordered = r.reordered(fs, rs, r.obs.At(obsIdx[pick]), d, host, t)
		}
	}

	// Hops and their fates.
	st.Hops = r.hops(fs, r.Faulty, r.obs)
	st.RefHops = r.hops(rs, r.Reference, r.exp)

	// Events on the path up to the last delivery (or the end).
	until := time.Duration(math.MaxInt64)
	if len(obsIdx) > 0 {
		until = r.obs.At(obsIdx[len(obsIdx)-1]).T
	}
	path := map[string]bool{}
	for _, h := range st.Hops {
		path[fragment(h.Host)] = true
		path[r.next(fragment(h.Host))] = true
	}
	for _, h := range st.RefHops {
		path[fragment(h.Host)] = true
		path[r.next(fragment(h.Host))] = true
	}
	st.Events = r.events(path, until)
	st.Counters = r.counters(path)
	st.Differences = differences(st)
	st.Summary = summary(st)
	return st, nil
}

// reordered finds where the state behind delivered copy d of a running
// aggregate began to differ from the one behind ref, the failure-free copy
// made by refHost at refT (nil unless d has ref's lineage count but
// another value).
func (r *Run) reordered(fs, rs *scan, d, ref ha.Delivery, refHost string, refT time.Duration) *Reorder {
	id := d.Tuple.ID
	if id.Kind != ha.IDKey || d.Tuple.Value == ref.Tuple.Value || d.Tuple.Lineage.N != ref.Tuple.Lineage.N {
		return nil
	}
	host, t := r.maker(fs, d)
	if host == "" || refHost == "" {
		return nil
	}
	ro, ok := firstReordered(id, fs, host, t, rs, refHost, refT)
	if !ok {
		return nil
	}
	return &ro
}

func statusName(s classify.Status) string {
	switch s {
	case classify.StatusDuplicate:
		return "duplicate"
	case classify.StatusWrong:
		return "wrong"
	case classify.StatusSpurious:
		return "spurious"
	}
	return "correct"
}

// delivery describes sink delivery d with its label and the host whose
// emit it is (a primary's when a secondary emitted the same tuple too).
func delivery(d ha.Delivery, status string, s *scan) Delivery {
	out := Delivery{TMs: ms(d.T), Seq: d.Tuple.Seq, Value: d.Tuple.Value, Sources: int64(d.Tuple.Lineage.N), Status: status}
	primary := false
	for _, h := range s.hops {
		if h.tup.Seq == d.Tuple.Seq && h.tup.Lineage == d.Tuple.Lineage && h.tup.Value == d.Tuple.Value && h.t <= d.T &&
			(h.role == "primary" || !primary) {
			out.From, primary = h.host, h.role == "primary"
		}
	}
	return out
}

// events lists the fault and recovery events of the path's hosts (and
// every fault) up to until, merging consecutive equal ones.
func (r *Run) events(path map[string]bool, until time.Duration) []Context {
	out := []Context{}
	for _, e := range r.Faulty.Events() {
		if e.T > until {
			break
		}
		text, ok := describe(e)
		if !ok {
			continue
		}
		fault := e.Kind == ha.EvCrash || e.Kind == ha.EvPause || e.Kind == ha.EvResume || e.Kind == ha.EvPartition || e.Kind == ha.EvHeal
		if !fault && !path[fragment(e.Host)] {
			continue
		}
		if n := len(out); n > 0 && e.Kind == ha.EvDetect && out[n-1].Kind == string(e.Kind) && strings.HasPrefix(out[n-1].Text, e.Peer+" declared dead by ") {
			out[n-1].Count++
			out[n-1].Until = ms(e.T)
			out[n-1].Text += ", " + e.Host
			continue
		}
		if n := len(out); n > 0 && out[n-1].Kind == string(e.Kind) && out[n-1].Text == text {
			out[n-1].Count++
			out[n-1].Until = ms(e.T)
			continue
		}
		out = append(out, Context{TMs: ms(e.T), Count: 1, Kind: string(e.Kind), Text: text})
	}
	return out
}

// describe phrases the events a story shows.
func describe(e ha.Event) (string, bool) {
	switch e.Kind {
	case ha.EvCrash:
		return "crash of " + e.Host, true
	case ha.EvPause:
		return fmt.Sprintf("%s paused for %s", e.Host, time.Duration(e.N)), true
	case ha.EvResume:
		return e.Host + " resumed", true
	case ha.EvPartition:
		return "partition " + e.Note, true
	case ha.EvHeal:
		return "partition healed", true
	case ha.EvDetect:
		return e.Peer + " declared dead by " + e.Host, true
	case ha.EvTakeover:
		return fmt.Sprintf("%s took over fragment %s from %s at epoch %d", e.Host, fragment(e.Host), e.Peer, e.Epoch), true
	case ha.EvRestore:
		return fmt.Sprintf("%s restored checkpoint %d", e.Host, e.Seq), true
	case ha.EvReplayStart:
		return fmt.Sprintf("%s replays to %s from seq %d", e.Host, e.Peer, e.Seq), true
	case ha.EvCaughtUp:
		return e.Host + " caught up", true
	case ha.EvFenced:
		if e.N > 0 {
			return fmt.Sprintf("%s dropped data of %s from stale epoch %d (fenced)", e.Host, e.Peer, e.Epoch), true
		}
		return fmt.Sprintf("%s fenced: %s", e.Host, e.Note), true
	case ha.EvGap:
		return fmt.Sprintf("%s saw an input gap from %s at seq %d (input_gap)", e.Host, e.Peer, e.Seq), true
	}
	return "", false
}

// counters lists the path hosts' non-zero filter counters.
func (r *Run) counters(path map[string]bool) []Counter {
	var out []Counter
	for _, e := range r.Faulty.Events() {
		if e.Kind != ha.EvStats || e.Stats == nil || !path[fragment(e.Host)] {
			continue
		}
		for _, c := range []Counter{{e.Host, "dup_dropped", e.Stats.Duplicates}, {e.Host, "fenced_dropped", e.Stats.Fenced}, {e.Host, "input_gaps", e.Stats.InputGaps}} {
			if c.Value != 0 {
				out = append(out, c)
			}
		}
	}
	return out
}

// differences compares the story with the failure-free run's.
func differences(st *Story) []string {
	out := []string{}
	switch {
	case len(st.Delivered) == 0 && len(st.Expected) > 0:
		out = append(out, fmt.Sprintf("never delivered; the failure-free run delivered it at %s s", seconds(st.Expected[0].TMs)))
	case len(st.Expected) == 0:
		out = append(out, "the failure-free run never delivers this id: it is spurious")
	}
	if len(st.Delivered) > 1 {
		out = append(out, fmt.Sprintf("delivered %d times (failure-free: %d)", len(st.Delivered), len(st.Expected)))
	}
	if len(st.Delivered) > 0 && len(st.Expected) > 0 {
		if d, e := st.Delivered[st.pick], st.Expected[0]; d.Sources != e.Sources {
			out = append(out, fmt.Sprintf("reflects %d source tuples instead of %d", d.Sources, e.Sources))
		}
	}
	if st.Lineage != nil && st.RefLineage != nil {
		out = append(out, lineageDiff(st.Lineage, st.RefLineage)...)
	}
	if ro := st.Reordered; ro != nil && ro.ID != st.ID {
		out = append(out, fmt.Sprintf("the same number of source tuples, another value: %s added the key's inputs in another order from %s on (at %s s it added %s where the failure-free run added %s), and this value depends on that order",
			ro.Host, ro.ID, seconds(ro.TMs), ro.Newest, ro.RefNewest))
	}
	if len(st.Delivered) > 0 && len(st.Expected) > 0 {
		d, e := st.Delivered[st.pick], st.Expected[0]
		if d.Value != e.Value {
			diff := d.Value - e.Value
			rel := math.Abs(diff) / math.Max(math.Abs(e.Value), math.SmallestNonzeroFloat64)
			out = append(out, fmt.Sprintf("value %s instead of %s: off by %s (relative error %.1e)%s",
				fmtF(d.Value), fmtF(e.Value), fmtF(diff), rel, roundingNote(rel)))
		}
		if l, rl := st.Lineage, st.RefLineage; l != nil && rl != nil && l.MadeBy != rl.MadeBy && l.MadeBy != "" && rl.MadeBy != "" {
			out = append(out, fmt.Sprintf("made by %s (failure-free: %s)", l.MadeBy, rl.MadeBy))
		}
		if d.From != e.From && d.From != "" && e.From != "" {
			out = append(out, fmt.Sprintf("emitted by %s (failure-free: %s)", d.From, e.From))
		}
		if dt := d.TMs - e.TMs; math.Abs(dt) >= 0.05 {
			what := "delivered"
			if d.Status == "duplicate" {
				what = "the extra copy came"
			}
			out = append(out, fmt.Sprintf("%s %.1f ms %s", what, math.Abs(dt), map[bool]string{true: "later", false: "earlier"}[dt > 0]))
		}
	}
	return out
}

// roundingNote says whether a relative error is within float rounding.
func roundingNote(rel float64) string {
	if rel < 1e-12 {
		return ": floating-point rounding — the same tuples added in another order"
	}
	return ""
}

func ids(xs []string) string {
	if len(xs) <= 4 {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:2], ", ") + ", …, " + xs[len(xs)-1]
}

// summary is the story in one sentence: the verdict, the first
// difference, who made the copy in question after which recovery step, and
// the filter decision that lost a copy.
func summary(st *Story) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s under %s is %s", st.ID, st.Strategy, st.Verdict)
	if st.Verdict == "correct" {
		if len(st.Differences) > 0 {
			fmt.Fprintf(&b, " (only %s)", st.Differences[0])
		}
		return b.String()
	}
	if len(st.Differences) > 0 {
		fmt.Fprintf(&b, ": %s", st.Differences[0])
	}
	if st.madeBy != "" {
		verb := "made"
		if st.pick > 0 {
			verb = "emitted again"
		}
		fmt.Fprintf(&b, "; this copy was %s by %s at %s s", verb, st.madeBy, seconds(st.madeAt))
		if e := lastRecoveryBefore(st.Events, st.madeAt); e != nil {
			fmt.Fprintf(&b, ", after %q at %s s", e.Text, seconds(e.TMs))
		}
	}
	for _, h := range st.Hops {
		if strings.Contains(h.Fate, "duplicate") || strings.Contains(h.Fate, "fenced") || strings.Contains(h.Fate, "input gap") || h.Fate == "not delivered" {
			fmt.Fprintf(&b, "; %s's copy (seq %d, epoch %d) was %s", h.Host, h.Seq, h.Epoch, h.Fate)
			break
		}
	}
	return b.String()
}

// lastRecoveryBefore is the latest takeover, restore or replay at or
// before t.
func lastRecoveryBefore(evs []Context, t float64) *Context {
	var last *Context
	for i := range evs {
		switch ha.EventKind(evs[i].Kind) {
		case ha.EvTakeover, ha.EvRestore, ha.EvReplayStart:
			if evs[i].TMs <= t {
				last = &evs[i]
			}
		}
	}
	return last
}

func seconds(msv float64) string { return strconv.FormatFloat(msv/1000, 'f', 3, 64) }

// fmtF formats a value exactly: an integer below 2^53 in full (a
// hash_chain head reads as the integer it is), anything else shortest.
func fmtF(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
