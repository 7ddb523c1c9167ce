package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
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
	Hash  string            `json:"hash"`
	Sweep *experiment.Sweep `json:"sweep"`
	// Shard is "i/n" for a shard directory, "" for the whole sweep.
	Shard string `json:"shard,omitempty"`
	// Command reproduces the sweep.
	Command string `json:"command,omitempty"`
}

// PointResult is one finished point, one line of points.jsonl.
type PointResult struct {
	experiment.SweepPoint
	Result *metrics.Result `json:"result"`
}

// SortPoints sorts points by index.
func SortPoints(ps []PointResult) {
	sort.Slice(ps, func(a, b int) bool { return ps[a].Index < ps[b].Index })
}

// ReadSweepMeta reads and checks a sweep.json.
func ReadSweepMeta(path string) (*SweepMeta, error) {
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
func checkPoint(sw *experiment.Sweep, p *PointResult) error {
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

// ReadPoints reads points.jsonl. With repair, a last line cut short by an
// interruption is dropped (and truncated from the file); any other bad
// line is an error. A missing file is no points. Each point is checked
// against sw (when not nil); a point given twice is an error.
func ReadPoints(sw *experiment.Sweep, path string, repair bool) ([]PointResult, error) {
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

// WritePoints writes points.jsonl (through a temporary file, renamed
// into place).
func WritePoints(path string, ps []PointResult) error {
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
	meta, err := ReadSweepMeta(filepath.Join(dir, SweepMetaFile))
	if err != nil {
		return nil, nil, &ReadError{err}
	}
	ps, err := ReadPoints(meta.Sweep, filepath.Join(dir, SweepPointsFile), false)
	if err != nil {
		return nil, nil, &ReadError{err}
	}
	SortPoints(ps)
	return meta, ps, nil
}
