package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestAppliedTimesStateWhenFaultsHappened: a fault the launcher applied
// late (it was paused) is recorded at the time it was applied, with the
// planned time beside it and the lateness.
func TestAppliedTimesStateWhenFaultsHappened(t *testing.T) {
	at, late := appliedTimes([]AppliedFault{
		{Planned: 4400 * time.Millisecond, At: 13160 * time.Millisecond, What: "kill B"},
		{Planned: 8300 * time.Millisecond, At: 13161 * time.Millisecond, What: "pause A for 1s"},
	})
	assert.Equal(t, []AppliedTime{
		{What: "kill B", PlannedMs: 4400, AppliedMs: 13160, LateMs: 8760},
		{What: "pause A for 1s", PlannedMs: 8300, AppliedMs: 13161, LateMs: 4861},
	}, at)
	assert.Equal(t, 8760*time.Millisecond, late)
	assert.Equal(t, []string{
		"amnesia: kill B applied at 13.16s, planned at 4.40s (8.76s late)",
		"amnesia: pause A for 1s applied at 13.16s, planned at 8.30s (4.86s late)",
	}, lateFaults("amnesia", at))
	assert.Empty(t, lateFaults("amnesia", []AppliedTime{{What: "kill B", PlannedMs: 1000, AppliedMs: 1001, LateMs: 1}}))
}
