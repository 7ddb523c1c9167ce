package cluster

import (
	"fmt"
	"math"
	"time"
)

// faultLateWarn is how late an applied fault may be before the launcher
// warns that the run did not get the schedule it planned; faultLateNote,
// before result.json's faults list says so beside the plan.
const (
	faultLateWarn = 100 * time.Millisecond
	faultLateNote = 500 * time.Millisecond
)

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

// lateFaults describes, for result.json's faults, the actions of
// strategy's run applied more than faultLateNote after their planned time,
// so the list that states the plan also states what happened.
func lateFaults(strategy string, at []AppliedTime) []string {
	var out []string
	for _, a := range at {
		if a.LateMs > float64(faultLateNote.Milliseconds()) {
			out = append(out, fmt.Sprintf("%s: %s applied at %.2fs, planned at %.2fs (%.2fs late)",
				strategy, a.What, a.AppliedMs/1000, a.PlannedMs/1000, a.LateMs/1000))
		}
	}
	return out
}
