package reports

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
)

// Sweep output files.
const (
	SweepMetaFile   = "sweep.json"
	SweepPointsFile = "points.jsonl"
)

// ErrSweepMismatch is returned when a directory holds results of a
// different sweep (resume or merge).
var ErrSweepMismatch = errors.New("directory holds a different sweep")

// SweepMeta is sweep.json: the resolved sweep, its hash and how it was run.
type SweepMeta struct {
	Hash  string     `json:"hash"`
	Sweep *sim.Sweep `json:"sweep"`
	// Shard is "i/n" for a shard directory, "" for the whole sweep.
	Shard string `json:"shard,omitempty"`
	// Command reproduces the sweep.
	Command string `json:"command,omitempty"`
}

// PointResult is one finished point, one line of points.jsonl.
type PointResult struct {
	sim.SweepPoint
	Result *metrics.Result `json:"result"`
}

// SweepOptions controls RunSweep.
type SweepOptions struct {
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
func RunPoint(sw *sim.Sweep, i int) (PointResult, error) {
	pt := sw.Point(i)
	e, err := sw.Experiment(pt)
	if err != nil {
		return PointResult{}, err
	}
	cmp, err := sim.Compare(e, sw.Strategies)
	if err != nil {
		return PointResult{}, fmt.Errorf("point %d (%v, seed %d): %w", i, pt.Values, pt.Seed, err)
	}
	r := cmp.Result
	AddModels(e, r)
	r.Config = ""
	r.Baseline.Nodes = nil
	for k := range r.Runs {
		r.Runs[k].Overhead.Nodes = nil
		if ex := r.Runs[k].Recovery.Explanations; len(ex) > 3 {
			r.Runs[k].Recovery.Explanations = ex[:3]
		}
	}
	return PointResult{SweepPoint: pt, Result: r}, nil
}

// RunSweep runs the sweep's points (or one shard of them) into dir with a
// pool of workers, appending each finished point to points.jsonl as it
// completes, so that an interrupted sweep resumes where it stopped: points
// already in points.jsonl are skipped. When every point of the slice is
// done the file is rewritten sorted by point index, so the directory's
// content does not depend on the number of workers. It returns the slice's
// points sorted by index. Cancelling ctx stops after the points in progress.
func RunSweep(ctx context.Context, dir string, sw *sim.Sweep, opt SweepOptions) ([]PointResult, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	meta := SweepMeta{Hash: sw.Hash(), Sweep: sw, Command: opt.Command}
	idx := sw.Shard(0, 1)
	if opt.Shards > 1 {
		if opt.Shard < 0 || opt.Shard >= opt.Shards {
			return nil, fmt.Errorf("%w: shard %d/%d: want 0 ≤ i < n", experiment.ErrConfig, opt.Shard, opt.Shards)
		}
		meta.Shard = fmt.Sprintf("%d/%d", opt.Shard, opt.Shards)
		idx = sw.Shard(opt.Shard, opt.Shards)
	}
	metaPath := filepath.Join(dir, SweepMetaFile)
	if old, err := readMeta(metaPath); err == nil {
		if old.Hash != meta.Hash || old.Shard != meta.Shard {
			return nil, fmt.Errorf("%w: %s has sweep %s shard %q, this is sweep %s shard %q (use another --out or delete it)",
				ErrSweepMismatch, dir, old.Hash, old.Shard, meta.Hash, meta.Shard)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := WriteJSON(metaPath, meta); err != nil {
		return nil, err
	}
	pointsPath := filepath.Join(dir, SweepPointsFile)
	done, err := readPointsOf(sw, pointsPath, true)
	if err != nil {
		return nil, err
	}
	have := map[int]PointResult{}
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
	runErr := runPool(ctx, sw, todo, max(1, opt.Workers), func(p PointResult) error {
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
	out := make([]PointResult, 0, len(idx))
	for _, i := range idx {
		out = append(out, have[i])
	}
	// Keep points of other slices a user may have merged in by hand.
	for i, p := range have {
		if !containsInt(idx, i) {
			out = append(out, p)
		}
	}
	sortPoints(out)
	if err := writePoints(pointsPath, out); err != nil {
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
func runPool(ctx context.Context, sw *sim.Sweep, todo []int, workers int, collect func(PointResult) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	type res struct {
		p   PointResult
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

func sortPoints(ps []PointResult) {
	sort.Slice(ps, func(a, b int) bool { return ps[a].Index < ps[b].Index })
}

func readMeta(path string) (*SweepMeta, error) {
	b, err := readBounded(path, MaxResultFile)
	if err != nil {
		return nil, err
	}
	var m *SweepMeta
	if err := decodeStrict(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m == nil || m.Sweep == nil {
		return nil, fmt.Errorf("%s: sweep: no sweep in file", path)
	}
	for i, s := range m.Sweep.Strategies {
		if err := checkStrategyName(fmt.Sprintf("sweep.strategies[%d]", i), s); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if len(m.Sweep.Seeds) == 0 || len(m.Sweep.Params) == 0 || len(m.Sweep.Kinds) != len(m.Sweep.Params) {
		return nil, fmt.Errorf("%s: sweep: needs seeds, params and one kind per param", path)
	}
	for i, p := range m.Sweep.Params {
		if len(p.Values) == 0 {
			return nil, fmt.Errorf("%s: sweep.params[%d].values: empty", path, i)
		}
	}
	return m, nil
}

// checkPoint checks a point of points.jsonl against its sweep: its index
// is one of the sweep's, its setting, values and seed are that index's,
// and its result is valid.
func checkPoint(sw *sim.Sweep, p *PointResult) error {
	if sw != nil {
		if p.Index < 0 || p.Index >= sw.Len() {
			return fmt.Errorf("index: %d is not a point of the sweep (0 to %d)", p.Index, sw.Len()-1)
		}
		want := sw.Point(p.Index)
		if p.Setting != want.Setting || p.Seed != want.Seed || !slices.Equal(p.Values, want.Values) {
			return fmt.Errorf("index: point %d has setting %d, values %v and seed %d; the sweep says %d, %v and %d",
				p.Index, p.Setting, p.Values, p.Seed, want.Setting, want.Values, want.Seed)
		}
	}
	if err := ValidateResult(p.Result); err != nil {
		return fmt.Errorf("result.%w", err)
	}
	return nil
}

// readPointsOf reads points.jsonl. With repair, a last line cut short by an
// interruption is dropped (and truncated from the file); any other bad
// line is an error. A missing file is no points. Each point is checked
// against sw (when not nil); a point given twice is an error.
func readPointsOf(sw *sim.Sweep, path string, repair bool) ([]PointResult, error) {
	b, err := readBounded(path, MaxPointsFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []PointResult
	lineOf := map[int]int{}
	good := 0
	r := bufio.NewReader(bytes.NewReader(b))
	for line := 1; ; line++ {
		text, err := r.ReadBytes('\n')
		if err == io.EOF && len(text) == 0 {
			break
		}
		complete := err == nil
		var p PointResult
		if jerr := json.Unmarshal(text, &p); jerr != nil || p.Result == nil {
			if !complete && repair {
				break
			}
			return nil, fmt.Errorf("%s:%d: not a sweep point", path, line)
		}
		if err := checkPoint(sw, &p); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if first, dup := lineOf[p.Index]; dup {
			return nil, fmt.Errorf("%s:%d: index: point %d is also on line %d (a point is counted once)", path, line, p.Index, first)
		}
		lineOf[p.Index] = line
		out = append(out, p)
		good += len(text)
		if !complete {
			break
		}
	}
	if repair && good < len(b) {
		if err := os.Truncate(path, int64(good)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func writePoints(path string, ps []PointResult) error {
	var buf bytes.Buffer
	for _, p := range ps {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// LoadSweepDir reads a sweep directory's sweep.json and points.jsonl;
// errors reading them are *ReadError naming the file, line and field.
func LoadSweepDir(dir string) (*SweepMeta, []PointResult, error) {
	meta, err := readMeta(filepath.Join(dir, SweepMetaFile))
	if err != nil {
		return nil, nil, &ReadError{err}
	}
	ps, err := readPointsOf(meta.Sweep, filepath.Join(dir, SweepPointsFile), false)
	if err != nil {
		return nil, nil, &ReadError{err}
	}
	sortPoints(ps)
	return meta, ps, nil
}

// MergeSweeps joins sweep directories (shards of one sweep) into out: it
// checks they hold the same sweep, takes the union of their points (a
// point present twice must be identical) and writes sweep.json and the
// sorted points.jsonl. It returns the merged points and the number of
// points of the sweep still missing.
func MergeSweeps(out string, dirs []string) (*SweepMeta, []PointResult, int, error) {
	if len(dirs) == 0 {
		return nil, nil, 0, fmt.Errorf("%w: merge: no directory given", experiment.ErrConfig)
	}
	var meta *SweepMeta
	byIndex := map[int]PointResult{}
	for _, d := range dirs {
		m, ps, err := LoadSweepDir(d)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("merge %s: %w", d, err)
		}
		if meta == nil {
			meta = m
		} else if m.Hash != meta.Hash {
			return nil, nil, 0, fmt.Errorf("%w: %s has sweep %s, %s has sweep %s", ErrSweepMismatch, dirs[0], meta.Hash, d, m.Hash)
		}
		for _, p := range ps {
			if q, dup := byIndex[p.Index]; dup {
				a, _ := json.Marshal(p)
				b, _ := json.Marshal(q)
				if !bytes.Equal(a, b) {
					return nil, nil, 0, fmt.Errorf("%w: point %d differs between directories", ErrSweepMismatch, p.Index)
				}
			}
			byIndex[p.Index] = p
		}
	}
	ps := make([]PointResult, 0, len(byIndex))
	for _, p := range byIndex {
		ps = append(ps, p)
	}
	sortPoints(ps)
	merged := &SweepMeta{Hash: meta.Hash, Sweep: meta.Sweep, Command: meta.Command}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, 0, fmt.Errorf("create output directory: %w", err)
	}
	if err := WriteJSON(filepath.Join(out, SweepMetaFile), merged); err != nil {
		return nil, nil, 0, err
	}
	if err := writePoints(filepath.Join(out, SweepPointsFile), ps); err != nil {
		return nil, nil, 0, err
	}
	return merged, ps, meta.Sweep.Len() - len(ps), nil
}
