package upstreambackup

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

// timeOrder follows the event times of a node's output in seq order.
type timeOrder struct {
	max      floor  // the largest event time so far
	disorder uint64 // the last seq whose time was below an earlier one (0 = none)
}

// note records that output seq (the next in order) has event time t.
func (o *timeOrder) note(seq uint64, t int64) {
	if !o.max.ok || t >= o.max.t {
		o.max = floor{t: t, ok: true}
	} else {
		o.disorder = seq
	}
}

// inOrderFrom reports whether no output from seq on came earlier in event
// time than one before it: then, for any s ≥ seq, the largest time of the
// outputs up to s is that of s itself.
func (o *timeOrder) inOrderFrom(seq uint64) bool { return o.disorder < seq }

// idEntry is one remembered output id with its event time.
type idEntry struct {
	id ha.OutputID
	t  int64
}

// idMemory remembers the outputs received from one upstream fragment, by
// id and event time, in arrival order, so a replay by a replacement can be
// de-duplicated. Outputs are forgotten once their event time is at or
// below the floor a replacement would replay from.
//
// An output is a duplicate only when both its id and its event time were
// received: a replay from the queue that holds the failed node's whole
// input rebuilds each output with its id and event time. A replacement
// whose input history was lost with an upstream that failed too (adjacent
// failures) rebuilds other outputs under ids already used — a running sum
// restarted empty counts a key from one again — at later event times;
// those are new outputs, and dropping them by id alone held every key's
// output back until its count passed the old one.
type idMemory struct {
	seen map[idEntry]struct{}
	fifo []idEntry
	head int
	peak int
	// byID compares ids alone (ha.PlantDedupByID).
	byID bool
}

func newIDMemory() *idMemory { return &idMemory{seen: map[idEntry]struct{}{}} }

// key is the entry under which an output with id and event time t is
// remembered.
func (m *idMemory) key(id ha.OutputID, t int64) idEntry {
	if m.byID {
		return idEntry{id: id}
	}
	return idEntry{id: id, t: t}
}

// admit reports whether the output (id, event time t) is new, remembering it.
func (m *idMemory) admit(id ha.OutputID, t int64) bool {
	k := m.key(id, t)
	if _, dup := m.seen[k]; dup {
		return false
	}
	m.seen[k] = struct{}{}
	m.fifo = append(m.fifo, idEntry{id: id, t: t})
	m.peak = max(m.peak, len(m.seen))
	return true
}

// forget drops the outputs remembered in arrival order up to the first
// whose event time is above floor.
func (m *idMemory) forget(floor int64) {
	for m.head < len(m.fifo) && m.fifo[m.head].t <= floor {
		e := m.fifo[m.head]
		delete(m.seen, m.key(e.id, e.t))
		m.head++
	}
	if m.head > 1024 && m.head*2 > len(m.fifo) {
		m.fifo = m.fifo[:copy(m.fifo, m.fifo[m.head:])] // in place, as inputLog.drop
		m.head = 0
	}
}

// size is the number of outputs remembered.
func (m *idMemory) size() int { return len(m.seen) }

// Strategy message types (KindStrategy).
const (
	// msgFloor (upstream → downstream, every ack interval when changed)
	// carries the sender's queue floor and the relayed floor of the
	// sender's own upstream queues (see encodeFloors).
	msgFloor = "ub.floor"
	// msgReplayFloor (upstream → new primary, just before the replay)
	// carries the floor of the queue about to be replayed.
	msgReplayFloor = "ub.replay-floor"
	// msgIncomplete (new primary → downstream) says window results
	// starting at or before the carried event time may be incomplete.
	msgIncomplete = "ub.incomplete"
)

// floor is an optional event time.
type floor struct {
	t  int64
	ok bool
}

// encodeFloors writes optional event times as a presence byte per value
// followed by the value as a varint.
func encodeFloors(fs ...floor) []byte {
	b := make([]byte, 0, 1+len(fs)*binary.MaxVarintLen64)
	var mask byte
	for i, f := range fs {
		if f.ok {
			mask |= 1 << i
		}
	}
	b = append(b, mask)
	for _, f := range fs {
		if f.ok {
			b = binary.AppendVarint(b, f.t)
		}
	}
	return b
}

// decodeFloors reads n values written by encodeFloors.
func decodeFloors(b []byte, n int) ([]floor, error) {
	if len(b) < 1 {
		return nil, fmt.Errorf("%w: empty floor body", ha.ErrMalformed)
	}
	mask := b[0]
	b = b[1:]
	out := make([]floor, n)
	for i := range out {
		if mask&(1<<i) == 0 {
			continue
		}
		v, k := binary.Varint(b)
		if k <= 0 {
			return nil, fmt.Errorf("%w: floor %d: bad varint", ha.ErrMalformed, i)
		}
		out[i] = floor{t: v, ok: true}
		b = b[k:]
	}
	return out, nil
}

// encodeAck writes the ack body: the acknowledger's view of the
// upstream fragment's epoch, so a new primary ignores acks about its
// predecessor's numbering, then the level-0 point l0 when there is one
// (0 = none).
func encodeAck(epoch, l0 uint64) []byte {
	b := binary.AppendUvarint(nil, epoch)
	if l0 > 0 {
		b = binary.AppendUvarint(b, l0)
	}
	return b
}

// decodeAck reads an ack's body: the epoch, then the level-0 point when
// the ack carries one beyond its Seq (0 = none).
func decodeAck(b []byte) (epoch, l0 uint64, err error) {
	epoch, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, 0, fmt.Errorf("%w: ack epoch: bad varint", ha.ErrMalformed)
	}
	if b = b[k:]; len(b) == 0 {
		return epoch, 0, nil
	}
	l0, k = binary.Uvarint(b)
	if k <= 0 || k != len(b) {
		return 0, 0, fmt.Errorf("%w: ack level-0 point: bad varint", ha.ErrMalformed)
	}
	return epoch, l0, nil
}

// minFloor is the smallest of the given floors, ok only when all are.
func minFloor(fs []floor) floor {
	if len(fs) == 0 {
		return floor{}
	}
	m := floor{t: math.MaxInt64, ok: true}
	for _, f := range fs {
		if !f.ok {
			return floor{}
		}
		m.t = min(m.t, f.t)
	}
	return m
}

// runStats collects the figures of one run across all its nodes.
type runStats struct {
	hosts map[string]*hostStats
}

// hostStats are one host's queue figures.
type hostStats struct {
	peak           int64         // peak retained tuples
	peakAt         time.Duration // when the peak was reached
	level1Advances int64         // times the level-1 point advanced
	retentionDrops int64         // tuples dropped by the retention bound
	dedupDropped   int64         // inputs dropped as already received
	incomplete     int64         // inputs dropped as incomplete windows
	dedupPeak      int           // peak ids remembered
	acks           int64         // acks sent
	rounds         int64         // ack rounds (timer firings, the last one of a busy spell included)
}

func newRunStats() *runStats { return &runStats{hosts: map[string]*hostStats{}} }

func (r *runStats) host(h string) *hostStats {
	s := r.hosts[h]
	if s == nil {
		s = &hostStats{}
		r.hosts[h] = s
	}
	return s
}

// Report implements sim.Reporter: the queue figures of the last run.
//
//   - peak_queue, peak_queue_host: the largest output queue (tuples) and its host;
//   - level1_advanced: whether every queue that retained tuples was trimmed
//     by a level-1 ack at least once;
//   - stalled_queues: the hosts whose queue retained tuples but never saw
//     the level-1 point advance (state that depends on all history);
//   - queue_growth_per_s: the fastest growth of a stalled queue (its peak
//     over the time it was reached), 0 when none stalled;
//   - ack_rounds, acks, retention_dropped, dedup_dropped,
//     incomplete_dropped, dedup_peak_ids: protocol counters summed (peak:
//     maximum) over hosts.
func (s *Strategy) Report() map[string]any {
	r := s.stats
	hosts := make([]string, 0, len(r.hosts))
	for h := range r.hosts {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	var (
		peak                           int64
		peakHost                       string
		stalled                        = []string{}
		growth                         float64
		rounds, acks                   int64
		retDrops, dedupDrops, incDrops int64
		dedupPeak                      int
	)
	for _, h := range hosts {
		st := r.hosts[h]
		if st.peak > peak {
			peak, peakHost = st.peak, h
		}
		if st.peak > 0 && st.level1Advances == 0 { // retained tuples, never trimmed by level 1
			stalled = append(stalled, h)
			if st.peakAt > 0 {
				growth = max(growth, float64(st.peak)/st.peakAt.Seconds())
			}
		}
		rounds += st.rounds
		acks += st.acks
		retDrops += st.retentionDrops
		dedupDrops += st.dedupDropped
		incDrops += st.incomplete
		dedupPeak = max(dedupPeak, st.dedupPeak)
	}
	return map[string]any{
		"peak_queue":         peak,
		"peak_queue_host":    peakHost,
		"level1_advanced":    len(stalled) == 0,
		"stalled_queues":     stalled,
		"queue_growth_per_s": growth,
		"ack_rounds":         rounds,
		"acks":               acks,
		"retention_dropped":  retDrops,
		"dedup_dropped":      dedupDrops,
		"incomplete_dropped": incDrops,
		"dedup_peak_ids":     dedupPeak,
	}
}
