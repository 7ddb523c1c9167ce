package cluster

import "github.com/streamha/streamha/ha"

// Slab sizes of the copies clusterEnv.Send makes. A slab is freed by the
// garbage collector once no queued message refers to any part of it, so
// sizes are kept small enough that a few long-queued messages pin little
// memory.
const (
	tupleSlab   = 512 // tuples per slab (40 KiB)
	messageSlab = 64  // messages per slab
)

// sendSlabs hands out the memory of the copies clusterEnv.Send makes of
// what a node lends it (ha.Env: Send lends a message and its Tuples for
// the call only), since the transport's writer goroutine encodes a queued
// message later. One allocation serves many messages. Every piece handed
// out is disjoint from every other and, for batches, capacity-limited, so
// an append by a reader reallocates rather than writes into a neighbour.
// Used by the node loop's goroutine only.
type sendSlabs struct {
	tuples   []ha.Tuple
	messages []ha.Message
}

// copy returns a copy of m, Tuples included, in slab memory. What else m
// refers to (Route, Body) is shared: a node never modifies it after Send.
func (s *sendSlabs) copy(m *ha.Message) *ha.Message {
	if len(s.messages) == cap(s.messages) {
		s.messages = make([]ha.Message, 0, messageSlab)
	}
	s.messages = s.messages[:len(s.messages)+1]
	c := &s.messages[len(s.messages)-1]
	*c = *m
	c.Tuples = s.batch(m.Tuples)
	return c
}

// batch returns a copy of b: a small one in slab memory, a large one (a
// replay, a source burst) in an array of its own.
func (s *sendSlabs) batch(b []ha.Tuple) []ha.Tuple {
	k := len(b)
	switch {
	case k == 0:
		return nil
	case k > tupleSlab/4:
		return append(make([]ha.Tuple, 0, k), b...)
	}
	if cap(s.tuples)-len(s.tuples) < k {
		s.tuples = make([]ha.Tuple, 0, tupleSlab)
	}
	i := len(s.tuples)
	s.tuples = append(s.tuples, b...)
	return s.tuples[i : i+k : i+k]
}
