package inproc

import (
	"fmt"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// ConfigFor builds the in-process configuration of experiment e for the
// registered strategy name: the node settings from
// experiment.NodeConfig, as every driver builds them; faults are included
// unless failureFree. The run stops once drained. The detector is perfect
// and waits one heartbeat plus the modelled timeout. Crashes, pauses and
// partitions run as faults; the network has no latency, so a fault on a
// link (delay, loss, corruption) is an error naming it.
func ConfigFor(e *experiment.Experiment, name string, failureFree bool) (Config, error) {
	params := e.ParamsFor(name)
	st, err := strategies.Build(name, params)
	if err != nil {
		return Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	topo := e.Topology(st)
	node := e.NodeConfig("", topo, st, nil)
	cfg := Config{
		Seed: e.Seed, Topology: topo,
		NewStrategy: func() (ha.Strategy, error) { return strategies.Build(name, params) },
		Source:      node.Source, NoFencing: node.NoFencing, TraceEmits: node.TraceEmits,
		End: e.End(), StopWhenDrained: true,
		DetectAfter: e.Detector.Heartbeat.D() + e.DetectorTimeout(len(topo.Hosts())),
	}
	if failureFree {
		return cfg, nil
	}
	faults, err := e.Schedule(topo, name)
	if err != nil {
		return cfg, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	for i, f := range faults {
		switch f.Kind {
		case experiment.FaultCrash:
			cfg.Crashes = append(cfg.Crashes, Crash{At: f.At, Host: f.Host})
		case experiment.FaultPause:
			cfg.Pauses = append(cfg.Pauses, Pause{At: f.At, For: f.For, Host: f.Host})
		case experiment.FaultPartition:
			cfg.Partitions = append(cfg.Partitions, Partition{At: f.At, For: f.For, Groups: f.Groups})
		default:
			return cfg, fmt.Errorf("%w: faults[%d]: a %s fault acts on the network, which the in-process runtime does not model", ErrConfig, i, f.Kind)
		}
	}
	return cfg, nil
}
