package upstreambackup

import (
	"sort"
	"time"
)

// segmentSpan is the event-time span one input-record segment covers: the
// record is exact to this granularity (a level-1 cut falling inside a
// segment acknowledges only up to the segment's start, retaining a little
// more than needed).
const segmentSpan = int64(time.Millisecond)

// segment summarises consecutive accepted inputs of one port.
type segment struct {
	first, last  uint64 // seq range
	firstT, maxT int64  // event time of the first input, largest event time
}

// inputTimes is a compact record of (seq, event time) of the inputs one port
// accepted, used to map an operator horizon (an event time) to an input seq
// for the level-1 acknowledgements (hooks.records). It starts afresh
// whenever the port's position does: the hooks reset it when the upstream
// numbers afresh or the host restarts, and add resets it when a seq does
// not follow the last one recorded (a renumbering it was not told of).
type inputTimes struct {
	// tail is a copy of segs[len(segs)-1], valid while a segment is live.
	// add runs for every input and compares against it instead of loading
	// the slice's tail: in cluster mode that line is out of cache by the
	// next message (other processes run in between), and the load was most
	// of add's cost (perf annotate). add still writes the tail back.
	tail segment
	segs []segment
	// head is the first live segment; unordered is the last segment whose
	// largest time is below its predecessor's (0: none), so the live
	// segments' largest times ascend when unordered ≤ head.
	head, unordered int32
}

// add records an accepted input.
func (l *inputTimes) add(seq uint64, t int64) {
	if n := len(l.segs); n > int(l.head) {
		s := &l.tail
		if seq <= s.last {
			l.reset() // a new numbering: what came before belongs to the old one
			l.add(seq, t)
			return
		}
		if seq == s.last+1 && t >= s.firstT && t-s.firstT < segmentSpan {
			s.last = seq
			s.maxT = max(s.maxT, t)
			l.segs[n-1] = *s
			return
		}
		if t < s.maxT {
			l.unordered = int32(n) // the segment appended below
		}
	}
	l.tail = segment{first: seq, last: seq, firstT: t, maxT: t}
	l.segs = append(l.segs, l.tail)
}

// cut returns the largest seq such that every recorded input up to it has
// an event time before horizon, and whether there is one. It takes the
// longest prefix of segments whose largest time is before horizon: exact
// for monotone event times, conservative otherwise. When the live
// segments' largest times ascend (the usual case) it is found by binary
// search: a linear scan read the whole record, a second of input, in the
// round after each window closed.
func (l *inputTimes) cut(horizon int64) (uint64, bool) {
	live := l.segs[l.head:]
	var i int
	if l.unordered <= l.head {
		i = sort.Search(len(live), func(i int) bool { return live[i].maxT >= horizon })
	} else {
		for i < len(live) && live[i].maxT < horizon {
			i++
		}
	}
	if i == 0 {
		return 0, false
	}
	return live[i-1].last, true
}

// lastSeq is the last recorded seq.
func (l *inputTimes) lastSeq() (uint64, bool) {
	if len(l.segs) == int(l.head) {
		return 0, false
	}
	return l.segs[len(l.segs)-1].last, true
}

// drop forgets segments entirely at or below upTo (seqs ascend along the
// record: a binary search finds them).
func (l *inputTimes) drop(upTo uint64) {
	live := l.segs[l.head:]
	l.head += int32(sort.Search(len(live), func(i int) bool { return live[i].last > upTo }))
	if l.head > 256 && int(l.head)*2 > len(l.segs) {
		// In place: a fresh slice of exactly the live segments had to grow
		// again with the next appends, a copy and an allocation every few
		// ack rounds.
		l.segs = l.segs[:copy(l.segs, l.segs[l.head:])]
		l.unordered = max(0, l.unordered-l.head)
		l.head = 0
	}
}

// reset forgets everything (the upstream numbers afresh).
func (l *inputTimes) reset() { l.segs, l.head, l.unordered = nil, 0, 0 }

// size is the number of live segments.
func (l *inputTimes) size() int { return len(l.segs) - int(l.head) }
