package reports

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
)

// Run report files.
const (
	ResultFile    = "result.json"
	ReferenceFile = "trace-reference.jsonl"
)

// AddModelsFromConfig fills every run's first-principles model from the
// experiment recorded in the result (Result.Config). It does nothing when
// the result carries no experiment or it no longer parses.
func AddModelsFromConfig(r *metrics.Result) {
	if r.Config == "" {
		return
	}
	// The run already happened: its experiment is read with the large
	// ranges, so a real big run keeps its model (nothing is run here).
	e, err := experiment.ParseWith([]byte(r.Config), r.Experiment, experiment.ParseOptions{AllowLarge: true})
	if err != nil {
		return
	}
	AddModels(e, r)
}

// runColumn is one column of the comparison table.
type runColumn struct {
	head, key string
	cell      func(metrics.Run) cell
	realOnly  bool // only when the runs are real (process CPU measured)
	fileOnly  bool // in the files, not in the terminal table
}

// runColumns are the comparison table's columns, in order.
var runColumns = []runColumn{
	{head: "strategy", key: "strategy", cell: func(r metrics.Run) cell { return txt(r.Strategy) }},
	{head: "recovery", key: "recovery", cell: func(r metrics.Run) cell { return txt(RecoveryLabel(r.Recovery)) }},
	{head: "missing", key: "missing", cell: func(r metrics.Run) cell { return intCell(int64(r.Recovery.Missing)) }},
	{head: "dup", key: "duplicates", cell: func(r metrics.Run) cell { return intCell(int64(r.Recovery.Duplicates)) }},
	{head: "wrong", key: "wrong", cell: func(r metrics.Run) cell { return intCell(int64(r.Recovery.Wrong)) }},
	{head: "lost in", key: "lost_inputs", cell: func(r metrics.Run) cell { return intCell(r.Recovery.LostInputs) }},
	{head: "detect ms", key: "detection_ms", cell: func(r metrics.Run) cell { return optCell(r.Recovery.DetectionMs, 1) }},
	{head: "recovery ms", key: "recovery_ms", cell: func(r metrics.Run) cell { return recoveryCell(r.Recovery) }},
	{head: "not recovered", key: "not_recovered", fileOnly: true, cell: func(r metrics.Run) cell { return boolCell(r.Recovery.NotRecovered) }},
	{head: "observed ms", key: "observed_ms", fileOnly: true, cell: func(r metrics.Run) cell { return optCell(r.Recovery.ObservedMs, 1) }},
	{head: "outstanding", key: "outstanding", fileOnly: true, cell: func(r metrics.Run) cell { return intCell(int64(r.Recovery.Outstanding)) }},
	{head: "+latency ms", key: "max_added_latency_ms", cell: func(r metrics.Run) cell { return numCell(r.Recovery.MaxAddedLatencyMs, 1) }},
	{head: "unavail ms", key: "unavailable_ms", cell: func(r metrics.Run) cell { return numCell(r.Recovery.UnavailableMs, 1) }},
	{head: "cpu×", key: "cpu_ratio", cell: func(r metrics.Run) cell { return optCell(r.Overhead.CPURatio, 2) }},
	{head: "proc cpu×", key: "process_cpu_ratio", realOnly: true, cell: func(r metrics.Run) cell { return optCell(r.Overhead.ProcessCPURatio, 2) }},
	{head: "bytes×", key: "bytes_ratio", cell: func(r metrics.Run) cell { return optCell(r.Overhead.BytesRatio, 2) }},
	{head: "msgs×", key: "messages_ratio", cell: func(r metrics.Run) cell { return optCell(r.Overhead.MessagesRatio, 2) }},
	{head: "peak queue", key: "peak_queue", cell: func(r metrics.Run) cell { return intCell(r.Overhead.PeakQueue) }},
	{head: "checkpoint bytes", key: "checkpoint_bytes", fileOnly: true, cell: func(r metrics.Run) cell { return intCell(r.Overhead.CheckpointBytes) }},
}

// RunTable is the comparison table of a run: one row per strategy, the
// columns of the terminal table plus checkpoint bytes (results.csv and
// results.json hold it too). Real runs add the process CPU ratio after
// cpu×, the node loops' busy-time ratio.
func RunTable(r *metrics.Result) *table { return runTable(r, false) }

// runTable builds the comparison table; terminal leaves out the columns
// only the files hold.
func runTable(r *metrics.Result, terminal bool) *table {
	isReal := hasProcessCPU(r)
	t := &table{}
	var cols []runColumn
	for _, c := range runColumns {
		if (c.realOnly && !isReal) || (c.fileOnly && terminal) {
			continue
		}
		cols = append(cols, c)
		t.head, t.keys = append(t.head, c.head), append(t.keys, c.key)
	}
	for _, run := range r.Runs {
		row := make([]cell, len(cols))
		for i, c := range cols {
			row[i] = c.cell(run)
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// modelTable puts the first-principles model beside the simulated figures.
func modelTable(runs []metrics.Run) *table {
	t := &table{
		head: []string{"strategy", "figure", "model", "simulated", "sim − model"},
		keys: []string{"strategy", "figure", "model", "simulated", "difference"},
	}
	for _, r := range runs {
		if r.Model == nil { // said once above the table (noModelNote)
			continue
		}
		add := func(fig string, key string, sim *float64, prec int) {
			m, ok := r.Model[key]
			if !ok && sim == nil {
				return
			}
			mc := numCell(nan(), prec)
			if ok {
				mc = numCell(m, prec)
			}
			d := numCell(nan(), prec)
			if ok && sim != nil {
				d = numCell(*sim-m, prec)
			}
			t.rows = append(t.rows, []cell{txt(r.Strategy), txt(fig), mc, optCell(sim, prec), d})
		}
		add("detection ms", ModelDetectionMs, r.Recovery.DetectionMs, 1)
		add("recovery ms", ModelRecoveryMs, r.Recovery.RecoveryMs, 1)
		add("cpu×", ModelCPURatio, r.Overhead.CPURatio, 2)
		add("bytes×", ModelBytesRatio, r.Overhead.BytesRatio, 2)
		if _, ok := r.Model[ModelRestoreMs]; ok {
			t.rows = append(t.rows, []cell{txt(r.Strategy), txt("  of which restore ms"), numCell(r.Model[ModelRestoreMs], 2), numCell(nan(), 1), numCell(nan(), 1)})
		}
		if _, ok := r.Model[ModelReplayMs]; ok {
			t.rows = append(t.rows, []cell{txt(r.Strategy), txt("  of which replay/catch-up ms"), numCell(r.Model[ModelReplayMs], 1), numCell(nan(), 1), numCell(nan(), 1)})
		}
	}
	return t
}

// WriteRunDir writes a run directory — result.json, the reference trace,
// one trace per strategy (traces parallel to r.Runs) — and its report: the
// counterpart of RenderRunDir, for simulated and cluster runs alike.
func WriteRunDir(dir string, r *metrics.Result, reference *ha.Trace, traces []*ha.Trace) error {
	if len(traces) != len(r.Runs) {
		return fmt.Errorf("run directory: %d traces for %d runs", len(traces), len(r.Runs))
	}
	d, err := NewRunDir(dir)
	if err != nil {
		return err
	}
	for i, run := range r.Runs {
		if err := d.AddRun(classified(reference, traces[i], run)); err != nil {
			return err
		}
	}
	return d.Finish(r, reference)
}

// classified is a finished run's faulty trace classified against the
// reference, as RunDir takes it.
func classified(reference, faulty *ha.Trace, run metrics.Run) metrics.FaultyRun {
	return metrics.FaultyRun{Strategy: run.Strategy, Reference: reference, Trace: faulty, Recovery: run.Recovery,
		Classes: metrics.Classify(reference.Deliveries(), faulty.Deliveries(), nil)}
}

// RunDir writes a run directory as a comparison goes (sim.CompareOptions'
// Faulty): each strategy's trace and figures as soon as its faulty run is
// classified (AddRun), result.json, the reference trace and the report at
// the end (Finish). It keeps the figures between runs, never a trace, so
// a long experiment under many strategies holds one faulty trace at a time.
// The files are the ones WriteRunDir writes.
type RunDir struct {
	dir       string
	figs      []Figure
	anomalies map[string]string // strategy → its anomalies file
	// sketches keep of each run what the comparison figures draw; ref
	// the failure-free run's latencies near the faults.
	sketches []runSketch
	ref      plotter.XYs
}

// NewRunDir creates the directory.
func NewRunDir(dir string) (*RunDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	return &RunDir{dir: dir, anomalies: map[string]string{}}, nil
}

// AddRun writes a strategy's faulty trace and draws its figures.
func (d *RunDir) AddRun(run metrics.FaultyRun) error {
	if err := WriteTrace(TraceFile(d.dir, run.Strategy), run.Trace); err != nil {
		return err
	}
	n, err := writeAnomalies(d.dir, run)
	if err != nil {
		return err
	}
	if n > 0 {
		if d.anomalies == nil {
			d.anomalies = map[string]string{}
		}
		d.anomalies[run.Strategy] = AnomaliesFile(run.Strategy)
	}
	return d.addFigures(run)
}

// addFigures draws a strategy's figures from its classification against
// the reference run, for the report.
func (d *RunDir) addFigures(run metrics.FaultyRun) error {
	figs, err := RunFigures(run)
	if err != nil {
		return err
	}
	d.figs = append(d.figs, figs...)
	sk := sketchRun(run)
	if len(d.sketches) == 0 {
		d.ref = latenciesNear(run.Reference, sk.faults)
	}
	d.sketches = append(d.sketches, sk)
	return nil
}

// Finish writes result.json, the reference trace and the report of the
// runs added, which must be r.Runs in order.
func (d *RunDir) Finish(r *metrics.Result, reference *ha.Trace) error {
	for i := range r.Runs {
		r.Runs[i].Anomalies = d.anomalies[r.Runs[i].Strategy]
	}
	if err := WriteJSON(filepath.Join(d.dir, ResultFile), r); err != nil {
		return err
	}
	if err := WriteTrace(filepath.Join(d.dir, ReferenceFile), reference); err != nil {
		return err
	}
	return d.writeDoc(r)
}

// WriteRunReport writes the report of one `streamha run` into dir:
// report.md, report.html, results.csv, results.json, the figures that
// compare the strategies and, per strategy, the latency/throughput and
// output-timeline figures (PNG and SVG). traces are
// the faulty traces parallel to r.Runs. It returns the figures.
func WriteRunReport(dir string, r *metrics.Result, reference *ha.Trace, traces []*ha.Trace) ([]Figure, error) {
	if len(traces) != len(r.Runs) {
		return nil, fmt.Errorf("run report: %d traces for %d runs", len(traces), len(r.Runs))
	}
	d := &RunDir{dir: dir}
	for i, run := range r.Runs {
		if err := d.addFigures(classified(reference, traces[i], run)); err != nil {
			return nil, err
		}
	}
	return d.writeDocFigs(r)
}

// writeDoc draws the comparison figures and writes the report; it
// returns every figure of the report.
func (d *RunDir) writeDoc(r *metrics.Result) error {
	_, err := d.writeDocFigs(r)
	return err
}

func (d *RunDir) writeDocFigs(r *metrics.Result) ([]Figure, error) {
	if !slices.ContainsFunc(r.Runs, func(run metrics.Run) bool { return run.Model != nil }) {
		AddModelsFromConfig(r) // a cluster run's result, say
	}
	lead, err := runComparisonFigures(r, d.sketches, d.ref)
	if err != nil {
		return nil, err
	}
	if err := sharedLatencyRange(d.figs); err != nil {
		return nil, err
	}
	return append(slices.Clone(lead), d.figs...), writeRunDoc(d.dir, r, lead, d.figs)
}

// writeRunDoc writes the report documents and figures of a run: lead, the
// figures comparing every strategy, before each strategy's figures.
func writeRunDoc(dir string, r *metrics.Result, lead, figs []Figure) error {
	cmd := "run"
	if r.Mode == "cluster" {
		cmd = "cluster"
	}
	d := &document{title: fmt.Sprintf("streamha %s: %s, seed %d", cmd, r.Experiment, r.Seed)}
	intro := fmt.Sprintf("Mode %s · query class %s · seed %d.", r.Mode, r.QueryClass, r.Seed)
	if len(r.Faults) > 0 {
		intro += " Faults: " + joinSemi(r.Faults) + "."
	}
	d.p(intro)
	if r.Command != "" {
		d.p("Reproduce with `" + r.Command + "`.")
	}
	if r.Note != "" {
		d.p(r.Note)
	}
	d.h(2, "Comparison")
	d.p("Recovery type against the failure-free run of the same seed; overhead ratios against the no-HA run (definitions: streamha docs semantics).")
	t := RunTable(r)
	// The page shows the terminal's columns, so that the table fits the
	// width of a page (the files keep every column, glossed below).
	d.tbl(runTable(r, true))
	if n := RoundsNote(r); n != "" {
		d.p(n)
	}
	if n := InputsNote(r); n != "" {
		d.p(n)
	}
	d.h(3, "Glossary")
	d.terms(runGlossary(r.Runs))
	if r.Mode == "cluster" {
		d.h(2, "Model vs measurement")
	} else {
		d.h(2, "Model vs simulation")
	}
	d.p("First-principles estimates (detection ≈ timeout + heartbeat/2, restore = state × per-byte CPU, catch-up of replayed and backlogged input at the spare's processing rate; streamha docs reports) beside the " + measuredWord(r) + " figures.")
	if why := noModelNote(r); why != "" {
		d.p(why)
	}
	if mt := modelTable(r.Runs); len(mt.rows) > 0 {
		mt.head[3] = measuredWord(r)
		if r.Mode == "cluster" {
			mt.head[4] = "measured − model"
		}
		d.tbl(mt)
	}
	d.h(2, "Figures")
	for i := range lead {
		d.figure(&lead[i])
	}
	if len(figs) > 0 {
		d.h(3, "Each strategy")
		d.p("One set of figures per strategy; their latency panels share one axis, so that they compare.")
	}
	for i := range figs {
		d.figure(&figs[i])
	}
	figs = append(slices.Clone(lead), figs...)
	d.h(2, "Anomalies")
	anyAnomaly := false
	for _, run := range r.Runs {
		if len(run.Recovery.Explanations) == 0 {
			continue
		}
		anyAnomaly = true
		d.h(3, fmt.Sprintf("%s (%s)", run.Strategy, RecoveryLabel(run.Recovery)))
		d.list(run.Recovery.Explanations)
	}
	if !anyAnomaly {
		d.p("No anomaly: every strategy delivered exactly the failure-free output.")
	}
	if r.Config != "" {
		d.h(2, "Experiment")
		d.code("yaml", r.Config)
	}
	extra := map[string]any{"experiment": r.Experiment, "seed": r.Seed, "command": r.Command, "faults": r.Faults, "model": modelTable(r.Runs).records()}
	return writeDoc(dir, d, t, figs, extra)
}

// measuredWord names what the model is set beside: the simulation's
// figures, or a cluster run's measured ones.
func measuredWord(r *metrics.Result) string {
	if r.Mode == "cluster" {
		return "measured"
	}
	return "simulated"
}

// noModelNote says, once, which strategies have no model and why; "" when
// every strategy has one.
func noModelNote(r *metrics.Result) string {
	var none []string
	for _, run := range r.Runs {
		if run.Model == nil {
			none = append(none, run.Strategy)
		}
	}
	if len(none) == 0 {
		return ""
	}
	why := "the result records no experiment to model"
	if r.Config != "" {
		why = "the experiment recorded in the result has no fragment to model"
	}
	if len(none) == len(r.Runs) {
		return "No model: " + why + "."
	}
	return "No model for " + strings.Join(none, ", ") + ": " + why + "."
}

// RoundsNote says, when the overheads are medians of repeated rounds
// (cluster --overhead-rounds), how many and how far the rounds' CPU ratios
// spread; "" otherwise.
func RoundsNote(r *metrics.Result) string {
	var spreads []string
	rounds := 0
	for _, run := range r.Runs {
		o := run.Overhead
		if o.Rounds < 2 || o.CPURatioRange == nil {
			continue
		}
		rounds = max(rounds, o.Rounds)
		s := fmt.Sprintf("%s cpu× %.2f–%.2f", run.Strategy, o.CPURatioRange.Min, o.CPURatioRange.Max)
		if p := o.ProcessCPURatioRange; p != nil {
			s += fmt.Sprintf(", proc cpu× %.2f–%.2f", p.Min, p.Max)
		}
		spreads = append(spreads, s)
	}
	if len(spreads) == 0 {
		return ""
	}
	return fmt.Sprintf("Overheads are medians of %d failure-free rounds (each round runs the no-HA baseline, then every strategy; "+
		"each ratio is against its own round's baseline). Range over the rounds: %s.", rounds, joinSemi(spreads))
}

func joinSemi(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += "; "
		}
		s += x
	}
	return s
}

// ReadError is an error reading a saved directory's files: bad input, not
// a failure to write the report.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// RenderRunDir re-renders the report and figures of a run directory written
// by `streamha run` or `streamha cluster` from result.json and the traces,
// reading one strategy's trace at a time (a long run's traces are each as
// large as its output). A result without model estimates gets them from
// its recorded experiment. progress, when not nil, is told each stage as
// it starts. Errors reading the directory are *ReadError.
func RenderRunDir(dir string, progress func(stage string)) error {
	if progress == nil {
		progress = func(string) {}
	}
	r, err := ReadResult(filepath.Join(dir, ResultFile))
	if err != nil {
		return &ReadError{err}
	}
	if !slices.ContainsFunc(r.Runs, func(run metrics.Run) bool { return run.Model != nil }) {
		AddModelsFromConfig(r)
	}
	progress("reading the reference trace")
	ref, err := ReadTrace(filepath.Join(dir, ReferenceFile))
	if err != nil {
		return &ReadError{err}
	}
	d := &RunDir{dir: dir}
	for _, run := range r.Runs {
		progress(run.Strategy + ": reading its trace")
		tr, err := ReadTrace(TraceFile(dir, run.Strategy))
		if err != nil {
			return &ReadError{err}
		}
		progress(run.Strategy + ": classifying its run and drawing its figures")
		if err := d.addFigures(classified(ref, tr, run)); err != nil {
			return err
		}
	}
	progress("writing the report")
	return d.writeDoc(r)
}

// IsRunDir and IsSweepDir tell what a directory holds.
func IsRunDir(dir string) bool { return exists(filepath.Join(dir, ResultFile)) }

// IsSweepDir reports whether dir holds a sweep (sweep.json).
func IsSweepDir(dir string) bool { return exists(filepath.Join(dir, SweepMetaFile)) }

func exists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, os.ErrNotExist)
}

func nan() float64 { return math.NaN() }
