// Package experiment is the experiment file every streamha driver reads:
// the YAML model (query, placement, strategies, network, CPU model,
// detector, faults, seed) with its built-in defaults, strict parsing whose
// errors name FILE:LINE and the field (with the fix), the ranges a run must
// stay within (NormalLimits, LargeLimits), the deployment topology a
// strategy gets, the fault schedule resolved against it, and the seeded
// random sources that make a run a pure function of (experiment, seed).
// A sweep (Sweep, sweep.go) is a family of experiments: a base experiment,
// swept parameters and seeds, each point's Experiment built from them.
//
// The simulator (sim), the cluster runtime (cluster) and the in-process
// runtime (inproc) all build their runs from an Experiment; none of them
// imports another.
package experiment
