package ha

import "slices"

// MaxKeptDecisions bounds the interleaving decisions a DecisionLog keeps
// (one byte each): far more than a loss burst can lose.
const MaxKeptDecisions = 1 << 16

// DecisionLog keeps the latest interleaving decisions a primary shipped to
// its replicas (TakeOrderLog's bytes, numbered from 0 in the primary's
// term), so that a replica that lost some can be sent them again. It keeps
// at least the last MaxKeptDecisions and at most twice as many.
type DecisionLog struct {
	base uint64 // index of log[0]
	log  []uint8
}

// Keep appends the shipped decisions d.
func (l *DecisionLog) Keep(d []uint8) {
	l.log = append(l.log, d...)
	if len(l.log) > 2*MaxKeptDecisions {
		drop := len(l.log) - MaxKeptDecisions
		l.log = append([]uint8(nil), l.log[drop:]...)
		l.base += uint64(drop)
	}
}

// Since returns a copy of the kept decisions from index from on; ok is
// false when the log no longer keeps decision from.
func (l *DecisionLog) Since(from uint64) (d []uint8, ok bool) {
	if from < l.base || from > l.base+uint64(len(l.log)) {
		return nil, false
	}
	return slices.Clone(l.log[from-l.base:]), true
}

// Reset forgets every decision (a new term numbers from 0 again).
func (l *DecisionLog) Reset() { *l = DecisionLog{} }
