package ha_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// deliveryGen makes the i-th delivery of a log.
type deliveryGen func(r *rand.Rand, i int) ha.Delivery

// mapDelivery is the i-th output of a map query at 20 000 tuples/s: times
// advance, ids and seqs count up, the lineage is the source tuple's.
func mapDelivery(r *rand.Rand, i int) ha.Delivery {
	emit := int64(i) * 50_000
	id := ha.OutputID{Kind: ha.IDSource, X: int64(i)}
	return ha.Delivery{T: time.Duration(emit + 300_000 + r.Int64N(200_000)), Tuple: ha.Tuple{
		Seq: uint64(i + 1), Key: uint32(r.IntN(16)), Time: emit, Emit: emit, Value: r.NormFloat64(),
		ID: id, Lineage: ha.SourceLineage(id.Key, id.X),
	}}
}

// randomDelivery has every field random, full width, negative numbers,
// NaNs with payloads and every id kind included.
func randomDelivery(r *rand.Rand, _ int) ha.Delivery {
	v := math.Float64frombits(r.Uint64())
	switch r.IntN(8) {
	case 0:
		v = math.Float64frombits(0x7ff8000000000000 | r.Uint64N(1<<51))
	case 1:
		v = math.Copysign(0, -1)
	}
	return ha.Delivery{T: time.Duration(r.Int64() - r.Int64()), Tuple: ha.Tuple{
		Stream: uint8(r.Uint32()), Seq: r.Uint64(), Key: r.Uint32(), Time: r.Int64() - r.Int64(),
		Emit: r.Int64() - r.Int64(), Value: v,
		ID:      ha.OutputID{Kind: ha.IDKind(r.IntN(5)), Key: r.Uint32(), X: r.Int64() - r.Int64()},
		Lineage: ha.Lineage{N: r.Uint32(), Hash: r.Uint64()},
	}}
}

// mixedDelivery alternates runs of map outputs with random ones, so that
// blocks mix narrow and full-width fields.
func mixedDelivery(r *rand.Rand, i int) ha.Delivery {
	if (i/100)%3 == 2 {
		return randomDelivery(r, i)
	}
	return mapDelivery(r, i)
}

// sameDelivery compares deliveries bit for bit (a NaN value equals itself).
// Equal deliveries are told apart with == first: testify's reflection on
// every one of a few hundred thousand deliveries was most of the test's time.
func sameDelivery(t *testing.T, want, got ha.Delivery, i int) {
	t.Helper()
	if math.Float64bits(want.Tuple.Value) == math.Float64bits(got.Tuple.Value) {
		w, g := want, got
		w.Tuple.Value, g.Tuple.Value = 0, 0
		if w == g {
			return
		}
	}
	require.Equal(t, math.Float64bits(want.Tuple.Value), math.Float64bits(got.Tuple.Value), "delivery %d: value", i)
	want.Tuple.Value, got.Tuple.Value = 0, 0
	require.Equal(t, want, got, "delivery %d", i)
}

// TestDeliveriesGiveBackWhatWasAppended: the compact log returns every
// delivery (and its id alone) exactly as it was appended, at any length (block edges, several
// slabs) and while it grows, whatever the fields hold.
func TestDeliveriesGiveBackWhatWasAppended(t *testing.T) {
	for _, tc := range []struct {
		name string
		gen  deliveryGen
		n    int
	}{
		{"empty", mapDelivery, 0},
		{"one", mapDelivery, 1},
		{"one short of a block", mapDelivery, 63},
		{"one block", mapDelivery, 64},
		{"one past a block", randomDelivery, 65},
		{"map query, several slabs", mapDelivery, 200_000},
		{"random fields, several slabs", randomDelivery, 40_000},
		{"mixed", mixedDelivery, 20_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			want := make([]ha.Delivery, tc.n)
			var ds ha.Deliveries
			for i := range want {
				want[i] = tc.gen(r, i)
				ds.Append(want[i])
				sameDelivery(t, want[i], ds.At(i), i)
				j := r.IntN(i + 1) // an earlier one, perhaps sealed since
				sameDelivery(t, want[j], ds.At(j), j)
				if id := ds.ID(j); id != want[j].Tuple.ID {
					require.Equal(t, want[j].Tuple.ID, id, "delivery %d: id", j)
				}
			}
			require.Equal(t, tc.n, ds.Len())
			for i, d := range ds.All() {
				sameDelivery(t, want[i], d, i)
			}
			got := ds.Slice()
			require.Len(t, got, tc.n)
			for i := range got {
				sameDelivery(t, want[i], got[i], i)
			}
			// A Reader agrees, read in order, at random, and both interleaved.
			rd := ds.Reader()
			require.Equal(t, tc.n, rd.Len())
			for i := range tc.n {
				sameDelivery(t, want[i], rd.At(i), i)
				j := r.IntN(tc.n)
				if id := rd.ID(j); id != want[j].Tuple.ID {
					require.Equal(t, want[j].Tuple.ID, id, "delivery %d: id", j)
				}
				if i%3 == 0 {
					sameDelivery(t, want[j], rd.At(j), j)
				}
			}
			last, ok := ds.Last()
			require.Equal(t, tc.n > 0, ok)
			if ok {
				sameDelivery(t, want[tc.n-1], last, tc.n-1)
			}
		})
	}
}

// BenchmarkDeliveries reports what a delivery of a map query costs in the
// compact log: bytes held, ns to append, ns to read back in order and at
// random.
func BenchmarkDeliveries(b *testing.B) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]ha.Delivery, 4096)
	for i := range src {
		src[i] = mapDelivery(r, i)
	}
	at := func(i int) ha.Delivery { // the i-th output, times shifted per round of src
		d := src[i%len(src)]
		shift := int64(i/len(src)) * int64(len(src)) * 50_000
		d.T += time.Duration(shift)
		d.Tuple.Time += shift
		d.Tuple.Emit += shift
		d.Tuple.Seq += uint64(i - i%len(src))
		d.Tuple.ID.X += int64(i - i%len(src))
		d.Tuple.Lineage = ha.SourceLineage(0, d.Tuple.ID.X)
		return d
	}
	in := make([]ha.Delivery, n)
	for i := range in {
		in[i] = at(i)
	}
	var held float64
	b.Run("append", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.StartTimer()
			ds := new(ha.Deliveries)
			for _, d := range in {
				ds.Append(d)
			}
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&after)
			held = float64(after.HeapAlloc-before.HeapAlloc) / n
			runtime.KeepAlive(ds)
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/delivery")
		b.ReportMetric(held, "B/delivery")
	})
	var ds ha.Deliveries
	for _, d := range in {
		ds.Append(d)
	}
	b.Run("all", func(b *testing.B) {
		var sum time.Duration
		for range b.N {
			for _, d := range ds.All() {
				sum += d.T
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/delivery")
	})
	b.Run("random", func(b *testing.B) {
		var sum time.Duration
		for range b.N {
			for i := range n {
				sum += ds.At(int(uint64(i) * 0x9e3779b97f4a7c15 % n)).T
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/delivery")
	})
}
