package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
)

// TestExpectationResumed: "resumed" accepts any recovery type of a run that
// recovered before its end and refuses one that did not.
func TestExpectationResumed(t *testing.T) {
	ms := 250.0
	tests := []struct {
		name string
		r    metrics.Recovery
		ok   bool
	}{
		{"gap, recovered", metrics.Recovery{Type: "gap", RecoveryMs: &ms}, true},
		{"repeating, recovered", metrics.Recovery{Type: "rollback", Subtype: "repeating", RecoveryMs: &ms}, true},
		{"gap, not recovered", metrics.Recovery{Type: "gap", NotRecovered: true}, false},
		{"still catching up", metrics.Recovery{Type: metrics.NotRecoveredType, NotRecovered: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sim.Expectation{Strategy: "amnesia", Outcome: "resumed"}.Check(tt.r)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, "not recovered")
			}
		})
	}
}
