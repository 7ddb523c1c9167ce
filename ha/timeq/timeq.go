package timeq

import "time"

// Entry is one queued value with its ordering key, kept inline so that
// sifting compares without touching the value.
type Entry[T any] struct {
	At  time.Duration
	Seq uint64
	V   T
}

// Before orders entries by At, then Seq.
func (a Entry[T]) Before(b Entry[T]) bool {
	return a.At < b.At || (a.At == b.At && a.Seq < b.Seq)
}

// Queue is a 4-ary min-heap of entries ordered by (At, Seq): half the
// depth of a binary heap, and a node's four children share a cache line or
// two, which matters once a million entries are pending. With unique keys
// (a Seq that grows with each push), the pop order is a pure function of
// the pushes: the same as any other correct priority queue would give.
// The zero value is an empty queue; q[0] is the earliest entry.
type Queue[T any] []Entry[T]

// Push adds x.
func (q *Queue[T]) Push(x Entry[T]) {
	h := append(*q, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !x.Before(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
	*q = h
}

// Pop removes and returns the earliest entry; the queue must not be empty.
func (q *Queue[T]) Pop() Entry[T] {
	h := *q
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h[n] = Entry[T]{} // drop what it refers to
	h = h[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if h[j].Before(h[m]) {
				m = j
			}
		}
		if !h[m].Before(x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	if n > 0 {
		h[i] = x
	}
	*q = h
	return top
}
