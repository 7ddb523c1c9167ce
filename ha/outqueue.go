package ha

import "sort"

// outBlockBits sets the size of the output queue's blocks: 512 tuples,
// 40 KiB.
const (
	outBlockBits = 9
	outBlock     = 1 << outBlockBits
	outBlockMask = outBlock - 1
)

// outQueue is a node's output queue: the retained tuples in seq order,
// held in fixed-size blocks. Appending never copies what is queued, and
// the blocks a trim empties are kept on a free list for the appends that
// follow, so a queue that is filled and trimmed every ack interval touches
// its memory once. A contiguous slice had to be regrown by copying while a
// window filled, and at high rates those copies and the fresh pages they
// touched were most of upstream backup's CPU in cluster mode.
type outQueue struct {
	blocks [][]Tuple // blocks[0][head:] is the oldest tuple; all blocks hold outBlock tuples
	// tail is the block last appended: Push writes into it without loading
	// the block table, which in cluster mode is out of cache at every
	// message and cost a stalled load per retained tuple. Drop only removes
	// blocks from the front, or all of them (and then Push appends one
	// before it writes), so tail is the last block whenever Push uses it.
	tail []Tuple
	head int
	n    int
	free [][]Tuple
	peak int // recent peak of blocks in use (see Drop)
	high int // blocks in use at most since the last Drop
	max  int // the most tuples ever queued (Node.Stats' PeakQueue)
	// lent says that Lend handed queued tuples to a sent message, which
	// may still refer to them after a Drop: blocks are no longer recycled
	// (the garbage collector frees them once nothing refers to them).
	lent bool
}

// Len is the number of queued tuples.
func (q *outQueue) Len() int { return q.n }

// At is the i-th queued tuple, oldest first (0 ≤ i < Len).
func (q *outQueue) At(i int) *Tuple {
	j := q.head + i
	return &q.blocks[j>>outBlockBits][j&outBlockMask]
}

// Index is the position of the first queued tuple whose seq is at least
// seq: Len when there is none. Seqs increase along the queue, and a node
// numbers its output consecutively, so the position is first guessed from
// the oldest seq and checked: two reads instead of a binary search's
// dozen, each a cache miss when an ack trims a queue in cluster mode.
func (q *outQueue) Index(seq uint64) int {
	if q.n == 0 {
		return 0
	}
	first := q.At(0).Seq
	if seq <= first {
		return 0
	}
	if i := seq - first; i < uint64(q.n) {
		if q.At(int(i)).Seq == seq {
			return int(i)
		}
	} else if q.At(q.n-1).Seq < seq {
		return q.n
	}
	return sort.Search(q.n, func(i int) bool { return q.At(i).Seq >= seq })
}

// Push appends a copy of *t. It takes a pointer: an 80-byte argument
// passed by value is copied through the stack, and in cluster mode those
// stack lines are out of cache at every message.
func (q *outQueue) Push(t *Tuple) {
	j := q.head + q.n
	if j == len(q.blocks)<<outBlockBits {
		q.tail = q.newBlock()
		q.blocks = append(q.blocks, q.tail)
		q.high = max(q.high, len(q.blocks))
	}
	q.tail[j&outBlockMask] = *t // j is in the last block
	q.n++
	q.max = max(q.max, q.n)
}

func (q *outQueue) newBlock() []Tuple {
	if k := len(q.free); k > 0 {
		b := q.free[k-1]
		q.free = q.free[:k-1]
		return b
	}
	return make([]Tuple, outBlock)
}

// Lend returns the queued copies of the tuples b, the last len(b) pushed,
// as a capacity-limited slice of the queue's memory, to be sent as they
// are; false when they are not all queued or span two blocks. The queue
// never writes them again: from the first Lend on, blocks emptied by Drop
// are not reused.
func (q *outQueue) Lend(b []Tuple) ([]Tuple, bool) {
	k := len(b)
	if k == 0 || k > q.n {
		return nil, false
	}
	j := q.head + q.n - k // the first one's position in the block table
	if j>>outBlockBits != (j+k-1)>>outBlockBits || (j+k-1)>>outBlockBits != len(q.blocks)-1 {
		return nil, false
	}
	ts := q.tail[j&outBlockMask:][:k:k] // the last block: tail, not the block table
	if ts[0].Seq != b[0].Seq || ts[k-1].Seq != b[k-1].Seq {
		return nil, false // trimmed meanwhile, or not queued
	}
	q.lent = true
	return ts, true
}

// Drop removes the k oldest tuples (k ≤ Len). Emptied blocks go to the
// free list for the appends that follow (unless tuples were lent). Together the used and free blocks
// stay within the queue's recent peak: the most blocks it used between two
// Drops, decayed by 1/64 per Drop when it no longer reaches it (down to 63
// blocks), so memory is given back once a queue that peaked stays short
// for many trims.
func (q *outQueue) Drop(k int) {
	q.head += k
	q.n -= k
	used := q.head >> outBlockBits
	q.head &= outBlockMask
	if q.n == 0 {
		used, q.head = len(q.blocks), 0
	}
	if !q.lent {
		q.free = append(q.free, q.blocks[:used]...)
	}
	kept := copy(q.blocks, q.blocks[used:])
	clear(q.blocks[kept:])
	q.blocks = q.blocks[:kept]
	q.peak = max(q.high, q.peak-q.peak/64)
	q.high = kept
	if spare := q.peak - kept; len(q.free) > spare {
		clear(q.free[spare:])
		q.free = q.free[:spare]
	}
}

// Reset empties the queue, keeping its blocks for reuse.
func (q *outQueue) Reset() { q.Drop(q.n) }

// AppendTo appends the queued tuples [from, to) to dst.
func (q *outQueue) AppendTo(dst []Tuple, from, to int) []Tuple {
	for from < to {
		j := q.head + from
		b := q.blocks[j>>outBlockBits][j&outBlockMask:]
		c := min(len(b), to-from)
		dst = append(dst, b[:c]...)
		from += c
	}
	return dst
}
