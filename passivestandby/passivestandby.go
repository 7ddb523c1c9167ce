package passivestandby

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// Name is the registered strategy name.
const Name = "passive-standby"

// Defaults of the parameters.
const (
	DefaultInterval    = 200 * time.Millisecond
	DefaultFullEvery   = 10
	DefaultMTBF        = 60 * time.Second
	DefaultAckInterval = 50 * time.Millisecond
)

// Bounds of the automatic checkpoint interval.
const (
	MinAutoInterval = 10 * time.Millisecond
	// initialAutoInterval is used until the first checkpoint cost is measured.
	initialAutoInterval = 200 * time.Millisecond
)

// ReportIntervalMs is the sim.Reporter key of the automatically chosen
// interval (the longest over fragments), in ms; ReportIntervalByNode holds
// the interval per fragment and ReportCostByNode the measured checkpoint
// cost per fragment, in ms.
const (
	ReportIntervalMs     = "checkpoint_interval_chosen_ms"
	ReportIntervalByNode = "checkpoint_interval_chosen_ms_by_node"
	ReportCostByNode     = "checkpoint_cost_ms_by_node"
)

// Config is the strategy's configuration; DefaultConfig gives the defaults.
type Config struct {
	// Interval is the time between checkpoints (ignored when Auto).
	Interval time.Duration
	// Auto chooses the interval from the measured checkpoint cost and MTBF.
	Auto bool
	// Incremental sends operator deltas (ha.Incremental) and only the new
	// output instead of full checkpoints.
	Incremental bool
	// FullEvery is how often an incremental primary sends a full checkpoint
	// (every FullEvery-th checkpoint is full).
	FullEvery int
	// Async models serialisation on another core: the primary does not
	// pause and is not charged for it.
	Async bool
	// LogNondeterminism records and ships interleaving decisions of
	// fragments with two inputs, followed after a takeover.
	LogNondeterminism bool
	// OrderInterval is how often decisions are shipped; 0 ships them with
	// every output, before the output leaves.
	OrderInterval time.Duration
	// MTBF is the expected time between failures (for Auto).
	MTBF time.Duration
	// AckInterval is how often the sink acknowledges what it received.
	AckInterval time.Duration
}

// DefaultConfig returns the default configuration.
func DefaultConfig() Config {
	return Config{
		Interval: DefaultInterval, FullEvery: DefaultFullEvery,
		MTBF: DefaultMTBF, AckInterval: DefaultAckInterval,
	}
}

// Validate checks the ranges of the configuration.
func (c Config) Validate() error {
	switch {
	case !c.Auto && c.Interval < time.Millisecond:
		return fmt.Errorf("checkpoint_interval: must be at least 1ms or auto, got %s", c.Interval)
	case c.FullEvery < 1:
		return fmt.Errorf("full_every: must be at least 1, got %d", c.FullEvery)
	case c.MTBF <= 0:
		return fmt.Errorf("mtbf: must be positive, got %s", c.MTBF)
	case c.AckInterval <= 0:
		return fmt.Errorf("ack_interval: must be positive, got %s", c.AckInterval)
	case c.OrderInterval < 0:
		return fmt.Errorf("order_interval: must not be negative, got %s", c.OrderInterval)
	}
	return nil
}

// ParseInterval parses a checkpoint_interval value: a duration such as
// "200ms", or "auto".
func ParseInterval(s string) (d time.Duration, auto bool, err error) {
	s = strings.TrimSpace(s)
	if s == "auto" {
		return 0, true, nil
	}
	d, err = time.ParseDuration(s)
	if err != nil {
		return 0, false, fmt.Errorf("checkpoint_interval: want a duration such as 200ms, or auto, got %q", s)
	}
	if d < time.Millisecond {
		return 0, false, fmt.Errorf("checkpoint_interval: must be at least 1ms or auto, got %s", s)
	}
	return d, false, nil
}

func init() {
	strategies.Register(strategies.Info{
		Name: Name,
		Doc: "Passive standby (Hwang et al.): the primary of each node checkpoints operator state, input positions " +
			"and unacknowledged output to a backup every checkpoint_interval (full or incremental); upstreams keep " +
			"their output until a checkpoint at the backup covers it. On failure the backup restores its last " +
			"complete checkpoint, upstreams replay what followed, downstreams drop duplicates by seq; it then takes " +
			"the next spare as its backup. Precise except for non-deterministic (union) queries unless " +
			"log_nondeterminism is on. Cost: checkpoint bytes and serialisation pauses.",
		Params: []strategies.Param{
			{Name: "checkpoint_interval", Type: "string", Default: DefaultInterval.String(),
				Doc: "time between checkpoints (a duration such as 200ms), or auto: sqrt(2 × measured checkpoint cost × mtbf)"},
			{Name: "mode", Type: "full|incremental", Default: "full",
				Doc: "full: every checkpoint holds all operator state and all unacked output; incremental: only what changed since the previous one"},
			{Name: "full_every", Type: "int", Default: fmt.Sprint(DefaultFullEvery),
				Doc: "with mode incremental, every full_every-th checkpoint is a full one (count, ≥ 1)"},
			{Name: "async", Type: "bool", Default: "false",
				Doc: "false: the primary pauses to serialise (CPU per byte); true: copy-on-write serialisation on another core, no pause and not charged"},
			{Name: "log_nondeterminism", Type: "bool", Default: "false",
				Doc: "record the interleaving decisions of two-input nodes (union), ship them to the backup and follow them after a takeover"},
			{Name: "order_interval", Type: "duration", Default: "0s",
				Doc: "how often decisions are shipped with log_nondeterminism; 0 ships them with every output, before it leaves (duration)"},
			{Name: "mtbf", Type: "duration", Default: DefaultMTBF.String(),
				Doc: "expected time between failures used by checkpoint_interval: auto (duration)"},
			{Name: "ack_interval", Type: "duration", Default: DefaultAckInterval.String(),
				Doc: "how often the sink acknowledges what it received, so the last node can trim its output (duration)"},
		},
		New: func(p strategies.Params) (ha.Strategy, error) {
			c := DefaultConfig()
			var err error
			if c.Interval, c.Auto, err = ParseInterval(p.String("checkpoint_interval")); err != nil {
				return nil, err
			}
			c.Incremental = p.String("mode") == "incremental"
			c.FullEvery = p.Int("full_every")
			c.Async = p.Bool("async")
			c.LogNondeterminism = p.Bool("log_nondeterminism")
			c.OrderInterval = p.Duration("order_interval")
			c.MTBF = p.Duration("mtbf")
			c.AckInterval = p.Duration("ack_interval")
			return New(c)
		},
		Promise: promise,
		Soak:    soakDraw,
		Model:   model,
		Color:   3,

		// Its own history in the run report (timeline.go).
		Timeline: timeline,
	})
}

// Strategy is passive standby. One Strategy value serves every node of a
// run; it collects the automatically chosen intervals for Report.
type Strategy struct {
	cfg Config
	// chosen and cost are per fragment name (auto interval only).
	chosen map[string]time.Duration
	cost   map[string]time.Duration
}

// New builds the strategy.
func New(c Config) (*Strategy, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &Strategy{cfg: c, chosen: map[string]time.Duration{}, cost: map[string]time.Duration{}}, nil
}

// Config returns the strategy's configuration.
func (s *Strategy) Config() Config { return s.cfg }

// Name implements ha.Strategy.
func (s *Strategy) Name() string { return Name }

// Replicas implements ha.Strategy: a primary and its backup.
func (s *Strategy) Replicas() int { return 2 }

// InitialReceivers implements ha.Strategy: only the primary receives input.
func (s *Strategy) InitialReceivers(hosts []string) []string { return hosts[:1] }

// Hooks implements ha.Strategy.
func (s *Strategy) Hooks(n *ha.Node) ha.Hooks {
	return &hooks{n: n, s: s, cfg: s.cfg, backupState: backupState{backupOf: map[string]string{}}}
}

// Report implements sim.Reporter: with checkpoint_interval auto, the
// interval chosen (the longest over fragments, and per fragment) and the
// measured checkpoint cost per fragment.
func (s *Strategy) Report() map[string]any {
	if !s.cfg.Auto || len(s.chosen) == 0 {
		return nil
	}
	names := make([]string, 0, len(s.chosen))
	for k := range s.chosen {
		names = append(names, k)
	}
	sort.Strings(names)
	by := map[string]any{}
	cost := map[string]any{}
	longest := time.Duration(0)
	for _, k := range names {
		by[k] = msRound(s.chosen[k])
		cost[k] = msRound(s.cost[k])
		longest = max(longest, s.chosen[k])
	}
	return map[string]any{
		ReportIntervalMs:     msRound(longest),
		ReportIntervalByNode: by,
		ReportCostByNode:     cost,
	}
}

func msRound(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*1000) / 1000
}

// YoungInterval is Young's first-order optimal checkpoint interval
// sqrt(2 × cost × mtbf), bounded to [MinAutoInterval, mtbf].
func YoungInterval(cost, mtbf time.Duration) time.Duration {
	iv := time.Duration(math.Sqrt(2 * cost.Seconds() * mtbf.Seconds() * 1e18))
	return min(max(iv, MinAutoInterval), mtbf)
}
