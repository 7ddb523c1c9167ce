package ha

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// SourceSpec configures a seeded tuple generator.
type SourceSpec struct {
	// Rate is tuples per second.
	Rate float64
	// Keys is the number of distinct keys.
	Keys int
	// Skew is the Zipf exponent minus one for key choice; 0 = uniform.
	Skew float64
	// Value is the value distribution: "uniform" (in [Min,Max)), "normal"
	// (Mean, Std) or "exponential" (Mean).
	Value               string
	Min, Max, Mean, Std float64
	// Poisson draws exponential inter-arrival times instead of a constant rate.
	Poisson bool
	// Duration is how long the source emits.
	Duration time.Duration
	// Batch is how often the source wakes up to emit what is due.
	Batch time.Duration
}

// Validate checks the spec.
func (s SourceSpec) Validate() error {
	switch {
	case s.Rate <= 0 || math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0):
		return fmt.Errorf("source.rate: must be positive, got %g", s.Rate)
	case s.Keys <= 0:
		return fmt.Errorf("source.keys: must be positive, got %d", s.Keys)
	case s.Skew < 0:
		return fmt.Errorf("source.skew: must be ≥ 0, got %g", s.Skew)
	case s.Duration <= 0:
		return fmt.Errorf("duration: must be positive, got %s", s.Duration)
	case s.Batch <= 0:
		return fmt.Errorf("source.batch: must be positive, got %s", s.Batch)
	}
	switch s.Value {
	case "uniform":
		if s.Max <= s.Min {
			return fmt.Errorf("source.value: uniform needs max > min, got [%g, %g)", s.Min, s.Max)
		}
	case "normal":
		if s.Std < 0 {
			return fmt.Errorf("source.value: std must be ≥ 0, got %g", s.Std)
		}
	case "exponential":
		if s.Mean <= 0 {
			return fmt.Errorf("source.value: exponential needs mean > 0, got %g", s.Mean)
		}
	default:
		return fmt.Errorf("source.value: unknown distribution %q (known: uniform, normal, exponential)", s.Value)
	}
	return nil
}

// generator produces one source stream.
type generator struct {
	spec   SourceSpec
	stream uint32
	rng    *rand.Rand
	zipf   *rand.Zipf
	n      int64         // tuples generated so far
	next   time.Duration // scheduled time of the next tuple
	wake   time.Duration // intended time of the last wake-up
	ended  bool          // the end-of-stream mark was sent
}

func newGenerator(spec SourceSpec, stream uint32, rng *rand.Rand) *generator {
	g := &generator{spec: spec, stream: stream, rng: rng}
	if spec.Skew > 0 && spec.Keys > 1 {
		g.zipf = rand.NewZipf(rng, 1+spec.Skew, 1, uint64(spec.Keys-1))
	}
	g.next = g.gap()
	return g
}

func (g *generator) gap() time.Duration {
	mean := float64(time.Second) / g.spec.Rate
	if g.spec.Poisson {
		return time.Duration(g.rng.ExpFloat64() * mean)
	}
	return time.Duration(mean)
}

// MaxSourceBurst bounds how many tuples a source emits in one wake-up (one
// message). A source that wakes late — a real runtime's timer under load —
// catches up in several messages instead of one huge one.
const MaxSourceBurst = 1024

// due emits the tuples scheduled at or before now, at most MaxSourceBurst,
// and returns the time of the next one (or false once the source is done).
// After the last tuple it asks to be woken at Duration, when it emits the
// end-of-stream mark (EndMark) and is done.
func (g *generator) due(now time.Duration, emit func(Tuple)) (time.Duration, bool) {
	next, more := g.tuples(now, emit)
	if more || g.ended {
		return next, more
	}
	if now < g.spec.Duration {
		return g.spec.Duration, true
	}
	g.ended = true
	emit(EndMark(g.stream, g.spec.Duration))
	return next, false
}

// tuples emits the tuples due at now (see due).
func (g *generator) tuples(now time.Duration, emit func(Tuple)) (time.Duration, bool) {
	for burst := 0; burst < MaxSourceBurst && g.next <= now && g.next < g.spec.Duration; burst++ {
		g.n++
		var key uint32
		if g.zipf != nil {
			key = uint32(g.zipf.Uint64())
		} else {
			key = uint32(g.rng.IntN(g.spec.Keys))
		}
		var v float64
		switch g.spec.Value {
		case "normal":
			v = g.spec.Mean + g.rng.NormFloat64()*g.spec.Std
		case "exponential":
			v = g.rng.ExpFloat64() * g.spec.Mean
		default:
			v = g.spec.Min + g.rng.Float64()*(g.spec.Max-g.spec.Min)
		}
		at := int64(g.next)
		emit(Tuple{
			Key: key, Time: at, Emit: at, Value: v,
			ID:      OutputID{Kind: IDSource, Key: g.stream, X: g.n},
			Lineage: SourceLineage(g.stream, g.n),
		})
		if g.spec.Poisson {
			g.next += g.gap()
		} else {
			g.next = time.Duration(float64(g.n+1) * float64(time.Second) / g.spec.Rate)
		}
	}
	return g.next, g.next < g.spec.Duration
}
