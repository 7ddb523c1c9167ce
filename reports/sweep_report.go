package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
)

// SweepTable is the sweep's comparison table: one row per setting and
// strategy, figures averaged over seeds (results.csv and results.json hold
// the same rows at full precision).
func SweepTable(sw *experiment.Sweep, rows []SweepRow) *table {
	t := &table{}
	for _, p := range sw.Params {
		t.head = append(t.head, p.Name)
		t.keys = append(t.keys, p.Name)
	}
	t.head = append(t.head, "strategy", "seeds", "recovery types", "recovery ms", "±95%", "not recovered", "detect ms", "missing", "dup", "wrong", "lost in",
		"unavail ms", "cpu×", "bytes×", "peak queue kB", "model recovery ms", "model cpu×", "model bytes×")
	t.keys = append(t.keys, "strategy", "seeds", "recovery_types", "recovery_ms", "recovery_ms_ci95", "not_recovered", "detection_ms", "missing", "duplicates", "wrong", "lost_inputs",
		"unavailable_ms", "cpu_ratio", "bytes_ratio", "peak_queue_kb", "model_recovery_ms", "model_cpu_ratio", "model_bytes_ratio")
	mean := func(s Stat, prec int) cell { return numCell(s.meanOrNaN(), prec) }
	model := func(r SweepRow, k string, prec int) cell {
		if v, ok := r.Model[k]; ok {
			return numCell(v, prec)
		}
		return numCell(nan(), prec)
	}
	for _, r := range rows {
		var row []cell
		for _, v := range r.Values {
			row = append(row, txt(v))
		}
		ci := numCell(nan(), 1)
		if r.RecoveryMs.N > 0 {
			ci = numCell(r.RecoveryMs.CI95, 1)
		}
		kb := r.PeakQueueBytes
		kb.Mean /= 1e3
		row = append(row, txt(r.Strategy), intCell(int64(r.Seeds)), txt(r.TypesLabel()), mean(r.RecoveryMs, 1), ci, intCell(int64(r.NotRecovered)),
			mean(r.DetectionMs, 1), mean(r.Missing, 1), mean(r.Duplicates, 1), mean(r.Wrong, 1), mean(r.LostInputs, 1),
			mean(r.UnavailableMs, 1), mean(r.CPURatio, 2), mean(r.BytesRatio, 2), mean(kb, 1),
			model(r, ModelRecoveryMs, 1), model(r, ModelCPURatio, 2), model(r, ModelBytesRatio, 2))
		t.rows = append(t.rows, row)
	}
	return t
}

// pointsTable has one row per point and strategy (points.csv).
func pointsTable(sw *experiment.Sweep, points []PointResult) *table {
	t := &table{keys: []string{"index", "setting"}}
	for _, p := range sw.Params {
		t.keys = append(t.keys, p.Name)
	}
	t.keys = append(t.keys, "seed", "strategy", "recovery", "recovery_ms", "not_recovered", "observed_ms", "detection_ms", "missing", "duplicates", "wrong", "lost_inputs",
		"unavailable_ms", "max_added_latency_ms", "cpu_ratio", "bytes_ratio", "messages_ratio", "peak_queue_bytes", "checkpoint_bytes")
	t.head = t.keys
	for _, p := range points {
		for _, r := range p.Result.Runs {
			row := []cell{intCell(int64(p.Index)), intCell(int64(p.Setting))}
			for _, v := range p.Values {
				row = append(row, txt(v))
			}
			rec, o := r.Recovery, r.Overhead
			row = append(row, txt(strconv.FormatUint(p.Seed, 10)), txt(r.Strategy), txt(RecoveryLabel(rec)), optCell(rec.RecoveryMs, 3), boolCell(rec.NotRecovered), optCell(rec.ObservedMs, 3), optCell(rec.DetectionMs, 3),
				intCell(int64(rec.Missing)), intCell(int64(rec.Duplicates)), intCell(int64(rec.Wrong)), intCell(rec.LostInputs),
				numCell(rec.UnavailableMs, 3), numCell(rec.MaxAddedLatencyMs, 3), optCell(o.CPURatio, 3), optCell(o.BytesRatio, 3),
				optCell(o.MessagesRatio, 3), intCell(o.PeakQueueBytes), intCell(o.CheckpointBytes))
			t.rows = append(t.rows, row)
		}
	}
	return t
}

// RepresentativeFile holds, in a sweep's directory, the experiment of its
// representative point, for `streamha run --config`.
const RepresentativeFile = "representative.yaml"

// SweepRepresentative is the full run of a sweep's representative point
// (the first seed at RepresentativeSetting) that its report shows beside
// the sweep figures. The sweep runner produces it (package sweep); the
// report only draws it.
type SweepRepresentative struct {
	// Point is the representative point.
	Point experiment.SweepPoint
	// Result is the comparison at the point.
	Result *metrics.Result
	// Figures are each strategy's RunFigures at the point.
	Figures []Figure
}

// WriteSweepReport renders a sweep directory: the sweep figures, the
// representative point's table, latency and output-timeline figures,
// report.md, report.html, results.csv, results.json and points.csv.
// Missing points are reported in the text. It returns the figures.
func WriteSweepReport(dir string, meta *SweepMeta, points []PointResult, rep *SweepRepresentative) ([]Figure, error) {
	sw := meta.Sweep
	if len(points) == 0 {
		return nil, fmt.Errorf("sweep report: %s has no finished point", dir)
	}
	figs, err := SweepFigures(sw, points)
	if err != nil {
		return nil, err
	}
	repPoint, runFigs := rep.Point, rep.Figures
	rows := Aggregate(points)
	d := &document{title: fmt.Sprintf("streamha sweep: %s", sw.Name)}
	var swept []string
	for i, p := range sw.Params {
		swept = append(swept, fmt.Sprintf("`%s` (%s parameter) = %s", p.Name, sw.Kinds[i], strings.Join(p.Values, ", ")))
	}
	seeds := make([]string, len(sw.Seeds))
	for i, s := range sw.Seeds {
		seeds[i] = strconv.FormatUint(s, 10)
	}
	d.p(fmt.Sprintf("%d points: %d settings × %d seeds (%s), strategies %s. Sweep %s.",
		sw.Len(), sw.Settings(), len(sw.Seeds), strings.Join(seeds, ", "), strings.Join(sw.Strategies, ", "), meta.Hash))
	d.list(swept)
	if meta.Command != "" {
		d.p("Reproduce with `" + meta.Command + "`.")
	}
	if missing := sw.Len() - len(points); missing > 0 {
		d.p(fmt.Sprintf("Incomplete: %d of %d points are missing (an interrupted sweep or shards not merged yet); the figures use the %d present.", missing, sw.Len(), len(points)))
	}
	d.h(2, "Comparison")
	d.p("Mean over seeds, with the half-width of the 95 % confidence interval of the recovery time over the seeds that recovered (\"not recovered\" counts the others, never averaged in); overhead against the no-HA run; model = first-principles estimate (streamha docs reports).")
	t := SweepTable(sw, rows)
	d.tbl(t)
	d.h(2, "Figures")
	for i := range figs {
		d.figure(&figs[i])
	}
	d.h(2, "Representative run")
	d.p(fmt.Sprintf("Seed %d at %s, re-run deterministically: `streamha sweep` points are pure functions of (experiment, seed).", repPoint.Seed, settingLabel(sw, repPoint.Values)))
	if rep.Result.Config != "" {
		// The point's experiment, swept values set, beside the report.
		if err := os.WriteFile(filepath.Join(dir, RepresentativeFile), []byte(rep.Result.Config), 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", RepresentativeFile, err)
		}
		d.p(fmt.Sprintf("Reproduce it with `streamha run --config %s --seed %d --strategy %s` (%s is the point's experiment, beside this report).",
			filepath.ToSlash(filepath.Join(dir, RepresentativeFile)), repPoint.Seed, strings.Join(sw.Strategies, ","), RepresentativeFile))
	}
	d.tbl(RunTable(rep.Result))
	for i := range runFigs {
		d.figure(&runFigs[i])
	}
	d.h(3, "Anomalies")
	anyAnomaly := false
	for _, run := range rep.Result.Runs {
		if len(run.Recovery.Explanations) == 0 {
			continue
		}
		anyAnomaly = true
		d.p(fmt.Sprintf("%s (%s):", run.Strategy, RecoveryLabel(run.Recovery)))
		d.list(run.Recovery.Explanations)
	}
	if !anyAnomaly {
		d.p("No anomaly at this point.")
	}
	d.h(2, "Experiment")
	d.p("The base experiment; each point sets the swept parameters on it.")
	d.code("yaml", sw.Base)
	all := append(figs, runFigs...)
	extra := map[string]any{"sweep": sw, "hash": meta.Hash, "command": meta.Command, "points": len(points), "stats": rows}
	if err := writeDoc(dir, d, t, all, extra); err != nil {
		return nil, err
	}
	pc, err := pointsTable(sw, points).csv()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "points.csv"), pc, 0o644); err != nil {
		return nil, fmt.Errorf("write points.csv: %w", err)
	}
	return all, nil
}

// PrintSweepTable writes the sweep table for a terminal.
func PrintSweepTable(w io.Writer, sw *experiment.Sweep, points []PointResult) error {
	t := SweepTable(sw, Aggregate(points))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(t.head, "\t")+"\t")
	for _, r := range t.rows {
		for _, c := range r {
			fmt.Fprint(tw, c.text, "\t")
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
