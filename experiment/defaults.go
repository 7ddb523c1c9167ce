package experiment

import "time"

// The defaults of an experiment file: the value each field left out
// takes, in one place, each with the reason for it. fillDefaults applies
// them, docs/experiment.md's tables list them (TestDefaultsAreDocumented
// checks that they agree), and the in-process runtime's perfect detector
// waits DefaultTimeout by default.
const (
	// DefaultName names output directories when the file names nothing.
	DefaultName = "experiment"
	// DefaultDuration leaves room for a fault in the middle of the run and
	// the recovery after it.
	DefaultDuration = 20 * time.Second
	// DefaultDrain lets in-flight work and recoveries finish after the
	// sources stop.
	DefaultDrain = 3 * time.Second
	// DefaultSpares gives every fragment two idle hosts beyond its
	// replicas: two failures in a row still find a host to take over.
	DefaultSpares = 2
	// DefaultValueDist and DefaultValueMax draw values uniformly in [0, 1).
	DefaultValueDist = "uniform"
	DefaultValueMax  = 1.0
	// DefaultArrival emits at a constant rate.
	DefaultArrival = "constant"
	// DefaultBatch wakes a source at most once a millisecond: fine enough
	// for latencies in milliseconds, few enough events to simulate fast.
	DefaultBatch = time.Millisecond
	// DefaultStreams is one source.
	DefaultStreams = 1
	// DefaultPerOp, DefaultPerByte and DefaultPerEvent are a core's costs of
	// an operator on a tuple, a byte (de)serialised and an event handled,
	// of the order measured on the cluster runtime.
	DefaultPerOp    = 2 * time.Microsecond
	DefaultPerByte  = 2 * time.Nanosecond
	DefaultPerEvent = time.Microsecond
	// DefaultModel is the timeout detector (the memberlist model adds
	// suspicion, see DetectorConfig).
	DefaultModel = "timeout"
	// DefaultHeartbeat and DefaultTimeout declare a silent host dead after
	// 200–250 ms: memberlist's tuned profile on a LAN.
	DefaultHeartbeat = 50 * time.Millisecond
	DefaultTimeout   = 200 * time.Millisecond
	// DefaultSuspicionMult is hashicorp/memberlist's LAN default.
	DefaultSuspicionMult = 4
)

// fillDefaults gives every field left out its default from the table above.
func (e *Experiment) fillDefaults() {
	if e.Name == "" {
		e.Name = DefaultName
	}
	if e.Spares == nil {
		spares := DefaultSpares
		e.Spares = &spares
	}
	if e.Duration == 0 {
		e.Duration = Duration(DefaultDuration)
	}
	if e.Drain == 0 {
		e.Drain = Duration(DefaultDrain)
	}
	s := &e.Source
	if s.Value.Dist == "" {
		s.Value.Dist = DefaultValueDist
		if s.Value.Max == 0 && s.Value.Min == 0 {
			s.Value.Max = DefaultValueMax
		}
	}
	if s.Arrival == "" {
		s.Arrival = DefaultArrival
	}
	if s.Batch == 0 {
		s.Batch = Duration(DefaultBatch)
	}
	if s.Streams == 0 {
		s.Streams = DefaultStreams
	}
	if e.CPU == (CPUConfig{}) {
		e.CPU = CPUConfig{PerOp: Duration(DefaultPerOp), PerByte: Duration(DefaultPerByte), PerEvent: Duration(DefaultPerEvent)}
	}
	d := &e.Detector
	if d.Heartbeat == 0 {
		d.Heartbeat = Duration(DefaultHeartbeat)
	}
	if d.Timeout == 0 {
		d.Timeout = Duration(DefaultTimeout)
	}
	if d.Model == "" {
		d.Model = DefaultModel
	}
	if d.SuspicionMult == 0 {
		d.SuspicionMult = DefaultSuspicionMult
	}
}
