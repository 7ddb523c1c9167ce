package sim

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrConfig is returned (wrapped) by New for a configuration it cannot run.
var ErrConfig = errors.New("invalid simulator configuration")

// Validate reports the first field of c that the simulator cannot run
// with, naming it: the checks an experiment file gets from
// experiment.Validate, for a Config built in Go. New calls it first.
func (c *Config) Validate() error {
	switch {
	case c.Topology == nil:
		return fmt.Errorf("%w: Topology: nil", ErrConfig)
	case c.Strategy == nil:
		return fmt.Errorf("%w: Strategy: nil", ErrConfig)
	case c.End <= 0:
		return fmt.Errorf("%w: End: must be positive, got %s", ErrConfig, c.End)
	case c.MaxEvents < 0:
		return fmt.Errorf("%w: MaxEvents: must not be negative, got %d", ErrConfig, c.MaxEvents)
	case !(c.Network.Loss >= 0 && c.Network.Loss <= 1):
		return fmt.Errorf("%w: Network.Loss: a probability in [0, 1], got %g", ErrConfig, c.Network.Loss)
	case !(c.Network.Bandwidth >= 0) || math.IsInf(c.Network.Bandwidth, 0):
		return fmt.Errorf("%w: Network.Bandwidth: must be a finite number ≥ 0 (0 = unlimited), got %g", ErrConfig, c.Network.Bandwidth)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"Network.Latency", c.Network.Latency}, {"Network.Jitter", c.Network.Jitter},
		{"CPU.PerOp", c.CPU.PerOp}, {"CPU.PerByte", c.CPU.PerByte}, {"CPU.PerEvent", c.CPU.PerEvent},
		{"Detector.Heartbeat", c.Detector.Heartbeat}, {"Detector.Timeout", c.Detector.Timeout},
	} {
		if d.v < 0 {
			return fmt.Errorf("%w: %s: must not be negative, got %s", ErrConfig, d.name, d.v)
		}
	}
	if err := c.Topology.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}
