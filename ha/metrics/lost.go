package metrics

import (
	"math"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
)

// inputFigures are a run's figures about source tuples (docs/semantics.md).
type inputFigures struct {
	// lost is the number of distinct source tuples whose effect is missing.
	lost int64
	// lineage is the lineage-weighted shortfall: per output id, how many
	// source tuples its last delivered copy lacks, summed.
	lineage int64
	// unmatched is the number of source tuples that reach no output even
	// in the failure-free run (0 when the emitted count is unknown).
	unmatched int64
}

// Emitted is the number of source tuples the sources of a run generated,
// from their end-of-run counters (0 when the trace has none).
func Emitted(trace *ha.Trace) int64 {
	var n int64
	for _, e := range trace.Events() {
		if e.Kind == ha.EvStats && e.Stats != nil {
			n += e.Stats.Emitted
		}
	}
	return n
}

// pairSide counts, for one source tuple of a join, its expected pairs and
// those delivered whole.
type pairSide struct{ pairs, whole int }

// lostInputFigures counts lost source tuples once each, whatever the
// output kind:
//   - a source-id output (maps, filters) is one source tuple;
//   - a join pair names its two source tuples; a tuple is lost when none
//     of its expected pairs was delivered whole (a pair it shares with a
//     lost partner does not make it lost);
//   - a window result lacks its shortfall; a running aggregate lacks the
//     largest shortfall of its key (every later output repeats it), at
//     most what the key's final output lacks against the lineage of the
//     last output of the key delivered.
//
// Windows and running aggregates can count one source tuple several times
// (sliding windows, aggregates over join pairs): their shortfall is then
// divided by the multiplicity of the failure-free output, its lineage
// total over the tuples emitted, so that lost ≤ emitted. outstanding ids
// (nil for none) are not lost.
func lostInputFigures(exp, obs *ha.Deliveries, x classify.Index, outstanding []bool, emitted int64) inputFigures {
	var (
		f                  inputFigures
		srcReflected       int64
		aggShort, aggTotal int64
		running            = map[uint32][2]int64{} // key → largest shortfall, final lineage
		sides              [2]map[int64]pairSide
	)
	short := Shortfalls(exp, obs, x)
	// The source tuples the last delivered running-aggregate output of a
	// key reflects: a restarted aggregate numbers its outputs anew, so its
	// ids miss while its lineage shows what it lost.
	reached := map[uint32]int64{}
	for _, d := range obs.All() {
		if d.Tuple.ID.Kind == ha.IDKey {
			reached[d.Tuple.ID.Key] = int64(d.Tuple.Lineage.N)
		}
	}
	er := exp.Reader()
	for id, first := range x.First {
		if outstanding != nil && outstanding[id] {
			short[id] = 0
		}
		s := short[id]
		f.lineage += s
		t := er.At(int(first)).Tuple
		switch t.ID.Kind {
		case ha.IDSource:
			srcReflected += int64(t.Lineage.N)
			f.lost += s
		case ha.IDPair:
			for side, num := range [2]int64{t.ID.X >> 32, t.ID.X & 0xffffffff} {
				if sides[side] == nil {
					sides[side] = map[int64]pairSide{}
				}
				p := sides[side][num]
				p.pairs++
				if s == 0 {
					p.whole++
				}
				sides[side][num] = p
			}
		case ha.IDKey:
			r := running[t.ID.Key]
			running[t.ID.Key] = [2]int64{max(r[0], s), max(r[1], int64(t.Lineage.N))}
		default:
			aggShort += s
			aggTotal += int64(t.Lineage.N)
		}
	}
	for k, r := range running {
		aggShort += min(r[0], max(0, r[1]-reached[k]))
		aggTotal += r[1]
	}
	pairTuples := int64(0)
	for _, m := range sides {
		for _, p := range m {
			pairTuples++
			if p.whole == 0 {
				f.lost++
			}
		}
	}
	// Multiplicity of the aggregates' lineage: how many times the
	// failure-free output counts each emitted tuple, at least once.
	mult := 1.0
	if emitted > 0 && aggTotal > emitted {
		mult = float64(aggTotal) / float64(emitted)
	}
	f.lost += int64(math.Round(float64(aggShort) / mult))
	if emitted > 0 {
		reflected := srcReflected + pairTuples + int64(math.Round(float64(aggTotal)/mult))
		f.unmatched = max(0, emitted-reflected)
	}
	return f
}
