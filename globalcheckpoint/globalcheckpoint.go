// Package globalcheckpoint implements Flink-style global checkpoints with
// global rollback (Carbone et al., "Lightweight Asynchronous Snapshots for
// Distributed Dataflows", 2015), registered as "global-checkpoint". It is
// written only against the strategy interface of package ha and the
// registry of package strategies.
//
// Roles. The sources keep replay logs (their retained output); every
// fragment runs on one primary (its spares wait). The sink's host is also
// the checkpoint store: Flink's durable checkpoint storage and its
// high-availability metadata (DFS and ZooKeeper), which hold the
// snapshots, the last completed checkpoint, the rollback generation and
// who coordinates at which term. The coordinator (Flink's JobManager:
// completion decisions, failure detection, rollback orders, trimming)
// runs on a fragment host, so a fault may hit it.
//
// The protocol:
//
//   - Coordinator. It starts on the first fragment's first host at term
//     1. When the store's detector declares the coordinator dead (after
//     checking it is not the store that is cut off: see storePeerDown),
//     the store appoints the primary of the first fragment whose primary
//     it sees alive at the next term ("gc.appoint"). The coordinator
//     keeps nothing the store cannot rebuild: the appointed host learns
//     the generation and the last completed checkpoint from the
//     appointment and, since its predecessor's host — a fragment host —
//     failed, rolls the job back from that checkpoint. Every order it
//     sends the store carries its term; the store serves only the current
//     term's, so a replaced coordinator (paused, then resumed) can
//     neither roll the job back nor complete a checkpoint, and is told
//     who coordinates now ("gc.fenced").
//   - Barriers. Every checkpoint_interval, on a fixed grid of multiples of
//     the interval, each source tells the first fragment's primary that
//     checkpoint k (k = 2 × time / interval; the odd ids are the final
//     checkpoints at the end of the stream) follows its output seq s
//     ("gc.barrier"). Sequence numbers make the barrier's place in the
//     stream explicit, so it may travel beside the data rather than in it.
//   - Alignment and snapshots. A fragment snapshots checkpoint k once the
//     barrier position of every input is known and every input has reached
//     it: a fragment with one input snapshots just before it processes the
//     tuple after the barrier; a fragment with two inputs (join, union)
//     keeps processing the input whose barrier came first and snapshots when
//     the second input reaches its barrier. The snapshot records the actual
//     input positions, the output seq and the operators' states, goes to
//     the store ("gc.snap"), and the barrier is forwarded downstream at the
//     snapshot's output seq. Serialisation is charged to the fragment as CPU
//     per byte.
//   - Completion. The store tells the coordinator each snapshot it holds
//     ("gc.stored"); once it holds checkpoint k from every fragment the
//     coordinator orders its completion ("gc.commit"), the store records
//     k as the one a rollback restores and answers with the trim positions
//     ("gc.committed"), and the coordinator tells every source and fragment
//     how far it may trim its retained output ("gc.complete"): the
//     positions the next fragment recorded in k.
//   - Global rollback. When the coordinator's failure detector declares any
//     fragment's primary dead, it orders the store ("gc.rollback") to
//     restart every fragment from the last completed checkpoint: live
//     primaries in place, failed fragments on their first live spare. The
//     store starts the next generation, answers ("gc.begun") and sends
//     each host its snapshot in chain order ("gc.restore", re-sent until
//     acknowledged); the coordinator tells the sources where they restart.
//     Each host restores its snapshot (trace: restore), takes over at a new
//     epoch and asks its upstream to resume after the restored positions;
//     the sources rewind by replaying their logs from there (trace: note
//     "rewind", then replay_start). With no completed checkpoint yet, every
//     fragment restarts empty and the sources replay from their first tuple.
//   - Sinks. With sink: at-least-once the sink delivers at once; after a
//     rollback it accepts the last fragment's output again from the
//     restored checkpoint, so every output delivered since that checkpoint
//     is delivered twice (rollback, repeating). With sink: transactional the
//     sink holds each output until a completed checkpoint covers it (the
//     last fragment's output seq in that checkpoint) and discards the held
//     outputs a rollback re-creates: precise for deterministic queries, at
//     the price of about one checkpoint interval of added latency.
package globalcheckpoint

import (
	"fmt"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// Name is the registered strategy name.
const Name = "global-checkpoint"

// Sink modes.
const (
	SinkAtLeastOnce   = "at-least-once"
	SinkTransactional = "transactional"
)

// Defaults of the parameters.
const (
	DefaultInterval = time.Second
	DefaultSink     = SinkTransactional
)

// Config is the strategy's configuration; DefaultConfig gives the defaults.
type Config struct {
	// Interval is the time between checkpoints (barriers injected by the
	// sources), at least 1 ms.
	Interval time.Duration
	// Sink is SinkAtLeastOnce or SinkTransactional.
	Sink string
}

// DefaultConfig returns the default configuration.
func DefaultConfig() Config { return Config{Interval: DefaultInterval, Sink: DefaultSink} }

// Validate checks the ranges of the configuration.
func (c Config) Validate() error {
	switch {
	case c.Interval < time.Millisecond:
		return fmt.Errorf("checkpoint_interval: must be at least 1ms, got %s", c.Interval)
	case c.Sink != SinkAtLeastOnce && c.Sink != SinkTransactional:
		return fmt.Errorf("sink: want %s or %s, got %q", SinkAtLeastOnce, SinkTransactional, c.Sink)
	}
	return nil
}

func init() {
	strategies.Register(strategies.Info{
		Name: Name,
		Doc: "Global checkpoints with global rollback (Flink's asynchronous barrier snapshots): the sources inject " +
			"barriers every checkpoint_interval, every fragment snapshots its state to the checkpoint store once " +
			"all its inputs passed the barrier, and the coordinator completes a checkpoint when every fragment's " +
			"snapshot is stored, letting the sources trim their replay logs (the store runs on the sink's host, the " +
			"coordinator on a fragment host the store appoints). On any failure every fragment restarts from the last completed checkpoint (failed ones on a " +
			"spare) and the sources rewind. sink: at-least-once repeats the outputs since that checkpoint " +
			"(rollback, repeating); sink: transactional releases outputs only when a checkpoint covering them " +
			"completes (precise for deterministic queries, latency about one interval more).",
		Params: []strategies.Param{
			{Name: "checkpoint_interval", Type: "duration", Default: DefaultInterval.String(),
				Doc: "time between barriers injected by the sources (duration, ≥ 1ms)"},
			{Name: "sink", Type: SinkTransactional + "|" + SinkAtLeastOnce, Default: DefaultSink,
				Doc: "transactional: outputs are released when a checkpoint covering them completes; at-least-once: delivered at once, repeated after a rollback"},
		},
		New: func(p strategies.Params) (ha.Strategy, error) {
			return New(Config{Interval: p.Duration("checkpoint_interval"), Sink: p.String("sink")})
		},
		Promise: promise,
		Soak:    soakDraw,
		Model:   model,
		Color:   6,

		// Its own history in the run report (timeline.go).
		Timeline: timeline,
	})
}

// Strategy is global checkpointing. One value serves every node of a run.
type Strategy struct{ cfg Config }

// New builds the strategy.
func New(c Config) (*Strategy, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &Strategy{cfg: c}, nil
}

// Config returns the strategy's configuration.
func (s *Strategy) Config() Config { return s.cfg }

// Name implements ha.Strategy.
func (s *Strategy) Name() string { return Name }

// Replicas implements ha.Strategy: a primary alone; failed fragments
// restart on spares.
func (s *Strategy) Replicas() int { return 1 }

// InitialReceivers implements ha.Strategy: the primary alone.
func (s *Strategy) InitialReceivers(hosts []string) []string { return hosts[:1] }

// Hooks implements ha.Strategy.
func (s *Strategy) Hooks(n *ha.Node) ha.Hooks {
	h := &hooks{n: n, cfg: s.cfg}
	switch {
	case n.IsSink():
		h.st = newStore(n.Topology())
	case !n.IsSource():
		h.co = newCoordinator(n)
	}
	return h
}
