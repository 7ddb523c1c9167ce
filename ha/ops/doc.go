// Package ops is streamha's operator library: filters, maps, windowed
// aggregates, a running sum, a hash chain, a windowed join and a union, each
// with its recovery class (see ha.Class), byte-deterministic snapshots and,
// for the stateful ones, incremental checkpoints (ha.Incremental), a state
// horizon (ha.Horizon) and a state size (ha.Sizer).
//
// Every operator is a deterministic function of its state and its input
// sequence: nothing here starts goroutines, reads the clock or uses a global
// random source, and the tuples emitted by one Process call come in a fixed
// order (window start, then key ascending, ...), never in map order.
//
// Event time is the tuple's Time (ns). Windowed operators close windows on a
// watermark derived from the event times seen: a window [start, start+size)
// closes when the watermark reaches start+size, and its result carries
// Time = Emit = start+size. Windows close when a tuple arrives, and all of
// them when the end-of-stream mark arrives (ha.EndMark): a window the end
// of the stream cuts short has Emit = the end of the stream. Every operator
// passes the mark on (join and union once both ports have ended).
package ops
