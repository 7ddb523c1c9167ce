package cluster

import (
	"math"
	"time"
)

// faultLateWarn is how late an applied fault may be before the launcher
// warns that the run did not get the schedule it planned.
const faultLateWarn = 100 * time.Millisecond

// AppliedTime is one fault action as result.json records it: when it was
// planned and when the launcher applied it, in ms since the start.
type AppliedTime struct {
	What      string  `json:"what"`
	PlannedMs float64 `json:"planned_ms"`
	AppliedMs float64 `json:"applied_ms"`
	LateMs    float64 `json:"late_ms"`
	Err       string  `json:"error,omitempty"`
}

// appliedTimes turns the launcher's record of a run's fault actions into
// the figures of runs[].extra.faults_applied, and the largest lateness.
func appliedTimes(applied []AppliedFault) ([]AppliedTime, time.Duration) {
	var out []AppliedTime
	var late time.Duration
	ms := func(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }
	for _, a := range applied {
		out = append(out, AppliedTime{What: a.What, PlannedMs: ms(a.Planned), AppliedMs: ms(a.At), LateMs: ms(a.At - a.Planned), Err: a.Err})
		late = max(late, a.At-a.Planned)
	}
	return out, late
}
