package upstreambackup

import (
	"fmt"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// Name is the registered strategy name.
const Name = "upstream-backup"

// Defaults of the parameters.
const (
	DefaultAckInterval = 100 * time.Millisecond
	// MaxAckInterval bounds ack_interval: beyond it queues hold minutes of data.
	MaxAckInterval = time.Minute
)

func init() {
	strategies.Register(strategies.Info{
		Name: Name,
		Doc: "Upstream backup (Hwang et al.): every node keeps the tuples it sends in an output queue, trimmed " +
			"by level-1 acks (the effects reached the next hop, from each operator's oldest needed input). " +
			"On failure a spare restarts the fragment with empty state and the upstream replays its queue. " +
			"Cost: acks and queue memory only; recovery ≈ detection + rebuilding state from the replay; " +
			"repeating recovery (precise with dedup), convergent or gap when retention is bounded below the state.",
		Params: []strategies.Param{
			{Name: "ack_interval", Type: "duration", Default: DefaultAckInterval.String(),
				Doc: "how often every node with input to acknowledge sends level-0 and level-1 acks to its upstreams (and, with dedup, queue floors downstream)"},
			{Name: "dedup", Type: "bool", Default: "false",
				Doc: "downstream nodes drop replayed outputs whose id they already received (precise instead of repeating)"},
			{Name: "max_tuples", Type: "int", Default: "0",
				Doc: "retention bound: at most this many tuples per output queue, oldest dropped first (0 = unbounded)"},
			{Name: "max_age", Type: "duration", Default: "0s",
				Doc: "retention bound: drop queued tuples emitted longer ago than this (0 = unbounded)"},
		},
		New: func(p strategies.Params) (ha.Strategy, error) {
			return New(Config{
				AckInterval: p.Duration("ack_interval"),
				Dedup:       p.Bool("dedup"),
				MaxTuples:   p.Int("max_tuples"),
				MaxAge:      p.Duration("max_age"),
			})
		},
		Promise: promise,
		Soak:    soakDraw,
		Model:   model,
		Color:   4,

		// Its own history in the run report (timeline.go).
		Timeline: timeline,
	})
}

// Config holds the strategy's parameters.
type Config struct {
	// AckInterval is how often acks (and, with Dedup, queue floors) are sent.
	AckInterval time.Duration
	// Dedup makes downstream nodes drop outputs whose id they already have.
	Dedup bool
	// MaxTuples bounds every output queue in tuples; 0 means unbounded.
	MaxTuples int
	// MaxAge bounds how long a tuple stays queued; 0 means unbounded.
	MaxAge time.Duration
}

// DefaultConfig returns the default parameters: 100 ms acks, no dedup,
// unbounded retention.
func DefaultConfig() Config { return Config{AckInterval: DefaultAckInterval} }

// Strategy is the upstream-backup strategy. One value serves one run: it
// collects the queue figures its nodes report (see Report).
type Strategy struct {
	cfg   Config
	stats *runStats
}

// New builds the strategy, checking parameter ranges.
func New(c Config) (*Strategy, error) {
	switch {
	case c.AckInterval <= 0:
		return nil, fmt.Errorf("ack_interval: must be positive, got %s", c.AckInterval)
	case c.AckInterval > MaxAckInterval:
		return nil, fmt.Errorf("ack_interval: must be at most %s, got %s", MaxAckInterval, c.AckInterval)
	case c.MaxTuples < 0:
		return nil, fmt.Errorf("max_tuples: must not be negative, got %d", c.MaxTuples)
	case c.MaxAge < 0:
		return nil, fmt.Errorf("max_age: must not be negative, got %s", c.MaxAge)
	case c.MaxAge > 0 && c.MaxAge < time.Millisecond:
		return nil, fmt.Errorf("max_age: must be 0 (unbounded) or at least 1ms, got %s", c.MaxAge)
	}
	return &Strategy{cfg: c, stats: newRunStats()}, nil
}

// Config returns the strategy's parameters.
func (s *Strategy) Config() Config { return s.cfg }

// Name implements ha.Strategy.
func (*Strategy) Name() string { return Name }

// Replicas implements ha.Strategy: the primary alone (spares come from the experiment).
func (*Strategy) Replicas() int { return 1 }

// InitialReceivers implements ha.Strategy: only the primary receives input.
func (*Strategy) InitialReceivers(hosts []string) []string { return hosts[:1] }

// Hooks implements ha.Strategy.
func (s *Strategy) Hooks(n *ha.Node) ha.Hooks { return newHooks(n, s.cfg, s.stats) }
