// Package ha is streamha's common runtime: tuples and their wire codec,
// operators and their recovery classes, the single-threaded node state
// machine (queues, sequence numbers, duplicate elimination, epochs), the
// Strategy hooks and the Env interface through which a node reaches the
// outside world, and the trace events every measurement is computed from.
//
// Nothing in this package starts goroutines, sleeps, reads the wall clock or
// uses a global random source: the simulator (package sim) and the real
// cluster runtime drive the same node code through Env.
package ha
