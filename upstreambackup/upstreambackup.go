// Package upstreambackup implements the "upstream backup" high-availability
// strategy of Hwang et al. (ICDE 2005), registered as "upstream-backup".
//
// Every node is the backup of its downstream neighbour: it keeps the tuples
// it sends in its output queue until a level-1 acknowledgement says their
// effects reached the next hop. A downstream node acknowledges two levels
// to each upstream every ack_interval, in one KindAck message when both
// are due (Seq = the level-1 point, the level-0 point in the body):
//
//   - level 0 (Seq = the highest input seq received on that port): the
//     tuples arrived;
//   - level 1 (Seq = an input seq no retained state depends on any more):
//     every operator of the node reports, through ha.Horizon, the oldest
//     event time its state still depends on (for a tumbling window the
//     start of the oldest open window); the node maps that time to an
//     input seq with a compact record of (seq, event time) of the inputs
//     it accepted, and acknowledges up to that seq once its own outputs
//     emitted so far (which include every output derived from those inputs)
//     are level-0 acknowledged by its downstream. The sink acknowledges
//     level 1 directly: it has no state and no downstream.
//
// An upstream trims its queue at the level-1 point, or earlier when the
// retention bound (max_tuples, max_age) says so. On a failure the first live
// spare of the failed fragment restarts it with empty state and takes over
// with fresh sequence numbers; the upstream replays its whole queue, which
// holds every input still affecting the lost state, so no input is lost.
// Outputs the failed node had already delivered are produced again:
// repeating recovery, or precise with dedup, where downstream nodes drop
// outputs whose id they already received from that fragment. The dedup
// memory is bounded: an id can be forgotten once the replay that could
// produce it again is impossible, that is once its event time is at or below
// the floor of the queue that a replacement would replay (relayed by the
// upstream in "ub.floor" messages, which only dedup needs: without it none
// are sent).
//
// A restarted window operator also recreates windows that started before
// the replayed history (a sliding window opens every window containing the
// first replayed tuple). They are incomplete, and with level-1 trimming
// they were all delivered complete before the failure: the replacement
// learns the queue floor from its upstream ("ub.replay-floor") and tells
// its downstream to drop window results starting at or before it
// ("ub.incomplete"). When a retention bound cut into the state, the dropped
// or partial windows make the recovery a gap, the trade-off the strategy
// exposes. State that depends on all history (a running sum) never lets the
// level-1 point advance: the queue grows without bound, which the result
// reports (sim.Reporter) rather than hides.
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
