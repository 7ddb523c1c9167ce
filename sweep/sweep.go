package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/reports"
	"github.com/streamha/streamha/sim"
)

// Options controls Run.
type Options struct {
	// Workers is the number of points run in parallel (≤ 0: 1).
	Workers int
	// Shard and Shards select the slice of points to run: shard Shard of
	// Shards (Shards ≤ 1: every point).
	Shard, Shards int
	// Progress, when set, is called after every finished point with the
	// number done (including points resumed from disk) and the total.
	Progress func(done, total int)
	// Command is recorded in sweep.json.
	Command string
}

// RunPoint runs one point: every strategy of the sweep (plus the reference
// run) at the point's setting and seed, with the first-principles model
// attached. The result is compacted for points.jsonl (no per-host figures,
// no experiment text, at most 3 anomaly sentences per strategy).
func RunPoint(sw *experiment.Sweep, i int) (reports.PointResult, error) {
	pt := sw.Point(i)
	e, err := sw.Experiment(pt)
	if err != nil {
		return reports.PointResult{}, err
	}
	cmp, err := sim.Compare(e, sw.Strategies)
	if err != nil {
		return reports.PointResult{}, fmt.Errorf("point %d (%v, seed %d): %w", i, pt.Values, pt.Seed, err)
	}
	r := cmp.Result
	reports.AddModels(e, r)
	r.Config = ""
	r.Baseline.Nodes = nil
	for k := range r.Runs {
		r.Runs[k].Overhead.Nodes = nil
		if ex := r.Runs[k].Recovery.Explanations; len(ex) > 3 {
			r.Runs[k].Recovery.Explanations = ex[:3]
		}
	}
	return reports.PointResult{SweepPoint: pt, Result: r}, nil
}

// Run runs the sweep's points (or one shard of them) into dir with a
// pool of workers, appending each finished point to points.jsonl as it
// completes, so that an interrupted sweep resumes where it stopped: points
// already in points.jsonl are skipped. When every point of the slice is
// done the file is rewritten sorted by point index, so the directory's
// content does not depend on the number of workers. It returns the slice's
// points sorted by index. Cancelling ctx stops after the points in progress.
func Run(ctx context.Context, dir string, sw *experiment.Sweep, opt Options) ([]reports.PointResult, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	meta := reports.SweepMeta{Hash: sw.Hash(), Sweep: sw, Command: opt.Command}
	idx := sw.Shard(0, 1)
	if opt.Shards > 1 {
		if opt.Shard < 0 || opt.Shard >= opt.Shards {
			return nil, fmt.Errorf("%w: shard %d/%d: want 0 ≤ i < n", experiment.ErrConfig, opt.Shard, opt.Shards)
		}
		meta.Shard = fmt.Sprintf("%d/%d", opt.Shard, opt.Shards)
		idx = sw.Shard(opt.Shard, opt.Shards)
	}
	metaPath := filepath.Join(dir, reports.SweepMetaFile)
	if old, err := reports.ReadSweepMeta(metaPath); err == nil {
		if old.Hash != meta.Hash || old.Shard != meta.Shard {
			return nil, fmt.Errorf("%w: %s has sweep %s shard %q, this is sweep %s shard %q (use another --out or delete it)",
				reports.ErrSweepMismatch, dir, old.Hash, old.Shard, meta.Hash, meta.Shard)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := reports.WriteJSON(metaPath, meta); err != nil {
		return nil, err
	}
	pointsPath := filepath.Join(dir, reports.SweepPointsFile)
	done, err := reports.ReadPoints(sw, pointsPath, true)
	if err != nil {
		return nil, err
	}
	have := map[int]reports.PointResult{}
	for _, p := range done {
		have[p.Index] = p
	}
	var todo []int
	for _, i := range idx {
		if _, ok := have[i]; !ok {
			todo = append(todo, i)
		}
	}
	f, err := os.OpenFile(pointsPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", pointsPath, err)
	}
	total, finished := len(idx), len(idx)-len(todo)
	if opt.Progress != nil {
		opt.Progress(finished, total)
	}
	runErr := runPool(ctx, sw, todo, max(1, opt.Workers), func(p reports.PointResult) error {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		if _, err := f.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("write %s: %w", pointsPath, err)
		}
		have[p.Index] = p
		finished++
		if opt.Progress != nil {
			opt.Progress(finished, total)
		}
		return nil
	})
	if err := f.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return nil, runErr
	}
	out := make([]reports.PointResult, 0, len(idx))
	for _, i := range idx {
		out = append(out, have[i])
	}
	// Keep points of other slices a user may have merged in by hand.
	for i, p := range have {
		if !containsInt(idx, i) {
			out = append(out, p)
		}
	}
	reports.SortPoints(out)
	if err := reports.WritePoints(pointsPath, out); err != nil {
		return nil, err
	}
	return out, nil
}

func containsInt(xs []int, x int) bool {
	k := sort.SearchInts(xs, x)
	return k < len(xs) && xs[k] == x
}

// runPool runs points on workers goroutines; collect is called on the
// calling goroutine for each finished point, in completion order.
func runPool(ctx context.Context, sw *experiment.Sweep, todo []int, workers int, collect func(reports.PointResult) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	type res struct {
		p   reports.PointResult
		err error
	}
	results := make(chan res)
	var wg sync.WaitGroup
	for range min(workers, max(1, len(todo))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				p, err := RunPoint(sw, i)
				select {
				case results <- res{p, err}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, i := range todo {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	var first error
	for r := range results {
		if first != nil {
			continue
		}
		if r.err == nil {
			r.err = collect(r.p)
		}
		if r.err != nil {
			first = r.err
			cancel()
		}
	}
	if first == nil && ctx.Err() != nil {
		return fmt.Errorf("sweep interrupted (run it again to resume): %w", ctx.Err())
	}
	return first
}

// Merge joins sweep directories (shards of one sweep) into out: it
// checks they hold the same sweep, takes the union of their points (a
// point present twice must be identical) and writes sweep.json and the
// sorted points.jsonl. It returns the merged points and the number of
// points of the sweep still missing.
func Merge(out string, dirs []string) (*reports.SweepMeta, []reports.PointResult, int, error) {
	if len(dirs) == 0 {
		return nil, nil, 0, fmt.Errorf("%w: merge: no directory given", experiment.ErrConfig)
	}
	var meta *reports.SweepMeta
	byIndex := map[int]reports.PointResult{}
	for _, d := range dirs {
		m, ps, err := reports.LoadSweepDir(d)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("merge %s: %w", d, err)
		}
		if meta == nil {
			meta = m
		} else if m.Hash != meta.Hash {
			return nil, nil, 0, fmt.Errorf("%w: %s has sweep %s, %s has sweep %s", reports.ErrSweepMismatch, dirs[0], meta.Hash, d, m.Hash)
		}
		for _, p := range ps {
			if q, dup := byIndex[p.Index]; dup {
				a, _ := json.Marshal(p)
				b, _ := json.Marshal(q)
				if !bytes.Equal(a, b) {
					return nil, nil, 0, fmt.Errorf("%w: point %d differs between directories", reports.ErrSweepMismatch, p.Index)
				}
			}
			byIndex[p.Index] = p
		}
	}
	ps := make([]reports.PointResult, 0, len(byIndex))
	for _, p := range byIndex {
		ps = append(ps, p)
	}
	reports.SortPoints(ps)
	merged := &reports.SweepMeta{Hash: meta.Hash, Sweep: meta.Sweep, Command: meta.Command}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, 0, fmt.Errorf("create output directory: %w", err)
	}
	if err := reports.WriteJSON(filepath.Join(out, reports.SweepMetaFile), merged); err != nil {
		return nil, nil, 0, err
	}
	if err := reports.WritePoints(filepath.Join(out, reports.SweepPointsFile), ps); err != nil {
		return nil, nil, 0, err
	}
	return merged, ps, meta.Sweep.Len() - len(ps), nil
}

// Representative runs the sweep's representative point (the first seed at
// reports.RepresentativeSetting) in full, for its report: every strategy's
// comparison row and figures. It is deterministic, like every point.
func Representative(sw *experiment.Sweep) (*reports.SweepRepresentative, error) {
	pt := sw.Point(reports.RepresentativeSetting(sw) * len(sw.Seeds))
	e, err := sw.Experiment(pt)
	if err != nil {
		return nil, err
	}
	rep := &reports.SweepRepresentative{Point: pt}
	cmp, err := sim.CompareWith(e, sw.Strategies, sim.CompareOptions{Faulty: func(run metrics.FaultyRun) error {
		fs, err := reports.RunFigures(run)
		rep.Figures = append(rep.Figures, fs...)
		return err
	}})
	if err != nil {
		return nil, fmt.Errorf("representative point: %w", err)
	}
	rep.Result = cmp.Result
	return rep, nil
}

// Render writes the report of the sweep in dir (its finished points and
// the representative point, run again), as reports.WriteSweepReport.
func Render(dir string) (*reports.SweepMeta, []reports.PointResult, error) {
	meta, points, err := reports.LoadSweepDir(dir)
	if err != nil {
		return nil, nil, err
	}
	if len(points) == 0 {
		return nil, nil, fmt.Errorf("sweep report: %s has no finished point", dir)
	}
	rep, err := Representative(meta.Sweep)
	if err != nil {
		return nil, nil, err
	}
	if _, err := reports.WriteSweepReport(dir, meta, points, rep); err != nil {
		return nil, nil, err
	}
	return meta, points, nil
}
