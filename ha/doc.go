// Package ha is streamha's common runtime: tuples and their wire codec,
// operators and their recovery classes, the single-threaded node state
// machine (queues, sequence numbers, duplicate elimination, epochs), the
// Strategy hooks and the Env interface through which a node reaches the
// outside world, and the trace events every measurement is computed from.
//
// A node has two audiences, each with its surface: drivers (the simulator,
// the in-process and cluster runtimes) see it as a Driver (driver.go), and
// strategies as a Runtime, beside Strategy, Hooks and the optional
// capabilities in strategy.go.
//
// Nothing in this package starts goroutines, sleeps, reads the wall clock or
// uses a global random source: the simulator (package sim) and the real
// cluster runtime drive the same node code through Env.
package ha
