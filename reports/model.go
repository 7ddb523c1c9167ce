package reports

import (
	"math"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/ha/ops"
	"github.com/streamha/streamha/strategies"
)

// Model keys (metrics.Run.Model). Times are in ms, ratios are to the no-HA
// run, bytes are bytes.
const (
	ModelDetectionMs = "detection_ms"
	ModelRestoreMs   = "restore_ms"
	ModelReplayMs    = "replay_ms"
	ModelRecoveryMs  = "recovery_ms"
	ModelCPURatio    = "cpu_ratio"
	ModelBytesRatio  = "bytes_ratio"
	ModelStateBytes  = "state_bytes"
	ModelCkptBytesPS = strategies.ModelCheckpointBytesPerS
	ModelPeakQueue   = strategies.ModelPeakQueue
)

// wireTupleBytes approximates one data tuple's size on the wire.
const wireTupleBytes = 56

// ackBytes approximates one acknowledgement message's size.
const ackBytes = 40

// fragModel is the first-principles picture of one fragment.
type fragModel struct {
	in, out    float64 // tuples/s in and out
	opsIn      float64 // operator invocations per second
	costPerTup float64 // seconds of CPU per input tuple
	stateBytes float64
	window     float64 // seconds of input the state spans (0: stateless)
}

// Model returns the first-principles estimate of a strategy's recovery
// time and overhead in experiment e (see docs/reports.md for the formulas):
// detection ≈ timeout + heartbeat/2; restore = state bytes × per-byte CPU;
// catch-up = (replayed + backlogged tuples) / (service rate − input rate),
// where passive standby replays about half a checkpoint interval of input,
// upstream backup about one window of input, active standby nothing;
// overhead from checkpoints (state / interval), duplicate processing (active
// standby) and acknowledgements (upstream backup). The strategy's share
// comes from its registered model (strategies.Info.Model); a strategy
// without one gets the detection delay alone. It returns nil when the experiment
// cannot be modelled.
func Model(e *experiment.Experiment, strategy string, params map[string]string) map[string]float64 {
	frags := modelFrags(e)
	if len(frags) == 0 {
		return nil
	}
	m := map[string]float64{}
	det := e.Detector.Timeout.D() + e.Detector.Heartbeat.D()/2
	perByte := e.CPU.PerByte.D().Seconds()
	perEvent := e.CPU.PerEvent.D().Seconds()
	lat := e.Network.Latency.D().Seconds()

	// Baseline work (s of CPU per s) and bytes per s.
	srcRate := e.Source.Rate * float64(e.Source.Streams)
	work := srcRate * perEvent
	bytesPS := srcRate * wireTupleBytes
	var state, fragWork, fragBytes float64
	for _, f := range frags {
		work += f.in * f.costPerTup
		bytesPS += f.out * wireTupleBytes
		state += f.stateBytes
		fragWork += f.in * f.costPerTup
		fragBytes += f.in * wireTupleBytes
	}
	work += frags[len(frags)-1].out * perEvent // the sink
	m[ModelStateBytes] = round3(state)

	failed, failedAt := failedFrag(e)
	var replayTuples, backlog, restore float64
	cpuExtra, bytesExtra := 0.0, 0.0
	model, p, known := strategyModel(strategy, params)
	if known {
		in := strategies.ModelInput{Failed: failed, FailedAt: failedAt, Detection: det.Seconds(), PerByte: perByte, PerEvent: perEvent,
			FragWork: fragWork, FragBytes: fragBytes, AckBytes: ackBytes, WireTupleBytes: wireTupleBytes, Params: p}
		for _, f := range frags {
			in.Frags = append(in.Frags, strategies.ModelFrag{In: f.in, Out: f.out, CostPerTuple: f.costPerTup,
				StateBytes: f.stateBytes, Window: f.window})
		}
		c := model(in)
		replayTuples, backlog, restore = c.ReplayTuples, c.Backlog, c.Restore
		cpuExtra, bytesExtra = c.CPUExtra, c.BytesExtra
		for k, v := range c.Figures {
			m[k] = round3(v)
		}
	}
	if known && work > 0 {
		m[ModelCPURatio] = round3((work + cpuExtra) / work)
	}
	if known && bytesPS > 0 {
		m[ModelBytesRatio] = round3((bytesPS + bytesExtra) / bytesPS)
	}
	if failed < 0 {
		return m
	}
	m[ModelDetectionMs] = round3(det.Seconds() * 1e3)
	if !known {
		return m
	}
	f := frags[failed]
	catchUp := 0.0
	if n := replayTuples + backlog; n > 0 && f.costPerTup > 0 {
		mu := 1 / f.costPerTup
		if mu <= f.in {
			catchUp = math.Inf(1)
		} else {
			catchUp = n / (mu - f.in)
		}
	}
	m[ModelRestoreMs] = round3(restore * 1e3)
	if !math.IsInf(catchUp, 0) {
		m[ModelReplayMs] = round3(catchUp * 1e3)
		m[ModelRecoveryMs] = round3((det.Seconds() + restore + catchUp + 2*lat) * 1e3)
	}
	return m
}

// AddModels fills Model in every run of a result from experiment e.
func AddModels(e *experiment.Experiment, r *metrics.Result) {
	for i := range r.Runs {
		r.Runs[i].Model = Model(e, r.Runs[i].Strategy, r.Runs[i].Params)
	}
}

// strategyModel is the registered analytic model of strategy with its
// parameters; known is false for a strategy without one (or parameters it
// does not accept).
func strategyModel(strategy string, params map[string]string) (model strategies.Model, p strategies.Params, known bool) {
	info, err := strategies.Lookup(strategy)
	if err != nil || info.Model == nil {
		return nil, p, false
	}
	raw := make(map[string]any, len(params))
	for k, v := range params {
		raw[k] = v
	}
	if p, err = info.Parse(raw); err != nil {
		return nil, p, false
	}
	return info.Model, p, true
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// failedFrag is the fragment of the first crashed or paused host, or -1,
// and when it fails (s).
func failedFrag(e *experiment.Experiment) (int, float64) {
	for _, f := range e.Faults {
		h := f.Crash
		if h == "" {
			h = f.Pause
		}
		if h == "" {
			continue
		}
		base, _, _ := strings.Cut(h, ".")
		for i, n := range e.Nodes {
			if n.Name == base {
				return i, f.At.D().Seconds()
			}
		}
	}
	return -1, 0
}

// valueRange tracks the distribution of values through maps so that filter
// selectivities can be computed; known is false after an aggregate.
type valueRange struct {
	dist           string
	lo, hi, mu, sd float64
	known          bool
}

func (v valueRange) fractionBetween(gt, lt float64) float64 {
	if !v.known {
		return 1
	}
	switch v.dist {
	case "uniform":
		if v.hi <= v.lo {
			if v.lo > gt && v.lo < lt {
				return 1
			}
			return 0
		}
		a, b := math.Max(v.lo, gt), math.Min(v.hi, lt)
		return math.Max(0, b-a) / (v.hi - v.lo)
	case "normal":
		if v.sd <= 0 {
			return 1
		}
		cdf := func(x float64) float64 { return 0.5 * (1 + math.Erf((x-v.mu)/(v.sd*math.Sqrt2))) }
		return math.Max(0, cdf(lt)-cdf(gt))
	}
	return 1
}

// modelFrags walks the query computing each fragment's rates, CPU cost per
// input tuple and state size (measured from the operators' own snapshots
// of a synthetic steady state).
func modelFrags(e *experiment.Experiment) []fragModel {
	sv := e.Source.Value
	vr := valueRange{dist: sv.Dist, lo: sv.Min, hi: sv.Max, mu: sv.Mean, sd: sv.Std, known: sv.Dist == "uniform" || sv.Dist == "normal"}
	rate := e.Source.Rate * float64(e.Source.Streams)
	keys := max(1, e.Source.Keys)
	perOp := e.CPU.PerOp.D().Seconds()
	perEvent := e.CPU.PerEvent.D().Seconds()
	perByte := e.CPU.PerByte.D().Seconds()
	var out []fragModel
	for _, n := range e.Nodes {
		f := fragModel{in: rate}
		r := rate
		for _, spec := range n.Ops {
			for name, p := range spec {
				f.opsIn += r
				switch name {
				case "filter":
					gt, lt := math.Inf(-1), math.Inf(1)
					if x, ok := num(p["value_gt"]); ok {
						gt = x
					}
					if x, ok := num(p["value_lt"]); ok {
						lt = x
					}
					r *= vr.fractionBetween(gt, lt)
				case "map":
					scale, offset := 1.0, 0.0
					if x, ok := num(p["scale"]); ok {
						scale = x
					}
					if x, ok := num(p["offset"]); ok {
						offset = x
					}
					vr.lo, vr.hi = vr.lo*scale+offset, vr.hi*scale+offset
					if vr.lo > vr.hi {
						vr.lo, vr.hi = vr.hi, vr.lo
					}
					vr.mu, vr.sd = vr.mu*scale+offset, vr.sd*math.Abs(scale)
				case "tumbling":
					size := durParam(p["size"])
					if size > 0 {
						f.window = math.Max(f.window, size)
						r = math.Min(r, float64(keys)/size)
					}
					vr.known = false
				case "sliding":
					size, slide := durParam(p["size"]), durParam(p["slide"])
					if size > 0 && slide > 0 {
						f.window = math.Max(f.window, size)
						r = math.Min(r*size/slide, float64(keys)/slide)
					}
					vr.known = false
				case "join":
					w := durParam(p["window"])
					if w > 0 {
						f.window = math.Max(f.window, w)
						half := r / 2
						r = half * half * w / float64(keys)
					}
					vr.known = false
				case "running_sum", "hash_chain":
					vr.known = false
				}
				f.stateBytes += stateBytes(name, p, keys, rate)
			}
		}
		f.out = r
		if f.in > 0 {
			f.costPerTup = f.opsIn/f.in*perOp + perEvent + 2*wireTupleBytes*perByte
		}
		out = append(out, f)
		rate = r
	}
	return out
}

// stateBytes measures an operator's steady-state snapshot: one open window
// per key (tumbling), size/slide windows per key (sliding), one sum per key
// (running_sum, hash_chain), one window of buffered tuples (join, capped).
func stateBytes(name string, p map[string]any, keys int, rate float64) float64 {
	op, err := ops.New(name, p)
	if err != nil {
		return 0
	}
	n := keys
	if name == "join" {
		n = int(math.Min(rate*durParam(p["window"]), 20000))
	}
	switch name {
	case "tumbling", "sliding", "running_sum", "hash_chain", "join":
	default:
		return 0
	}
	emit := func(ha.Tuple) {}
	for i := range n {
		op.Process(ha.Tuple{Stream: uint8(i % 2), Seq: uint64(i + 1), Key: uint32(i % keys), Value: 1,
			ID: ha.OutputID{Key: uint32(i % 2), X: int64(i)}, Lineage: ha.SourceLineage(uint32(i%2), int64(i))}, emit)
	}
	b, err := op.Snapshot()
	if err != nil {
		return 0
	}
	return float64(len(b))
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

func durParam(v any) float64 {
	switch x := v.(type) {
	case string:
		d, err := time.ParseDuration(x)
		if err == nil {
			return d.Seconds()
		}
	case time.Duration:
		return x.Seconds()
	}
	return 0
}
