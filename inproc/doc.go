// Package inproc is a real-time runtime that runs a whole deployment inside
// one process: one goroutine per host, an unbounded mailbox per host,
// messages handed over by pointer (no encoding; data messages copied into
// pooled memory the receiver gives back), timers on the real clock.
// It drives the same ha.Node state machines and strategies as the
// simulator and the cluster runtime, unmodified, and produces the same
// kind of trace, so every metric is computed the same way.
//
// ConfigFor builds a run from an experiment (the node settings through
// experiment.NodeConfig, as every driver); crashes, pauses and partitions
// are its faults, told to the nodes through Node.Handle with PeerDown and
// PeerUp by a perfect detector.
//
// It exists to measure what the node runtime itself costs on real cores
// (streamha bench compares it with a hand-written channel pipeline) and to
// run strategies against real concurrency without sockets (TestDriversAgree
// compares its verdicts with the simulator's). Timing is not
// reproducible here: the seed fixes the source data and the nodes' random
// draws, not the interleaving.
package inproc
