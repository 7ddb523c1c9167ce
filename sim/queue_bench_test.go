package sim

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// BenchmarkEventQueue measures one pop plus one push (the hold model of a
// discrete-event simulator) with 10^3 to 10^6 events pending: a binary
// heap costs O(log n), so 1000× more pending events should cost about 2×,
// not 1000×.
func BenchmarkEventQueue(b *testing.B) {
	for _, n := range []int{1e3, 1e4, 1e5, 1e6} {
		b.Run("pending="+strconv.Itoa(n), func(b *testing.B) {
			s := &Sim{}
			r := rand.New(rand.NewPCG(1, 2))
			for range n {
				e := s.newEvent()
				e.at = time.Duration(r.Int64N(int64(time.Second)))
				s.push(e)
			}
			b.ReportAllocs()
			for b.Loop() {
				e := s.q.Pop().V
				at := e.at
				*e = event{}
				s.free = append(s.free, e)
				ne := s.newEvent()
				ne.at = at + time.Duration(r.Int64N(int64(time.Second)))
				s.push(ne)
			}
			if len(s.q) != n {
				b.Fatalf("queue holds %d events, want %d", len(s.q), n)
			}
		})
	}
}
