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
