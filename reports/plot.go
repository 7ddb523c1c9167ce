package reports

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/streamha/streamha/strategies"
)

// Figures are drawn in a sans-serif face, like the report's text, and in
// a palette of ten colours far enough apart to tell strategies apart on
// one axis: red, green, blue, orange, purple, brown, pink, grey, olive,
// cyan (strategies.Info.Color indexes it, plus one).
func init() {
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
	plotutil.DefaultColors = []color.Color{
		color.RGBA{R: 214, G: 39, B: 40, A: 255}, color.RGBA{R: 44, G: 160, B: 44, A: 255},
		color.RGBA{R: 31, G: 119, B: 180, A: 255}, color.RGBA{R: 255, G: 127, B: 14, A: 255},
		color.RGBA{R: 148, G: 103, B: 189, A: 255}, color.RGBA{R: 140, G: 86, B: 75, A: 255},
		color.RGBA{R: 227, G: 119, B: 194, A: 255}, color.RGBA{R: 127, G: 127, B: 127, A: 255},
		color.RGBA{R: 188, G: 189, B: 34, A: 255}, color.RGBA{R: 23, G: 190, B: 207, A: 255},
	}
}

// StrategyColor is the palette index of a strategy: the one it registers
// (strategies.Info.Color), so a strategy has the same colour in every
// figure whichever strategies a run or sweep compares. A registered
// strategy without one gets the next colour no registered strategy fixes,
// in registry order, so every strategy has its own while the palette
// lasts; an unregistered name a stable one among the colours nobody fixes.
func StrategyColor(name string) int {
	info, err := strategies.Lookup(name)
	if err == nil && info.Color > 0 {
		return info.Color - 1
	}
	fixed := map[int]bool{}
	var free []int
	for _, n := range strategies.Registered() {
		if i, err := strategies.Lookup(n); err == nil && i.Color > 0 {
			fixed[i.Color-1] = true
		}
	}
	for c := range plotutil.DefaultColors {
		if !fixed[c] {
			free = append(free, c)
		}
	}
	if len(free) == 0 {
		free = []int{len(plotutil.DefaultColors) - 1}
	}
	if err == nil {
		k := 0
		for _, n := range strategies.Registered() {
			if n == name {
				return free[k%len(free)]
			}
			if i, _ := strategies.Lookup(n); i.Color == 0 {
				k++
			}
		}
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return free[int(h.Sum32()%uint32(len(free)))]
}

// Figure is one rendered plot in both formats.
type Figure struct {
	// Name is the file stem ("recovery-vs-checkpoint_interval").
	Name string
	// Title is the figure's caption.
	Title string
	// Notes say what could not be drawn (empty series, NaN, values ≤ 0 on
	// a log axis); they are also printed in the figure itself.
	Notes []string
	SVG   []byte
	// paint draws the figure again for PNG output (rasterising is slow, so
	// it is done only when a PNG is wanted).
	paint func(dc draw.Canvas)
	w, h  vg.Length
	// yShared are latency panels whose y-range the run's figures share
	// (sharedLatencyRange).
	yShared []*plot.Plot
}

// PNG renders the figure as a PNG image.
func (f *Figure) PNG() ([]byte, error) {
	if f.paint == nil {
		return nil, fmt.Errorf("figure %s: nothing to render", f.Name)
	}
	ic := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(figDPI), vgimg.UseBackgroundColor(color.White))
	f.paint(draw.New(ic))
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: ic}).WriteTo(&pb); err != nil {
		return nil, fmt.Errorf("render %s.png: %w", f.Name, err)
	}
	return pb.Bytes(), nil
}

// Figure sizes.
const (
	figW   = 10 * vg.Inch
	figH   = 4.5 * vg.Inch
	figDPI = 110
)

// WriteFigures writes each figure as NAME.svg and NAME.png into dir.
func WriteFigures(dir string, figs []Figure) error {
	for i := range figs {
		f := &figs[i]
		if err := os.WriteFile(filepath.Join(dir, f.Name+".svg"), f.SVG, 0o644); err != nil {
			return fmt.Errorf("write figure: %w", err)
		}
		png, err := f.PNG()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name+".png"), png, 0o644); err != nil {
			return fmt.Errorf("write figure: %w", err)
		}
	}
	return nil
}

// renderFigure draws with paint on an SVG canvas of size w×h (and keeps
// paint for the PNG).
func renderFigure(name, title string, notes []string, w, h vg.Length, paint func(dc draw.Canvas)) (Figure, error) {
	f := Figure{Name: name, Title: title, Notes: notes, paint: paint, w: w, h: h}
	sc := vgsvg.New(w, h)
	paint(draw.New(sc))
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return f, fmt.Errorf("render %s.svg: %w", name, err)
	}
	f.SVG = sb.Bytes()
	return f, nil
}

// single renders one plot, its legend beside the plotting area.
func single(name, title string, notes []string, p *plot.Plot) (Figure, error) {
	return renderFigure(name, title, notes, figW, figH, func(dc draw.Canvas) {
		drawPlot(p, draw.Crop(dc, 0, -2*vg.Millimeter, 0, 0), legendWidth(p))
	})
}

// grid renders plots in rows × columns tiles.
func grid(name, title string, notes []string, w, h vg.Length, plots [][]*plot.Plot) (Figure, error) {
	rows, cols := len(plots), 0
	for _, r := range plots {
		cols = max(cols, len(r))
	}
	return renderFigure(name, title, notes, w, h, func(dc draw.Canvas) {
		dc = draw.Crop(dc, 0, -2*vg.Millimeter, 0, 0) // a legend keeps off the edge
		t := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter, PadY: vg.Millimeter,
			PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter}
		if cols > 1 {
			// Panels side by side share one legend strip at the right of
			// the figure (their legends are one; each row's is drawn at the
			// top of that row).
			var strip vg.Length
			for _, r := range plots {
				for _, p := range r {
					strip = max(strip, legendWidth(p))
				}
			}
			inner := draw.Crop(dc, 0, -strip, 0, 0)
			cs := plot.Align(plots, t, inner)
			lc := dc
			lc.Min.X = inner.Max.X + legendGap
			for i, r := range plots {
				for j, p := range r {
					if p == nil {
						continue
					}
					drawBare(p, cs[i][j])
					if legendWidth(p) > 0 {
						drawLegend(p, lc, p.DataCanvas(cs[i][j]).Max.Y)
					}
				}
			}
			return
		}
		// The legends of a column share one strip on the right of its
		// tiles, so that the plotting areas above each other line up.
		strips := make([]vg.Length, cols)
		for _, r := range plots {
			for j, p := range r {
				strips[j] = max(strips[j], legendWidth(p))
			}
		}
		cs := plot.Align(plots, t, dc)
		for i, r := range plots {
			for j, p := range r {
				if p != nil {
					drawPlot(p, cs[i][j], strips[j])
				}
			}
		}
	})
}

// newPlot makes a plot with a title (notes appended on further lines) and axis labels.
func newPlot(title, x, y string, notes []string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	for _, n := range notes {
		p.Title.Text += "\n" + wrapText("("+n+")", maxTitleLine)
	}
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.Add(plotter.NewGrid())
	styleLegend(p)
	roundAxes(p)
	return p
}

// emptyPlot is a plot that says why there is nothing to show.
func emptyPlot(title, msg string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.HideAxes()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 0.5, Y: 0.5}}, Labels: []string{"no data to plot: " + msg}})
	if err == nil {
		l.TextStyle[0].XAlign, l.TextStyle[0].YAlign = draw.XCenter, draw.YCenter
		p.Add(l)
	}
	return p
}

// series is one line of points with optional symmetric error bars.
type series struct {
	Name string
	XY   plotter.XYs
	Err  []float64 // half-widths, parallel to XY; nil = none
	Tags []string  // point labels, parallel to XY; nil = none
}

// cleanSeries drops points with NaN/Inf coordinates, and with coordinates
// ≤ 0 on a log axis, returning notes that say how many were dropped.
func cleanSeries(ss []series, logX, logY bool) ([]series, []string) {
	var nan, nonPos int
	var out []series
	for _, s := range ss {
		c := series{Name: s.Name}
		for i, p := range s.XY {
			bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
			if bad(p.X) || bad(p.Y) {
				nan++
				continue
			}
			if (logX && p.X <= 0) || (logY && p.Y <= 0) {
				nonPos++
				continue
			}
			c.XY = append(c.XY, p)
			if s.Err != nil {
				e := s.Err[i]
				if bad(e) {
					e = 0
				}
				if logY && p.Y-e <= 0 {
					e = p.Y * 0.999 // keep the lower bar above 0
				}
				c.Err = append(c.Err, e)
			}
			if s.Tags != nil {
				c.Tags = append(c.Tags, s.Tags[i])
			}
		}
		if len(c.XY) > 0 {
			out = append(out, c)
		}
	}
	var notes []string
	if nan > 0 {
		notes = append(notes, fmt.Sprintf("%d point%s without a value not drawn", nan, plural(nan)))
	}
	if nonPos > 0 {
		notes = append(notes, fmt.Sprintf("%d point%s ≤ 0 not drawn on the log axis", nonPos, plural(nonPos)))
	}
	return out, notes
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// errBars implements plotter.XYer and plotter.YErrorer.
type errBars struct {
	plotter.XYs
	err []float64
}

// YError implements plotter.YErrorer; the lower bar stops at 0 for
// non-negative figures.
func (e errBars) YError(i int) (float64, float64) {
	lo := e.err[i]
	if y := e.XYs[i].Y; y >= 0 && y-lo < 0 {
		lo = y
	}
	return lo, e.err[i]
}

// seriesLook is how a series is drawn: in its strategy's colour (a
// plotutil palette index, StrategyColor) with that strategy's glyph, and a
// variant > 0 tells apart several series of one strategy (other swept
// values) by glyph and dashes.
type seriesLook struct {
	color, variant int
}

// strategyLook draws every series in the colour of the strategy it is named by.
func strategyLook(name string) seriesLook { return seriesLook{color: StrategyColor(name)} }

// addSeries draws each series as a line with points (and error bars) as
// lookOf says, adds it to the legend, and labels its points (Tags) where
// the labels overlap nothing.
func addSeries(p *plot.Plot, ss []series, lookOf func(name string) seriesLook, lines bool) error {
	tags := newPlacedLabels(vg.Points(3))
	for _, s := range ss {
		look := lookOf(s.Name)
		col := plotutil.Color(look.color)
		sc, err := plotter.NewScatter(s.XY)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = col
		sc.GlyphStyle.Shape = plotutil.Shape(look.color + look.variant)
		sc.GlyphStyle.Radius = vg.Points(3)
		thumbs := []plot.Thumbnailer{sc}
		if lines && len(s.XY) > 1 {
			l, err := plotter.NewLine(s.XY)
			if err != nil {
				return err
			}
			l.LineStyle.Color = col
			l.LineStyle.Width = vg.Points(1.2)
			l.LineStyle.Dashes = plotutil.Dashes(look.variant)
			p.Add(l)
			thumbs = append(thumbs, l)
		}
		p.Add(sc)
		if s.Err != nil {
			eb, err := plotter.NewYErrorBars(errBars{s.XY, s.Err})
			if err != nil {
				return err
			}
			eb.LineStyle.Color = col
			p.Add(eb)
		}
		for i, tag := range s.Tags {
			tags.add(s.XY[i], tag, col)
		}
		p.Legend.Add(s.Name, thumbs...)
	}
	if len(tags.labels) > 0 {
		p.Add(tags)
	}
	return nil
}

// useLog sets a log scale on an axis.
func useLog(a *plot.Axis) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
}

// wantLog reports whether positive values spanning a factor of 8 or more
// read better on a log axis.
func wantLog(xs []float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		if math.IsNaN(x) || x <= 0 {
			continue
		}
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return hi > 0 && lo > 0 && hi/lo >= 8
}

// sanitizeName makes a file stem from a parameter name.
func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

// logTicks places major ticks at 1, 2 and 5 × powers of ten (only powers
// of ten when the range spans more than three decades), so that a narrow
// log range still has labelled ticks.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	// The sparsest set of multiples that labels at least three ticks.
	mults := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, m := range [][]float64{{1}, {1, 2, 5}, {1, 2, 3, 5}, {1, 2, 3, 4, 5, 6, 8}} {
		if (len(m) > 1 || hi/lo > 1000) && countLogTicks(lo, hi, m) >= 3 {
			mults = m
			break
		}
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for _, m := range mults {
			v := m * p
			if v >= lo && v <= hi {
				ts = append(ts, plot.Tick{Value: v, Label: logLabel(v)})
			}
		}
		for m := 1.0; m < 10; m++ {
			if v := m * p; v >= lo && v <= hi && !slices.Contains(mults, m) {
				ts = append(ts, plot.Tick{Value: v})
			}
		}
	}
	return ts
}

// countLogTicks is how many of the multiples mults of powers of ten lie in [lo, hi].
func countLogTicks(lo, hi float64, mults []float64) int {
	n := 0
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range mults {
			if v := m * math.Pow(10, e); v >= lo && v <= hi {
				n++
			}
		}
	}
	return n
}

// logLabel writes a log-axis tick value in plain decimals: "10000",
// "0.002", never "1e+04".
func logLabel(v float64) string {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	if err != nil {
		r = v
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// maxTitleLine is the longest line of a plot title's notes, in characters.
const maxTitleLine = 70

// wrapText breaks s into lines of at most width characters at spaces (a
// longer word stays whole).
func wrapText(s string, width int) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(s) {
		n := utf8.RuneCountInString(w)
		switch {
		case i == 0:
		case line+1+n > width:
			b.WriteString("\n")
			line = 0
		default:
			b.WriteString(" ")
			line++
		}
		b.WriteString(w)
		line += n
	}
	return b.String()
}
