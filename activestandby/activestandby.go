package activestandby

import (
	"fmt"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// Name is the registered strategy name.
const Name = "active-standby"

// Parameter defaults.
const (
	DefaultAckInterval  = 100 * time.Millisecond
	DefaultShipInterval = 2 * time.Millisecond
)

func init() {
	strategies.Register(strategies.Info{
		Name: Name,
		Doc: "Process pairs: every fragment runs on a primary and a secondary that both process every input " +
			"tuple (upstreams send to both); only the primary's output goes downstream, the secondary logs its " +
			"output until downstream acknowledgements relayed by the primary trim it. On failure the secondary " +
			"takes over with the same sequence numbers, re-sends its unacknowledged log (downstream drops " +
			"duplicates) and a new secondary is started on a spare by a state transfer. Cost: about 2x processing " +
			"and input bandwidth; recovery time about the detection delay. Fencing of a resumed old primary is " +
			"the experiment-level field fencing.",
		Params: []strategies.Param{
			{Name: "ack_interval", Type: "duration", Default: DefaultAckInterval.String(),
				Doc: "how often each receiver acknowledges its input positions to its upstream primary (which relays the trim point to its secondary); the logs hold about rate × (ack_interval + 2 × latency) tuples"},
			{Name: "ship_decisions", Type: "bool", Default: "false",
				Doc: "the primary of a two-input fragment (union) ships its interleaving decisions to the secondary, which follows them, so a takeover is precise instead of rollback (wrong outputs)"},
			{Name: "ship_interval", Type: "duration", Default: DefaultShipInterval.String(),
				Doc: "with ship_decisions, decisions always travel before every output that depends on them; this is how often the primary also ships decisions that produced no output yet (state-only updates)"},
		},
		New: func(p strategies.Params) (ha.Strategy, error) {
			return New(Config{
				AckInterval:   p.Duration("ack_interval"),
				ShipDecisions: p.Bool("ship_decisions"),
				ShipInterval:  p.Duration("ship_interval"),
			})
		},
		Promise: promise,
		Soak:    soakDraw,
		Model:   model,
		Color:   2,
	})
}

// Config holds the strategy's parameters.
type Config struct {
	// AckInterval is how often receivers acknowledge their input positions.
	AckInterval time.Duration
	// ShipDecisions makes the primary of a two-input fragment ship its
	// interleaving decisions to its secondary.
	ShipDecisions bool
	// ShipInterval is how often decisions that produced no output yet are
	// shipped (decisions always precede the outputs that depend on them).
	ShipInterval time.Duration
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{AckInterval: DefaultAckInterval, ShipInterval: DefaultShipInterval}
}

// Validate checks the parameter ranges.
func (c Config) Validate() error {
	if c.AckInterval <= 0 {
		return fmt.Errorf("ack_interval: must be positive, got %s", c.AckInterval)
	}
	if c.AckInterval > time.Minute {
		return fmt.Errorf("ack_interval: must be at most 1m, got %s", c.AckInterval)
	}
	if c.ShipInterval <= 0 {
		return fmt.Errorf("ship_interval: must be positive, got %s", c.ShipInterval)
	}
	if c.ShipInterval > time.Minute {
		return fmt.Errorf("ship_interval: must be at most 1m, got %s", c.ShipInterval)
	}
	return nil
}

// Stats are figures collected by the hooks of every node of one run.
type Stats struct {
	// SecondaryLogPeak is the largest output log (tuples) any host held
	// while it was a secondary.
	SecondaryLogPeak int64
	// Takeovers counts takeovers by a secondary holding the primary's state.
	Takeovers int64
	// RestartTakeovers counts takeovers with empty state (no ready secondary was left).
	RestartTakeovers int64
	// Resent counts tuples a new primary re-sent from its log to downstreams.
	Resent int64
	// Transfers counts state transfers to new secondaries.
	Transfers int64
	// TransferBytes is the wire size of those state transfers.
	TransferBytes int64
}

// Strategy is the active standby strategy. Build it with New; one value
// serves one run (its Stats are shared by the hooks of every node).
type Strategy struct {
	cfg   Config
	stats *Stats
}

// New builds the strategy after checking cfg.
func New(cfg Config) (*Strategy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Strategy{cfg: cfg, stats: &Stats{}}, nil
}

// Name implements ha.Strategy.
func (s *Strategy) Name() string { return Name }

// Replicas implements ha.Strategy: a primary and a secondary.
func (s *Strategy) Replicas() int { return 2 }

// InitialReceivers implements ha.Strategy: the primary and its secondary
// both receive the fragment's input.
func (s *Strategy) InitialReceivers(hosts []string) []string {
	return hosts[:min(2, len(hosts))]
}

// Hooks implements ha.Strategy.
func (s *Strategy) Hooks(n *ha.Node) ha.Hooks { return newHooks(n, s) }

// Stats returns the figures collected so far.
func (s *Strategy) Stats() Stats { return *s.stats }

// Report implements sim.Reporter: the secondary's log peak and the
// takeover figures of the (faulty) run.
func (s *Strategy) Report() map[string]any {
	st := s.stats
	return map[string]any{
		"secondary_log_peak":   st.SecondaryLogPeak,
		"takeovers":            st.Takeovers,
		"restart_takeovers":    st.RestartTakeovers,
		"resent_tuples":        st.Resent,
		"state_transfers":      st.Transfers,
		"state_transfer_bytes": st.TransferBytes,
	}
}
