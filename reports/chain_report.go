package reports

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chain-sweep files: the sweep itself, its table and its figure.
const (
	ChainSweepFile = "chain-sweep.json"
	ChainCSVFile   = "chain-sweep.csv"
	chainFigure    = "chain-sweep"
)

// The two strategies a chain sweep compares.
const (
	chainGC = "global-checkpoint"
	chainPS = "passive-standby"
)

// ChainPoint is one chain length's mean restart and recovery times, in ms;
// a negative time means no seed had one (never restarted or recovered).
type ChainPoint struct {
	Fragments    int     `json:"fragments"`
	GCRestartMs  float64 `json:"global_checkpoint_restart_ms"`
	GCModelMs    float64 `json:"global_checkpoint_model_ms"`
	GCRecoveryMs float64 `json:"global_checkpoint_recovery_ms"`
	PSRestartMs  float64 `json:"passive_standby_restart_ms"`
	PSModelMs    float64 `json:"passive_standby_model_ms"`
	PSRecoveryMs float64 `json:"passive_standby_recovery_ms"`
}

// ChainSweep is a finished `streamha chain-sweep`.
type ChainSweep struct {
	// Setup says what every chain ran (rate, keys, costs, interval, seeds).
	Setup string `json:"setup"`
	// Command reproduces it.
	Command string       `json:"command"`
	Points  []ChainPoint `json:"points"`
}

// ReadChainSweep reads a chain-sweep directory's chain-sweep.json.
func ReadChainSweep(dir string) (*ChainSweep, error) {
	path := filepath.Join(dir, ChainSweepFile)
	b, err := readBounded(path, MaxResultFile)
	if err != nil {
		return nil, err
	}
	return ParseChainSweep(b, path)
}

// ParseChainSweep decodes a chain-sweep.json read from name (for errors).
func ParseChainSweep(b []byte, name string) (*ChainSweep, error) {
	var cs *ChainSweep
	if err := decodeStrict(b, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if cs == nil {
		return nil, fmt.Errorf("%s: empty", name)
	}
	return cs, nil
}

// IsChainSweepDir reports whether dir holds a chain sweep.
func IsChainSweepDir(dir string) bool { return exists(filepath.Join(dir, ChainSweepFile)) }

// chainTable is the chain sweep's table.
func chainTable(cs *ChainSweep) *table {
	t := &table{
		head: []string{"fragments", "gc restart ms", "gc model ms", "gc recovery ms", "ps restart ms", "ps model ms", "ps recovery ms"},
		keys: []string{"fragments", "global_checkpoint_restart_ms", "global_checkpoint_model_ms", "global_checkpoint_recovery_ms",
			"passive_standby_restart_ms", "passive_standby_model_ms", "passive_standby_recovery_ms"},
	}
	ms := func(v float64) cell {
		if v < 0 {
			return cell{text: "none", null: true}
		}
		return numCell(v, 1)
	}
	for _, p := range cs.Points {
		t.rows = append(t.rows, []cell{intCell(int64(p.Fragments)), ms(p.GCRestartMs), ms(p.GCModelMs), ms(p.GCRecoveryMs),
			ms(p.PSRestartMs), ms(p.PSModelMs), ms(p.PSRecoveryMs)})
	}
	return t
}

// WriteChainSweepReport writes a chain sweep into dir: chain-sweep.json,
// chain-sweep.csv, the figure (PNG and SVG) and report.md/report.html.
func WriteChainSweepReport(dir string, cs *ChainSweep) error {
	if err := WriteJSON(filepath.Join(dir, ChainSweepFile), cs); err != nil {
		return err
	}
	var csv strings.Builder
	csv.WriteString("fragments,global_checkpoint_restart_ms,global_checkpoint_model_ms,global_checkpoint_recovery_ms,passive_standby_restart_ms,passive_standby_model_ms,passive_standby_recovery_ms\n")
	for _, p := range cs.Points {
		fmt.Fprintf(&csv, "%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", p.Fragments, p.GCRestartMs, p.GCModelMs, p.GCRecoveryMs, p.PSRestartMs, p.PSModelMs, p.PSRecoveryMs)
	}
	if err := os.WriteFile(filepath.Join(dir, ChainCSVFile), []byte(csv.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", ChainCSVFile, err)
	}
	fig, err := ChainSweepFigure(cs)
	if err != nil {
		return err
	}
	d := &document{title: "streamha chain-sweep: restart time as the chain grows"}
	d.p(cs.Setup)
	if cs.Command != "" {
		d.p("Reproduce with `" + cs.Command + "`.")
	}
	d.p("Restart: crash → every restarted fragment caught up. Recovery: the recovery-time metric (docs/semantics.md). " +
		"global-checkpoint restarts every fragment from the last completed checkpoint; passive-standby restarts the failed fragment alone. " +
		"Model: the first-principles estimate of the restart. \"none\": no seed restarted or recovered.")
	t := chainTable(cs)
	d.tbl(t)
	d.h(2, "Figures")
	d.figure(&fig)
	return writeDoc(dir, d, t, []Figure{fig}, map[string]any{"setup": cs.Setup, "command": cs.Command})
}

// ChainSweepFigure draws restart time against chain length, measured and
// modelled, in each strategy's colour from the registry (measured solid
// with points, model dashed).
func ChainSweepFigure(cs *ChainSweep) (Figure, error) {
	title := "Restart time as the chain grows (crash of the middle fragment)"
	line := func(get func(ChainPoint) float64) plotter.XYs {
		var xy plotter.XYs
		for _, c := range cs.Points {
			if v := get(c); v >= 0 && !math.IsNaN(v) {
				xy = append(xy, plotter.XY{X: float64(c.Fragments), Y: v})
			}
		}
		return xy
	}
	p := newPlot(title, "fragments in the chain", "crash → every restarted fragment caught up (ms)", nil)
	p.Y.Min = 0 // restart times are compared from zero
	var notes []string
	for _, s := range []struct {
		strategy      string
		measured, mod func(ChainPoint) float64
	}{
		{chainGC, func(c ChainPoint) float64 { return c.GCRestartMs }, func(c ChainPoint) float64 { return c.GCModelMs }},
		{chainPS, func(c ChainPoint) float64 { return c.PSRestartMs }, func(c ChainPoint) float64 { return c.PSModelMs }},
	} {
		col := plotutil.Color(StrategyColor(s.strategy))
		for i, xy := range []plotter.XYs{line(s.measured), line(s.mod)} {
			label := s.strategy + " (measured)"
			if i == 1 {
				label = s.strategy + " (model)"
			}
			if len(xy) == 0 {
				notes = append(notes, label+": no chain restarted")
				continue
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return Figure{}, err
			}
			l.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.5)}
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return Figure{}, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Shape: draw.CircleGlyph{}, Radius: vg.Points(3)}
			if i == 1 {
				l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				sc.GlyphStyle.Shape = draw.RingGlyph{}
			}
			p.Add(l, sc)
			p.Legend.Add(label, l, sc)
		}
	}
	if len(notes) > 0 {
		p.Title.Text += "\n(" + strings.Join(notes, "; ") + ")"
	}
	return single(chainFigure, title, notes, p)
}
