// Package timeq is the time-ordered queue behind the simulator's events
// and a cluster node's timers: a min-heap of values ordered by (At, Seq).
package timeq
