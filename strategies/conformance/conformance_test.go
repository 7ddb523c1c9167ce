package conformance_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/strategies"
	"github.com/streamha/streamha/strategies/conformance"

	// Every strategy registers itself.
	_ "github.com/streamha/streamha/strategies/all"
)

// TestRegisteredStrategiesConform holds every registered strategy to the
// claims it registers (strategies.Info.Promise.Claims): a new strategy is
// checked by adding its registration line to strategies/all.
func TestRegisteredStrategiesConform(t *testing.T) {
	checked := 0
	for _, name := range strategies.Registered() {
		info, err := strategies.Lookup(name)
		require.NoError(t, err)
		for i, claims := range info.Promise.Claims {
			checked++
			t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) { conformance.Run(t, name, claims) })
		}
	}
	// amnesia, and passive standby, active standby and upstream backup
	// with and without their options.
	require.GreaterOrEqual(t, checked, 7, "the built-in strategies lost their claims")
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
