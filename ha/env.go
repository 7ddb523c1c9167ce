package ha

import (
	"math/rand/v2"
	"time"
)

// Env is everything a node may use of the outside world. The simulator
// implements it with a virtual clock and a modelled network and CPU; the
// cluster runtime with the real clock and TCP. A node never reaches the
// outside world any other way.
type Env interface {
	// Now is the time since the start of the run.
	Now() time.Duration
	// Send queues m for delivery to host. Delivery may fail silently (a
	// crashed host, a partition, loss); protocols must not rely on it.
	Send(to string, m *Message)
	// SetTimer arranges for the node's Timer(name) to run after d. Timers
	// are one-shot; setting a pending name again adds a second firing.
	SetTimer(d time.Duration, name string)
	// Work charges CPU for the handler now running: ops operator
	// invocations and bytes of (de)serialisation. The simulator turns it
	// into busy time with its CPU model; real runtimes only count it.
	Work(ops, bytes int)
	// Rand is the node's own seeded random source.
	Rand() *rand.Rand
	// Trace records an event. A delivery's Tuple (EvDeliver) is only valid
	// during the call: an Env that keeps it must copy it (Trace.Add does).
	Trace(e Event)
}

// CopySender is an optional capability of an Env, detected by type
// assertion: SendCopy is Send for a data message that the Env copies —
// the Message and its Tuples — before it returns, so the node sends from
// one reused message and batch and allocates nothing per message. An Env
// with this capability may recycle its copy once the receiving node has
// handled it, which is why a node and its hooks never keep a delivered
// message or its Tuples after Deliver returns (see Hooks.Message).
type CopySender interface {
	SendCopy(to string, m *Message)
}

// BatchSwapper is an optional capability of a CopySender Env: SendSwap
// sends data message m taking its Tuples as they are — the node gives its
// batch up — and returns an empty batch, of at least the same capacity,
// for the node's next output. A node sends through it instead of SendCopy
// to the last (usually the only) receiver of a batch, which saves copying
// every sent tuple once more. If the message cannot be sent (the receiver
// is gone), SendSwap returns m.Tuples back, emptied.
type BatchSwapper interface {
	SendSwap(to string, m *Message) []Tuple
}
