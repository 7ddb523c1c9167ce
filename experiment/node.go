package experiment

import (
	"math"
	"time"

	"github.com/streamha/streamha/ha"
)

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

// DetectorTimeout is how long after a host's last heartbeat the modelled
// failure detector declares it dead, among hosts hosts: the configured
// timeout, plus, for the memberlist model, its suspicion time (after
// hashicorp/memberlist: suspicion_mult × max(1, log10(hosts)) probe
// intervals). The simulator adds a random phase of up to one heartbeat;
// the in-process runtime waits heartbeat + this.
func (e *Experiment) DetectorTimeout(hosts int) time.Duration {
	d := e.Detector.Timeout.D()
	if e.Detector.Model == "memberlist" {
		scale := max(1, math.Log10(float64(hosts)))
		d += time.Duration(float64(e.Detector.SuspicionMult) * scale * float64(e.Detector.Heartbeat.D()))
	}
	return d
}
