package why

import (
	"fmt"
	"time"

	"github.com/streamha/streamha/ha"
)

// emitted is one EvEmit of a trace.
type emitted struct {
	t     time.Duration
	host  string
	role  string
	epoch uint64
	tup   ha.Tuple
}

// scan is what one trace says about an id.
type scan struct {
	hops []emitted
	prev []emitted // emits of key#(n-1), for a running aggregate
	// steps are, for a running aggregate (id key#n), every emit of the
	// key's earlier steps key#1 … key#n by host, in time order.
	steps   map[string][]emitted
	sources map[uint64]emitted
	// single are, per fragment and key, the single-source tuples its hosts
	// emitted (each once, in emit order): the inputs of the next stage.
	single map[string]map[uint32][]emitted
	frag   map[string][]emitted // every emit by fragment, in order (fates)
}

// scanTrace collects the emits of id (and of the step before it, for a
// running aggregate), the source tuples by lineage hash, the single-source
// inputs of each fragment, and every emit of the fragments in wantFrags.
func scanTrace(tr *ha.Trace, id string, wantFrags map[string]bool) *scan {
	s := &scan{sources: map[uint64]emitted{}, single: map[string]map[uint32][]emitted{}, frag: map[string][]emitted{}, steps: map[string][]emitted{}}
	seen := map[string]map[uint64]bool{}
	var prevID string
	for _, e := range tr.Events() {
		if e.Kind != ha.EvEmit || e.Tuple == nil {
			continue
		}
		em := emitted{t: e.T, host: e.Host, role: e.Note, epoch: e.Epoch, tup: *e.Tuple}
		f := fragment(e.Host)
		if e.Note == "source" {
			s.sources[e.Tuple.Lineage.Hash] = em
		}
		if e.Tuple.Lineage.N == 1 && !seen[f][e.Tuple.Lineage.Hash] {
			if seen[f] == nil {
				seen[f], s.single[f] = map[uint64]bool{}, map[uint32][]emitted{}
			}
			seen[f][e.Tuple.Lineage.Hash] = true
			s.single[f][e.Tuple.Key] = append(s.single[f][e.Tuple.Key], em)
		}
		if wantFrags[f] {
			s.frag[f] = append(s.frag[f], em)
		}
		tid := e.Tuple.ID.String()
		if tid == id {
			s.hops = append(s.hops, em)
			if e.Tuple.ID.Kind == ha.IDKey && prevID == "" {
				p := e.Tuple.ID
				p.X--
				prevID = p.String()
			}
		}
	}
	if prevID != "" {
		want := s.hops[0].tup.ID
		for _, e := range tr.Events() {
			if e.Kind != ha.EvEmit || e.Tuple == nil {
				continue
			}
			if e.Tuple.ID.String() == prevID {
				s.prev = append(s.prev, emitted{t: e.T, host: e.Host, tup: *e.Tuple})
			}
			if got := e.Tuple.ID; got.Kind == ha.IDKey && got.Key == want.Key && got.X <= want.X {
				s.steps[e.Host] = append(s.steps[e.Host], emitted{t: e.T, host: e.Host, tup: *e.Tuple})
			}
		}
	}
	return s
}

// newestByStep is, for the running aggregate of id's key at host, the
// source tuple each step key#x added (x = 1 … id's X), from the host's
// latest emits of the steps at or before t: its lineage less the previous
// step's. A step whose input cannot be told (the host did not emit the step
// before, as after a restore) is "".
func (s *scan) newestByStep(id ha.OutputID, host string, t time.Duration) []string {
	byX := make([]*emitted, id.X+1)
	for i := range s.steps[host] {
		e := &s.steps[host][i]
		if e.t <= t {
			byX[e.tup.ID.X] = e
		}
	}
	out := make([]string, id.X+1)
	for x := int64(1); x <= id.X; x++ {
		cur := byX[x]
		if cur == nil {
			continue
		}
		var prev ha.Lineage
		if x > 1 {
			if byX[x-1] == nil {
				continue
			}
			prev = byX[x-1].tup.Lineage
		}
		if cur.tup.Lineage.N != prev.N+1 {
			continue
		}
		if src, ok := s.sources[cur.tup.Lineage.Hash-prev.Hash]; ok {
			out[x] = src.tup.ID.String()
		}
	}
	return out
}

// firstReordered is the first step of id's key at which host (up to t) and
// refHost in the reference (up to refT) added different source tuples:
// where the host's state of the key started to differ. ok is false when
// every step both can tell agrees.
func firstReordered(id ha.OutputID, fs *scan, host string, t time.Duration, rs *scan, refHost string, refT time.Duration) (Reorder, bool) {
	got, want := fs.newestByStep(id, host, t), rs.newestByStep(id, refHost, refT)
	for x := int64(1); x <= id.X; x++ {
		if got[x] == "" || want[x] == "" || got[x] == want[x] {
			continue
		}
		r := Reorder{ID: ha.OutputID{Kind: ha.IDKey, Key: id.Key, X: x}.String(), Host: host, Newest: got[x], RefNewest: want[x]}
		for _, e := range fs.steps[host] {
			if e.tup.ID.X == x && e.t <= t {
				r.TMs = ms(e.t)
			}
		}
		return r, true
	}
	return Reorder{}, false
}

// lineage identifies the source tuples of lin, a copy of id emitted by
// host at t whose inputs came from fragment up.
func (s *scan) lineage(id ha.OutputID, lin ha.Lineage, host, up string, t time.Duration) *Lineage {
	l := &Lineage{Count: int64(lin.N), MadeBy: host}
	if lin.N == 0 {
		return l
	}
	if lin.N == 1 {
		if src, ok := s.sources[lin.Hash]; ok {
			l.First, l.Last = src.tup.ID.String(), src.tup.ID.String()
			l.FromMs, l.ToMs = ms(time.Duration(src.tup.Time)), ms(time.Duration(src.tup.Time))
			l.Ids, l.idT = []string{l.First}, []float64{l.FromMs}
		}
		return l
	}
	// A contiguous run of the key's input tuples: prefix sums of their
	// lineage hashes find it in one pass for a given length.
	list := s.single[up][id.Key]
	n := int(lin.N)
	if n <= len(list) {
		var sum uint64
		for i, e := range list {
			sum += e.tup.Lineage.Hash
			if i >= n {
				sum -= list[i-n].tup.Lineage.Hash
			}
			if i >= n-1 && sum == lin.Hash {
				run := list[i-n+1 : i+1]
				l.First, l.Last = run[0].tup.ID.String(), run[n-1].tup.ID.String()
				l.FromMs, l.ToMs = ms(time.Duration(run[0].tup.Time)), ms(time.Duration(run[n-1].tup.Time))
				for _, e := range run {
					l.Ids = append(l.Ids, e.tup.ID.String())
					l.idT = append(l.idT, ms(time.Duration(e.tup.Time)))
				}
				break
			}
		}
	}
	if id.Kind == ha.IDKey {
		// The newest input: this step's lineage less the previous step's
		// at the same host.
		var prev *emitted
		for i := range s.prev {
			if s.prev[i].host == host && s.prev[i].t <= t {
				prev = &s.prev[i]
			}
		}
		if prev != nil {
			if src, ok := s.sources[lin.Hash-prev.tup.Lineage.Hash]; ok && lin.N == prev.tup.Lineage.N+1 {
				l.Newest = src.tup.ID.String()
			}
		}
	}
	return l
}

// chain is the path of delivered copy d back from the sink: at each stage
// the latest emit with d's lineage before the next stage's, the producing
// stage first.
func (r *Run) chain(s *scan, d ha.Delivery) []emitted {
	var out []emitted
	at, stage := d.T, len(r.pipeline)-1
	for {
		var best *emitted
		for i := range s.hops {
			h := &s.hops[i]
			st := r.stage(fragment(h.host))
			if st >= stage || h.t > at || h.tup.Lineage != d.Tuple.Lineage {
				continue
			}
			if best == nil || st > r.stage(fragment(best.host)) || st == r.stage(fragment(best.host)) && h.t >= best.t {
				best = h
			}
		}
		if best == nil {
			break
		}
		out = append([]emitted{*best}, out...)
		at, stage = best.t, r.stage(fragment(best.host))
	}
	return out
}

// maker is the host (and time) that made delivered copy d: the first emit
// of its chain.
func (r *Run) maker(s *scan, d ha.Delivery) (string, time.Duration) {
	c := r.chain(s, d)
	if len(c) == 0 {
		return "", 0
	}
	return c[0].host, c[0].t
}

// upstream is the fragment feeding host's.
func (r *Run) upstream(host string) string {
	if i := r.stage(fragment(host)); i > 0 {
		return r.pipeline[i-1]
	}
	return ""
}

func lineageDiff(got, want *Lineage) []string {
	var out []string
	if got.Newest != "" && want.Newest != "" && got.Newest != want.Newest {
		out = append(out, fmt.Sprintf("its newest input is %s; failure-free it is %s: the inputs arrived in another order", got.Newest, want.Newest))
	}
	if got.Ids == nil || want.Ids == nil {
		return out
	}
	if lacks, from, to := minus(want, got); len(lacks) > 0 {
		out = append(out, fmt.Sprintf("lacks %d source tuples of the failure-free lineage: %s (event times %s–%s s)", len(lacks), ids(lacks), seconds(from), seconds(to)))
	}
	if extra, from, to := minus(got, want); len(extra) > 0 {
		out = append(out, fmt.Sprintf("holds %d source tuples the failure-free lineage does not: %s (event times %s–%s s)", len(extra), ids(extra), seconds(from), seconds(to)))
	}
	return out
}

// minus lists a's tuples that b lacks and their event-time span.
func minus(a, b *Lineage) (out []string, from, to float64) {
	has := map[string]bool{}
	for _, id := range b.Ids {
		has[id] = true
	}
	for i, id := range a.Ids {
		if has[id] {
			continue
		}
		if len(out) == 0 {
			from = a.idT[i]
		}
		out = append(out, id)
		to = a.idT[i]
	}
	return out, from, to
}
