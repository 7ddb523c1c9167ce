package conformance_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/strategies"
	"github.com/streamha/streamha/strategies/conformance"

	// The built-in strategies register themselves.
	_ "github.com/streamha/streamha/activestandby"
	_ "github.com/streamha/streamha/passivestandby"
	_ "github.com/streamha/streamha/upstreambackup"
)

// stateLost are the outcomes when every host with a fragment's state fails
// (crash-primary-and-next): a stateless query (map) is rebuilt by the
// upstream's replay and repeats what the sink had; a stateful one restarts
// empty and loses its state.
var stateLost = map[string]string{"repeatable/crash-primary-and-next": conformance.Repeating}

// builtinClaims are what the built-in strategies achieve on every case of
// the matrix (docs/semantics.md, docs/reliability.md): exact claims, so a
// strategy doing better than it claims fails as well as one doing worse.
var builtinClaims = []struct {
	name   string
	claims conformance.Claims
}{
	{"amnesia", conformance.Claims{Exact: true,
		Repeatable: conformance.Gap, Convergent: conformance.Gap, Deterministic: conformance.Gap, Arbitrary: conformance.Gap,
		StateLost: conformance.Gap}},
	// The union is A's: only crashing A re-interleaves its input. The new
	// primary follows the logged decisions for what A processed and
	// interleaves the rest by its own arrival (convergent).
	{"passive-standby", standbyClaims(conformance.Convergent, map[string]any{"log_nondeterminism": true})},
	// Without the log the re-interleaved outputs no longer match their
	// seqs: the downstream's dedup by seq drops some never delivered.
	{"passive-standby", standbyClaims(conformance.Gap, nil)},
	// The secondary interleaves the live input by its own arrival: with
	// network jitter that differs from the primary's (shipping decisions
	// covers only what the primary decided).
	{"active-standby", standbyClaims(conformance.Convergent, nil)},
	{"active-standby", standbyClaims(conformance.Convergent, map[string]any{"ship_decisions": true})},
	// Without dedup the replay from the upstream's queue repeats outputs;
	// a short partition or a loss burst needs no failover and gap repair
	// from the same queue is precise. Crashing A (before the window or the
	// sum) replays duplicates into B's state: a wrong window that the next
	// one corrects (convergent), a sum that stays wrong (divergent). The
	// queue trimmed at B's window boundary makes crashing B itself precise
	// for the window, until a second crash soon after replays a closed
	// window again (repeating). A crash of both B and B.1 is the same as
	// one crash: B's state lives in A's queue.
	{"upstream-backup", conformance.Claims{Exact: true,
		Repeatable: conformance.Repeating, Convergent: conformance.Precise, Deterministic: conformance.Repeating,
		Arbitrary: conformance.Repeating, StateLost: conformance.Repeating,
		Schedules: map[string]string{"partition-short": conformance.Precise, "loss-burst": conformance.Precise},
		Cases: map[string]string{
			"convergent-capable/crash-first": conformance.Convergent, "convergent-capable/two-crashes": conformance.Repeating,
			"convergent-capable/crash-primary-and-next": conformance.Precise,
			"deterministic/crash-first":                 conformance.Divergent, "arbitrary/crash-first": conformance.Divergent,
		}}},
	// With dedup every replay is filtered by seq: precise, except when C
	// and its upstream B fail together (C's backup, B's queue, is rebuilt
	// by B's successor, renumbered: repeating, docs/reliability.md) and on
	// the union, whose interleaving follows timing that the strategy's own
	// acknowledgements shift (convergent on every schedule).
	{"upstream-backup", conformance.Claims{Exact: true,
		Repeatable: conformance.Precise, Convergent: conformance.Precise, Deterministic: conformance.Precise,
		Arbitrary: conformance.Convergent, StateLost: conformance.Precise,
		Cases: map[string]string{"deterministic/crash-adjacent": conformance.Repeating,
			"arbitrary/crash-primary-and-next": conformance.Convergent},
		Params: map[string]any{"dedup": true}}},
}

// standbyClaims are passive and active standby's claims: precise on every
// class and schedule, but as stateLost says when every host with the
// state fails, and unionCrash when the union's own fragment crashes.
func standbyClaims(unionCrash string, params map[string]any) conformance.Claims {
	return conformance.Claims{Exact: true,
		Repeatable: conformance.Precise, Convergent: conformance.Precise, Deterministic: conformance.Precise,
		Arbitrary: conformance.Precise, StateLost: conformance.Gap,
		Cases:  merge(stateLost, map[string]string{"arbitrary/crash-first": unionCrash}),
		Params: params}
}

// merge returns the union of the maps a and b (b wins).
func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestBuiltinStrategiesConform(t *testing.T) {
	for _, b := range builtinClaims {
		t.Run(fmt.Sprintf("%s %v", b.name, b.claims.Params), func(t *testing.T) {
			if _, err := strategies.Lookup(b.name); err != nil {
				t.Fatalf("built-in strategy %s is not registered: %v", b.name, err)
			}
			conformance.Run(t, b.name, b.claims)
		})
	}
}

// TestExactClaimsFailBothWays: an exact claim fails for a strategy that
// does better than it claims, where a lower bound passes; refinements must
// name cases and schedules of the matrix.
func TestExactClaimsFailBothWays(t *testing.T) {
	lower, err := conformance.Check("amnesia", conformance.Claims{Repeatable: conformance.Gap})
	require.NoError(t, err)
	assert.True(t, lower.Passed(), "amnesia's gap meets a claim of at least gap")
	exact, err := conformance.Check("upstream-backup", conformance.Claims{Exact: true,
		Repeatable: conformance.Gap, Params: map[string]any{"dedup": true}})
	require.NoError(t, err)
	assert.False(t, exact.Passed(), "precise is not exactly gap")
	for _, c := range exact.Failed() {
		assert.Equal(t, "repeatable", c.Query)
	}

	_, err = conformance.Check("amnesia", conformance.Claims{Cases: map[string]string{"repeatable/no-such-fault": conformance.Gap}})
	require.ErrorIs(t, err, conformance.ErrClaim)
	_, err = conformance.Check("amnesia", conformance.Claims{Schedules: map[string]string{"crash-middle": "fine"}})
	require.ErrorIs(t, err, conformance.ErrClaim)
}
