package reports

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/ha/metrics"
)

// AnomaliesFile is the name of a strategy's anomaly list in a run
// directory: every anomalous delivery and every missing output, one JSON
// object a line. result.json names it (runs[].anomalies) because its
// explanations stop after classify.MaxExplanations sentences.
func AnomaliesFile(strategy string) string { return "anomalies-" + strategy + ".jsonl" }

// anomalyLine is one line of an anomalies file.
type anomalyLine struct {
	ID     string `json:"id"`
	Status string `json:"status"` // duplicate, wrong, spurious or missing
	// TMs is the delivery time (for a missing output: when the
	// failure-free run delivered it), in ms.
	TMs           float64  `json:"t_ms"`
	Seq           uint64   `json:"seq,omitempty"`
	Value         *float64 `json:"value,omitempty"`
	Sources       *int64   `json:"sources,omitempty"`
	ExpectedValue *float64 `json:"expected_value,omitempty"`
	ExpectedSrcs  *int64   `json:"expected_sources,omitempty"`
}

// writeAnomalies writes run's anomalies into dir and returns the number
// written (no file when there are none).
func writeAnomalies(dir string, run metrics.FaultyRun) (int, error) {
	cls := run.Classes
	exp, obs := run.Reference.Deliveries(), run.Trace.Deliveries()
	var lines []anomalyLine
	msOf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for i, st := range cls.Status {
		if st == classify.StatusOK {
			continue
		}
		d := obs.At(i)
		v, n := d.Tuple.Value, int64(d.Tuple.Lineage.N)
		l := anomalyLine{ID: d.Tuple.ID.String(), Status: st.String(), TMs: msOf(d.T), Seq: d.Tuple.Seq, Value: &v, Sources: &n}
		if i < len(cls.Index.Observed) {
			if id := cls.Index.Observed[i]; id >= 0 {
				e := exp.At(int(cls.Index.First[id]))
				ev, en := e.Tuple.Value, int64(e.Tuple.Lineage.N)
				l.ExpectedValue, l.ExpectedSrcs = &ev, &en
			}
		}
		lines = append(lines, l)
	}
	if len(cls.MissingIDs) > 0 {
		missing := map[string]bool{}
		for _, id := range cls.MissingIDs {
			missing[id] = true
		}
		for _, e := range exp.All() {
			id := e.Tuple.ID.String()
			if !missing[id] {
				continue
			}
			delete(missing, id)
			ev, en := e.Tuple.Value, int64(e.Tuple.Lineage.N)
			lines = append(lines, anomalyLine{ID: id, Status: "missing", TMs: msOf(e.T), ExpectedValue: &ev, ExpectedSrcs: &en})
		}
	}
	if len(lines) == 0 {
		return 0, nil
	}
	f, err := os.Create(filepath.Join(dir, AnomaliesFile(run.Strategy)))
	if err != nil {
		return 0, fmt.Errorf("anomalies: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			f.Close()
			return 0, fmt.Errorf("anomalies: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, fmt.Errorf("anomalies: %w", err)
	}
	return len(lines), f.Close()
}
