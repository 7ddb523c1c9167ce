package ha

import (
	"math/rand/v2"
	"time"
)

// Env is everything a node may use of the outside world. The simulator
// implements it with a virtual clock and a modelled network and CPU; the
// cluster runtime with the real clock and TCP. A node never reaches the
// outside world any other way.
//
// Messages cross an Env lent, for one call, in both directions:
//
//   - Send lends the message and its Tuples for the duration of the call
//     only: the node reuses both as soon as Send returns (it sends every
//     data batch from one message and one batch). An Env that keeps either
//     past Send — to deliver it later, or to hand it to a writer — copies
//     them first, into memory it may recycle.
//   - Whatever else a sent message refers to (Route, Route.Receivers,
//     Body) is never modified after Send, by the node or the Env, so an
//     Env may share it without copying.
//   - Deliver lends the delivered message and its Tuples for that call
//     only: a node and its hooks copy what they keep (see Hooks.Message),
//     so an Env may recycle its copy once Deliver returns.
//
// There is no other send path: a runtime that offered a second one (the
// in-process runtime took a node's batch for good in exchange for an
// empty one) gained no throughput and allocated more.
type Env interface {
	// Now is the time since the start of the run.
	Now() time.Duration
	// Send sends m to host; m and m.Tuples are lent for the call only (see
	// Env). Delivery may fail silently (a crashed host, a partition,
	// loss); protocols must not rely on it.
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
