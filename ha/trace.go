package ha

import (
	"encoding/json"
	"iter"
	"time"
)

// EventKind names a trace event.
type EventKind string

// Trace event kinds. Strategies may add their own kinds.
const (
	EvDeliver       EventKind = "deliver"          // the sink received an output (Tuple set)
	EvEmit          EventKind = "emit"             // Host emitted Tuple as Seq (only with trace_emits; Note: its role)
	EvCrash         EventKind = "crash"            // a host crashed (fault injector)
	EvPause         EventKind = "pause"            // a host was paused
	EvResume        EventKind = "resume"           // a paused host resumed
	EvPartition     EventKind = "partition"        // a partition started (Note: groups)
	EvHeal          EventKind = "heal"             // a partition ended
	EvLinkFault     EventKind = "link_fault"       // a delay, loss or corrupt fault started on links Host→Peer ("" = any); N: duration, Note: what
	EvLinkHeal      EventKind = "link_heal"        // that link fault ended (Note as at its start)
	EvDetect        EventKind = "detect"           // Host declared Peer dead
	EvAlive         EventKind = "alive"            // Host saw Peer alive again
	EvTakeover      EventKind = "takeover"         // Host became primary of Frag at Epoch (Peer: old primary)
	EvRoute         EventKind = "route"            // Host learned a new route
	EvFenced        EventKind = "fenced"           // Host dropped Seq messages from stale Peer, or was fenced itself
	EvCheckpointBeg EventKind = "checkpoint_start" // Seq: checkpoint id, N: bytes
	EvCheckpointEnd EventKind = "checkpoint_end"   // the backup holds checkpoint Seq
	EvRestore       EventKind = "restore"          // Host restored checkpoint Seq
	EvReplayStart   EventKind = "replay_start"     // Host replays N tuples to Peer from Seq
	EvReplayEnd     EventKind = "replay_end"       // replay to Peer done
	EvCaughtUp      EventKind = "caught_up"        // a new primary processed everything replayed to it
	EvTrim          EventKind = "trim"             // Host trimmed its output queue up to Seq (N left)
	EvGap           EventKind = "input_gap"        // Host saw N missing input seqs from Peer
	EvRepair        EventKind = "repair"           // Host asked Peer to resend input port N after Seq
	EvStats         EventKind = "stats"            // end-of-run counters of Host (Stats set)
	EvNote          EventKind = "note"             // free-form strategy note
)

// Event is one trace record. Fields not relevant to a kind are zero.
type Event struct {
	T     time.Duration `json:"t"`
	Kind  EventKind     `json:"kind"`
	Host  string        `json:"host,omitempty"`
	Peer  string        `json:"peer,omitempty"`
	Frag  int           `json:"frag,omitempty"`
	Epoch uint64        `json:"epoch,omitempty"`
	Seq   uint64        `json:"seq,omitempty"`
	N     int64         `json:"n,omitempty"`
	Note  string        `json:"note,omitempty"`
	Tuple *Tuple        `json:"tuple,omitempty"`
	Stats *NodeStats    `json:"stats,omitempty"`
}

// NodeStats are a node's cumulative counters, traced at the end of a run.
type NodeStats struct {
	Role      string `json:"role"`
	Messages  int64  `json:"messages"`   // messages sent
	Bytes     int64  `json:"bytes"`      // bytes sent (wire size)
	DataBytes int64  `json:"data_bytes"` // bytes of data messages sent
	Tuples    int64  `json:"tuples"`     // input tuples processed
	// Emitted is, for a source, the tuples it generated.
	Emitted   int64 `json:"emitted,omitempty"`
	Work      int64 `json:"work"`       // operator invocations charged
	WorkBytes int64 `json:"work_bytes"` // bytes (de)serialised charged
	CPU       int64 `json:"cpu_ns"`     // busy time (simulated or measured), ns
	// ProcessCPU is, in real runs, the CPU time (user + system) the node's
	// whole process used from the start instant until it stopped: the node
	// loop, transport, membership and the Go runtime. 0 when simulated.
	ProcessCPU      int64 `json:"process_cpu_ns,omitempty"`
	PeakQueue       int64 `json:"peak_queue"`       // peak retained output tuples
	PeakQueueBytes  int64 `json:"peak_queue_bytes"` // peak retained output bytes
	CheckpointBytes int64 `json:"checkpoint_bytes"` // checkpoint bytes sent
	Duplicates      int64 `json:"dup_dropped"`      // input duplicates dropped by seq
	Fenced          int64 `json:"fenced_dropped"`   // messages dropped as stale
	InputGaps       int64 `json:"input_gaps"`       // input seqs never received
}

// Trace is the record of one run: every event in the order it was traced.
// The sink's deliveries, most of a long run's events, are kept apart in a
// compact Deliveries log instead of as an Event (136 bytes) pointing at a
// Tuple (80 bytes) the garbage collector must scan; All gives the events
// back interleaved exactly as they were added. The zero value is an empty
// trace; a nil *Trace reads as empty.
type Trace struct {
	events []Event // every event but deliveries, in order
	before []int   // before[i]: number of deliveries added before events[i]
	dels   Deliveries
	sinks  []sinkRun // host of the deliveries from index from on
	// lats, in a latencies-only trace, are the deliveries' latencies.
	lats        []time.Duration
	latencyOnly bool
	// timingOnly keeps of each delivery only its time, id and emission
	// time (NewTimingTrace).
	timingOnly bool
}

// sinkRun names the host of a run of consecutive deliveries.
type sinkRun struct {
	from int
	host string
}

// NewTrace returns a trace holding events, in their order.
func NewTrace(events ...Event) *Trace {
	t := &Trace{}
	for _, e := range events {
		t.Add(e)
	}
	return t
}

// NewLatencyTrace returns an empty trace that keeps of each delivery only
// its latency (Latencies), 8 bytes a delivery: for runs whose output
// nobody reads, such as the failure-free run a strategy's overhead is
// measured from. Its Deliveries log stays empty and All yields no delivery.
func NewLatencyTrace() *Trace { return &Trace{latencyOnly: true} }

// NewTimingTrace returns an empty trace that keeps of each delivery only
// its time, output id and emission time — the rest of the tuple is zeroed
// before it enters the compact Deliveries log, where constant fields take
// no space (about 6 bytes a delivery for a map query's ids) — for runs read
// only for when each output arrived: the failure-free run of a strategy,
// which its overhead and its recovery time are measured from.
func NewTimingTrace() *Trace { return &Trace{timingOnly: true} }

// Latencies returns every delivery's latency, in delivery order (a copy).
func (t *Trace) Latencies() []time.Duration {
	if t == nil {
		return nil
	}
	if t.latencyOnly {
		return append([]time.Duration(nil), t.lats...)
	}
	lat := make([]time.Duration, 0, t.dels.Len())
	for _, d := range t.dels.All() {
		lat = append(lat, d.Latency())
	}
	return lat
}

// Add appends an event. A delivery (EvDeliver with a Tuple) is copied into
// the delivery log — its time, host and tuple; a delivery has no other
// fields — so its Tuple pointer need only be valid during the call. Any
// other event is kept as it is.
func (t *Trace) Add(e Event) {
	if e.Kind != EvDeliver || e.Tuple == nil {
		t.events = append(t.events, e)
		t.before = append(t.before, t.dels.Len())
		return
	}
	if t.latencyOnly {
		t.lats = append(t.lats, e.T-time.Duration(e.Tuple.Emit))
		return
	}
	if len(t.sinks) == 0 || t.sinks[len(t.sinks)-1].host != e.Host {
		t.sinks = append(t.sinks, sinkRun{from: t.dels.Len(), host: e.Host})
	}
	if t.timingOnly {
		// Time and the lineage hash as the log predicts them: stored as 0.
		t.dels.Append(Delivery{T: e.T, Tuple: Tuple{ID: e.Tuple.ID, Emit: e.Tuple.Emit, Time: e.Tuple.Emit,
			Lineage: Lineage{Hash: predictedHash(e.Tuple.ID)}}})
		return
	}
	t.dels.Append(Delivery{T: e.T, Tuple: *e.Tuple})
}

// Len is the number of events, deliveries included (a latencies-only
// trace keeps none): what All yields.
func (t *Trace) Len() int {
	if t == nil {
		return 0
	}
	return len(t.events) + t.dels.Len()
}

// Events returns every event except the sink's deliveries, in order. The
// slice belongs to the trace.
func (t *Trace) Events() []Event {
	if t == nil {
		return nil
	}
	return t.events
}

// Deliveries returns the sink's deliveries in order.
func (t *Trace) Deliveries() *Deliveries {
	if t == nil {
		return &Deliveries{}
	}
	return &t.dels
}

// All yields every event in the order it was added, deliveries included.
// A delivery's Tuple is a copy of the one in the log, made in batches, so
// it may be kept.
func (t *Trace) All() iter.Seq[Event] {
	return func(yield func(Event) bool) {
		if t == nil {
			return
		}
		d, s := 0, 0
		var batch []Tuple
		r := t.dels.Reader()
		emit := func(upTo int) bool {
			for ; d < upTo; d++ {
				for s+1 < len(t.sinks) && t.sinks[s+1].from <= d {
					s++
				}
				if len(batch) == cap(batch) {
					batch = make([]Tuple, 0, tupleBatch)
				}
				x := r.At(d)
				batch = append(batch, x.Tuple)
				if !yield(Event{T: x.T, Kind: EvDeliver, Host: t.sinks[s].host, Tuple: &batch[len(batch)-1]}) {
					return false
				}
			}
			return true
		}
		for i := range t.events {
			if !emit(t.before[i]) || !yield(t.events[i]) {
				return
			}
		}
		emit(t.dels.Len())
	}
}

// tupleBatch is the number of delivered tuples All copies out per allocation.
const tupleBatch = 256

// Slice returns every event in order as one slice (a copy).
func (t *Trace) Slice() []Event {
	out := make([]Event, 0, t.Len())
	for e := range t.All() {
		out = append(out, e)
	}
	return out
}

// MarshalJSON writes the trace as a JSON array of its events, in order.
func (t *Trace) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.Slice())
}

// UnmarshalJSON reads a JSON array of events.
func (t *Trace) UnmarshalJSON(b []byte) error {
	var evs []Event
	if err := json.Unmarshal(b, &evs); err != nil {
		return err
	}
	*t = *NewTrace(evs...)
	return nil
}
