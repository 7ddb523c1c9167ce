package conformance_test

import (
	"fmt"
	"testing"

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
		if err != nil {
			t.Fatal(err)
		}
		for i, claims := range info.Promise.Claims {
			checked++
			t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) { conformance.Run(t, name, claims) })
		}
	}
	// amnesia, passive standby, active standby and upstream backup (twice).
	if checked < 5 {
		t.Fatalf("only %d claim sets registered: the built-in strategies lost their claims", checked)
	}
}
