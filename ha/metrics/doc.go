// Package metrics computes every figure streamha reports — recovery type,
// detection delay, recovery time, added latency, unavailability and
// overhead — from traces alone, the same way for simulated and real runs.
// Definitions follow docs/semantics.md.
package metrics
