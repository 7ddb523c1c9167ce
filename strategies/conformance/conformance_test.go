package conformance_test

import (
	"testing"

	"github.com/streamha/streamha/strategies"
	"github.com/streamha/streamha/strategies/conformance"

	// The built-in strategies register themselves.
	_ "github.com/streamha/streamha/activestandby"
	_ "github.com/streamha/streamha/passivestandby"
	_ "github.com/streamha/streamha/upstreambackup"
)

// builtinClaims are the expected outcomes (docs/semantics.md) of the built-in strategies.
var builtinClaims = []struct {
	name   string
	claims conformance.Claims
}{
	{"amnesia", conformance.Claims{
		Repeatable: conformance.Gap, Convergent: conformance.Gap, Deterministic: conformance.Gap, Arbitrary: conformance.Gap,
		StateLost: conformance.Gap}},
	{"passive-standby", conformance.Claims{
		Repeatable: conformance.Precise, Convergent: conformance.Precise, Deterministic: conformance.Precise,
		Arbitrary: conformance.Rollback, Params: map[string]any{"log_nondeterminism": true}}},
	{"active-standby", conformance.Claims{
		Repeatable: conformance.Precise, Convergent: conformance.Precise, Deterministic: conformance.Precise,
		Arbitrary: conformance.Rollback}},
	{"upstream-backup", conformance.Claims{
		Repeatable: conformance.Repeating, Convergent: conformance.Convergent, Deterministic: conformance.Gap,
		Arbitrary: conformance.Gap}},
	{"upstream-backup", conformance.Claims{
		Repeatable: conformance.Precise, Params: map[string]any{"dedup": true}}},
}

func TestBuiltinStrategiesConform(t *testing.T) {
	for _, b := range builtinClaims {
		t.Run(b.name, func(t *testing.T) {
			if _, err := strategies.Lookup(b.name); err != nil {
				t.Fatalf("built-in strategy %s is not registered: %v", b.name, err)
			}
			conformance.Run(t, b.name, b.claims)
		})
	}
}
