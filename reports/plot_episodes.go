package reports

import (
	"fmt"

	"github.com/streamha/streamha/ha/metrics"
)

// episodeMarks shades each fault episode of rec from its start to its
// recovery, and marks its recovery point "episode N recovered"; an
// episode that never recovered is shaded to the end of the run, which is
// marked notRecoveredMark.
func episodeMarks(ms []marker, windows [][2]float64, rec metrics.Recovery) ([]marker, [][2]float64) {
	several := len(rec.Episodes) > 1
	for i, e := range rec.Episodes {
		start := e.StartMs / 1e3
		switch {
		case e.RecoveryMs != nil:
			end := start + *e.RecoveryMs/1e3
			windows = append(windows, [2]float64{start, end})
			if several {
				ms = append(ms, marker{end, fmt.Sprintf("episode %d recovered", i+1), colCaughtUp})
			}
		case e.NotRecovered && e.ObservedMs != nil:
			end := start + *e.ObservedMs/1e3
			windows = append(windows, [2]float64{start, end})
			label := notRecoveredMark
			if several {
				label = fmt.Sprintf("%s (episode %d not recovered)", notRecoveredMark, i+1)
			}
			ms = append(ms, marker{end, label, colCrash})
		}
	}
	return ms, windows
}
