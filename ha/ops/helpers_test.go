package ops

import (
	"testing"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/stretchr/testify/require"
)

const sec = int64(time.Second)

// src builds a source tuple: number n on source stream s, arriving on port.
func src(port uint8, key uint32, t int64, v float64, s uint32, n int64) ha.Tuple {
	return ha.Tuple{
		Stream:  port,
		Key:     key,
		Time:    t,
		Emit:    t,
		Value:   v,
		ID:      ha.OutputID{Kind: ha.IDSource, Key: s, X: n},
		Lineage: ha.SourceLineage(s, n),
	}
}

func mustNew(t testing.TB, name string, p map[string]any) ha.Operator {
	t.Helper()
	op, err := New(name, p)
	require.NoError(t, err)
	return op
}

func feed(op ha.Operator, in []ha.Tuple) []ha.Tuple {
	var out []ha.Tuple
	emit := func(t ha.Tuple) { out = append(out, t) }
	for _, t := range in {
		op.Process(t, emit)
	}
	return out
}

func lin(ids ...ha.Lineage) ha.Lineage {
	var l ha.Lineage
	for _, x := range ids {
		l.Add(x)
	}
	return l
}

// rng is a tiny deterministic generator for test inputs (splitmix64).
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// workload is a deterministic, mostly time-ordered input over both ports
// with some disorder and late tuples: n tuples, keys < keys, integer values.
func workload(seed uint64, n, keys int) []ha.Tuple {
	return workloadDisorder(seed, n, keys, 1500*time.Millisecond)
}

// workloadDisorder is workload with event times up to disorder behind the clock.
func workloadDisorder(seed uint64, n, keys int, disorder time.Duration) []ha.Tuple {
	r := rng(seed)
	var in []ha.Tuple
	var clock int64
	var num [2]int64
	for range n {
		clock += int64(r.intn(int(200 * time.Millisecond)))
		tm := clock
		if disorder > 0 {
			tm -= int64(r.intn(int(disorder)))
		}
		port := uint8(r.intn(2))
		num[port]++
		in = append(in, src(port, uint32(r.intn(keys)), tm, float64(r.intn(100)-20), uint32(port), num[port]))
	}
	return in
}

type stater interface {
	state() ([]byte, error)
}

func stateOf(t testing.TB, op ha.Operator) []byte {
	t.Helper()
	b, err := op.(stater).state()
	require.NoError(t, err)
	return b
}

// statefulCases are the stateful operators with their configs.
var statefulCases = []struct {
	name   string
	params map[string]any
}{
	{"tumbling", map[string]any{"size": "1s", "agg": "sum"}},
	{"tumbling", map[string]any{"size": "1s", "agg": "min"}},
	{"sliding", map[string]any{"size": "2s", "slide": "500ms", "agg": "avg"}},
	{"sliding", map[string]any{"size": "1s", "slide": "1s", "agg": "count"}},
	{"running_sum", nil},
	{"hash_chain", nil},
	{"join", map[string]any{"window": "1s"}},
}
