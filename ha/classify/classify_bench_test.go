package classify

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// bench1M builds a failure-free log of 1,000,000 windowed outputs over 1000
// keys and an observed log with a few missing, duplicated and wrong outputs.
func bench1M() (exp, obs []Output) {
	const n, keys = 1_000_000, 1000
	exp = make([]Output, n)
	for i := range exp {
		k := keyNameForBench(i % keys)
		w := i / keys
		exp[i] = Output{
			ID:    k + "|w=" + strconv.Itoa(w) + "s",
			Key:   k,
			Value: CanonicalFloat(float64(i%997) / 4),
			N:     int64(100 + i%50), HasN: true,
			T: float64(w*1000 + i%keys), HasT: true,
		}
	}
	obs = make([]Output, 0, n+100)
	for i, e := range exp {
		switch {
		case i%20011 == 0: // ~50 missing
			continue
		case i%30011 == 1: // ~33 duplicated
			obs = append(obs, e)
			e.T += 500
		case i%40009 == 2: // ~25 wrong
			e.Value += "1"
		}
		obs = append(obs, e)
	}
	return exp, obs
}

// keyNameForBench formats a key like ha.KeyName.
func keyNameForBench(k int) string {
	if k < 10 {
		return "k0" + strconv.Itoa(k)
	}
	return "k" + strconv.Itoa(k)
}

// BenchmarkClassify1M classifies 1M outputs over 1000 keys, delivered in
// the expected order ("in-order") and grouped by key ("by-key": a cross-key
// reordering, still precise per key, where the in-order fast path never
// applies).
func BenchmarkClassify1M(b *testing.B) {
	exp, obs := bench1M()
	byKey := slices.Clone(obs)
	slices.SortStableFunc(byKey, func(x, y Output) int { return strings.Compare(x.Key, y.Key) })
	marks := []Mark{{At: 400_000, Label: "the crash of B"}, {At: 400_500, Until: 401_000, Label: "the replay"}}
	for _, bc := range []struct {
		name string
		obs  []Output
	}{{"in-order", obs}, {"by-key", byKey}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var r Result
			iters := 0
			for b.Loop() {
				r = Classify(exp, bc.obs, marks)
				iters++
			}
			b.ReportMetric(float64(len(bc.obs))*float64(iters)/b.Elapsed().Seconds(), "outputs/s")
			if r.Type != TypeGap || r.Missing == 0 || r.Duplicates == 0 || r.Wrong == 0 {
				b.Fatalf("unexpected result %+v", r)
			}
		})
	}
}
