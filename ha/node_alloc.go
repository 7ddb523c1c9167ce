package ha

// Slab sizes of the node's hot path. A slab is freed by the garbage
// collector once nothing refers to any part of it, so sizes are kept small
// enough that a few long-lived references pin little memory.
const (
	tupleSlab   = 512 // tuples per batch slab (40 KiB)
	messageSlab = 64  // data messages per message slab
)

// slabs hands out memory for sent batches and data messages in chunks:
// one allocation serves many messages. Every piece handed out is disjoint
// from every other and, for batches, capacity-limited, so an append by a
// receiver reallocates rather than writes into a neighbour. Slabs serve an
// Env without the CopySender capability (the cluster runtimes); one with
// it copies into memory it recycles, and the node keeps its one batch.
type slabs struct {
	tuples   []Tuple
	messages []Message
}

// take returns the contents of *batch for sending: small batches are
// copied into slab memory; a large one (a replay, a source burst) is handed
// over as it is and *batch gets a fresh array of the same capacity, which
// saves copying it. Either way the caller may reset *batch to length 0.
func (s *slabs) take(batch *[]Tuple) []Tuple {
	b := *batch
	k := len(b)
	if k == 0 {
		return nil
	}
	if k > tupleSlab/4 {
		*batch = make([]Tuple, 0, cap(b))
		return b[:k:k]
	}
	if cap(s.tuples)-len(s.tuples) < k {
		s.tuples = make([]Tuple, 0, tupleSlab)
	}
	i := len(s.tuples)
	s.tuples = append(s.tuples, b...)
	return s.tuples[i : i+k : i+k]
}

// message returns a zeroed message in slab memory.
func (s *slabs) message() *Message {
	if len(s.messages) == cap(s.messages) {
		s.messages = make([]Message, 0, messageSlab)
	}
	s.messages = s.messages[:len(s.messages)+1]
	return &s.messages[len(s.messages)-1]
}
