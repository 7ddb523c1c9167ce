package sim

import (
	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// ConfigFor builds the simulator configuration of experiment e for one
// strategy; faults are included unless failureFree.
func ConfigFor(e *experiment.Experiment, st ha.Strategy, failureFree bool) (Config, error) {
	topo := e.Topology(st)
	node := e.NodeConfig("", topo, st, nil) // the node settings every host shares
	cfg := Config{
		Seed: e.Seed, Topology: topo, Strategy: st, Source: node.Source,
		Network: Network{Latency: e.Network.Latency.D(), Jitter: e.Network.Jitter.D(),
			Bandwidth: float64(e.Network.Bandwidth), Loss: e.Network.Loss},
		CPU:        CPU{PerOp: e.CPU.PerOp.D(), PerByte: e.CPU.PerByte.D(), PerEvent: e.CPU.PerEvent.D()},
		Detector:   detectorModel(e, len(topo.Hosts())),
		NoFencing:  node.NoFencing,
		TraceEmits: node.TraceEmits,
		End:        e.End(),
	}
	if failureFree {
		return cfg, nil
	}
	faults, err := e.Schedule(topo, st.Name())
	if err != nil {
		return cfg, err
	}
	cfg.Faults = faults
	return cfg, nil
}

// detector turns the detector config into the simulator's timeout model.
// The memberlist model follows hashicorp/memberlist: a failed probe is
// noticed after one probe interval plus the probe timeout (taken as the
// configured timeout), then the node stays suspect for
// suspicion_mult × max(1, log10(n)) probe intervals before it is declared dead.
func detectorModel(e *experiment.Experiment, hosts int) Detector {
	return Detector{Heartbeat: e.Detector.Heartbeat.D(), Timeout: e.DetectorTimeout(hosts)}
}
