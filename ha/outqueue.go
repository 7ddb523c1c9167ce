package ha

import "sort"

// outBlockBits sets the size of the output queue's blocks: 512 tuples,
// 40 KiB.
const (
	outBlockBits = 9
	outBlock     = 1 << outBlockBits
	outBlockMask = outBlock - 1
)

// outBlockOf is one block of the output queue.
type outBlockOf = [outBlock]Tuple

// outQueue is a node's output queue: the retained tuples in seq order,
// held in fixed-size blocks. Appending never copies what is queued, and
// the blocks a trim empties are kept on a free list for the appends that
// follow, so a queue that is filled and trimmed every ack interval touches
// its memory once. A contiguous slice had to be regrown by copying while a
// window filled, and at high rates those copies and the fresh pages they
// touched were most of upstream backup's CPU in cluster mode. No sent
// message shares the queue's memory (Env: Send lends), so emptied blocks
// are always reused.
type outQueue struct {
	// The fields Push uses for every tuple come first, 14 bytes,
	// so that they can share a cache line with the node's other per-output
	// fields (BenchmarkOutputFieldsShareALine): in cluster mode each line a
	// message touches is a miss.
	//
	// tail is the block last appended: Push writes into it without loading
	// the block table. Drop only removes blocks from the front, or all of
	// them (and then Push appends one before it writes), so tail is the
	// last block whenever Push uses it.
	tail *outBlockOf
	n    int32  // queued tuples
	head uint16 // blocks[0][head:] is the oldest tuple (head < outBlock)

	blocks []*outBlockOf
	free   []*outBlockOf
	peak   int // recent peak of blocks in use (see Drop)
	high   int // blocks in use at most since the last Drop
	most   int // the most tuples queued at once before the last Drop (Max)
}

// Len is the number of queued tuples.
func (q *outQueue) Len() int { return int(q.n) }

// Max is the most tuples the queue has held at once. Between two Drops
// the queue only grows, so the most is reached just before a Drop or now.
func (q *outQueue) Max() int { return max(q.most, int(q.n)) }

// At is the i-th queued tuple, oldest first (0 ≤ i < Len).
func (q *outQueue) At(i int) *Tuple {
	j := int(q.head) + i
	return &q.blocks[j>>outBlockBits][j&outBlockMask]
}

// Index is the position of the first queued tuple whose seq is at least
// seq: Len when there is none. Seqs increase along the queue, and a node
// numbers its output consecutively, so the position is first guessed from
// the oldest seq and checked: two reads instead of a binary search's
// dozen, each a cache miss when an ack trims a queue in cluster mode.
func (q *outQueue) Index(seq uint64) int {
	n := q.Len()
	if n == 0 {
		return 0
	}
	first := q.At(0).Seq
	if seq <= first {
		return 0
	}
	if i := seq - first; i < uint64(n) {
		if q.At(int(i)).Seq == seq {
			return int(i)
		}
	} else if q.At(n-1).Seq < seq {
		return n
	}
	return sort.Search(n, func(i int) bool { return q.At(i).Seq >= seq })
}

// Push appends a copy of *t. It takes a pointer: an 80-byte argument
// passed by value is copied through the stack, and in cluster mode those
// stack lines are out of cache at every message.
func (q *outQueue) Push(t *Tuple) {
	j := int(q.head) + int(q.n)
	if j&outBlockMask == 0 {
		// The last block is full, or there is none: while the queue holds
		// tuples its last block holds the newest, and an empty queue has
		// no blocks and head 0 (Drop). So the block table is read only
		// here, once per block.
		q.tail = q.newBlock()
		q.blocks = append(q.blocks, q.tail)
		q.high = max(q.high, len(q.blocks))
	}
	q.tail[j&outBlockMask] = *t
	q.n++
}

func (q *outQueue) newBlock() *outBlockOf {
	if k := len(q.free); k > 0 {
		b := q.free[k-1]
		q.free = q.free[:k-1]
		return b
	}
	return new(outBlockOf)
}

// Drop removes the k oldest tuples (k ≤ Len). Emptied blocks go to the
// free list for the appends that follow. Together
// the used and free blocks stay within the queue's recent peak: the most
// blocks it used between two Drops, decayed by 1/64 per Drop when it no
// longer reaches it (down to 63 blocks), so memory is given back once a
// queue that peaked stays short for many trims.
func (q *outQueue) Drop(k int) {
	q.most = q.Max()
	head := int(q.head) + k
	q.n -= int32(k)
	used := head >> outBlockBits
	head &= outBlockMask
	if q.n == 0 {
		used, head = len(q.blocks), 0
	}
	q.head = uint16(head)
	q.free = append(q.free, q.blocks[:used]...)
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
func (q *outQueue) Reset() { q.Drop(q.Len()) }

// AppendTo appends the queued tuples [from, to) to dst.
func (q *outQueue) AppendTo(dst []Tuple, from, to int) []Tuple {
	for from < to {
		j := int(q.head) + from
		b := q.blocks[j>>outBlockBits][j&outBlockMask:]
		c := min(len(b), to-from)
		dst = append(dst, b[:c]...)
		from += c
	}
	return dst
}
