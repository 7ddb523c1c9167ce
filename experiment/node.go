package experiment

import "github.com/streamha/streamha/ha"

// NodeConfig is the configuration of host's node in a run of e under
// strategy st, with topo = e.Topology(st) and env the driver's Env for the
// host: the one place an experiment's settings become a node's, so that
// the simulator, the in-process runtime, the cluster runtime and the
// interaction harness (ha/hatest) build the same node. Settings that are
// never part of an experiment (NodeConfig.NoRepair, NodeConfig.Planted)
// are left for the caller.
func (e *Experiment) NodeConfig(host string, topo *ha.Topology, st ha.Strategy, env ha.Env) ha.NodeConfig {
	return ha.NodeConfig{
		Host: host, Topology: topo, Env: env, Strategy: st,
		Source:     e.SourceSpec(0),
		NoFencing:  e.NoFencing(),
		TraceEmits: e.TraceEmits,
	}
}
