// Package strategies is the registry of HA strategies (name → constructor,
// with documented parameters) and holds the two baselines: "none" (no high
// availability at all) and "amnesia" (restart on a spare with empty state,
// no replay). Strategy packages register themselves from init functions;
// import them for their side effect.
package strategies
