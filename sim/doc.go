// Package sim is streamha's deterministic discrete-event simulator: a
// virtual clock and event queue, a network model (latency, jitter,
// bandwidth, loss, partitions), a CPU model per host (so backlogs build up
// during a failure and catch-up takes simulated time), a failure-detector
// model and a fault schedule. It drives the same ha.Node state machines as
// the cluster runtime. A run is a pure function of its Config: no wall
// clock, goroutines or global random source are used.
package sim
