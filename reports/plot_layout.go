package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legendFontSize is the size of legend text: the legend sits beside the
// plotting area, where width is scarce.
const legendFontSize = 10

// legendGap separates a legend from the plotting area it belongs to.
const legendGap = 2 * vg.Millimeter

// legendWidth is the width a plot's legend takes beside its plotting area
// (0 when the legend is empty).
func legendWidth(p *plot.Plot) vg.Length {
	if p == nil {
		return 0
	}
	r := p.Legend.Rectangle(draw.Canvas{})
	if w := r.Max.X - r.Min.X; w > 0 {
		return w + legendGap
	}
	return 0
}

// drawPlot draws p in c with its legend outside the plotting area, in a
// strip of width strip on the right (strip ≥ legendWidth(p); tiles of one
// column share a strip so their axes line up).
func drawPlot(p *plot.Plot, c draw.Canvas, strip vg.Length) {
	if strip <= 0 {
		p.Draw(c)
		return
	}
	// The title is centred over the plot and its legend, so that a long
	// one is not cut at the edge.
	if title := p.Title.Text; title != "" {
		sty := p.Title.TextStyle
		descent := sty.FontExtents().Descent
		c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y + descent}, title)
		c.Max.Y -= sty.Rectangle(title).Size().Y + p.Title.Padding
		p.Title.Text = ""
		defer func() { p.Title.Text = title }()
	}
	pc := draw.Crop(c, 0, -strip, 0, 0)
	drawBare(p, pc)
	lc := c
	lc.Min.X = c.Max.X - strip + legendGap
	drawLegend(p, lc, p.DataCanvas(pc).Max.Y)
}

// drawBare draws p in c without its legend.
func drawBare(p *plot.Plot, c draw.Canvas) {
	leg := p.Legend
	p.Legend = plot.NewLegend()
	p.Draw(c)
	p.Legend = leg
}

// drawLegend draws p's legend in c from the height top down, icons first.
func drawLegend(p *plot.Plot, c draw.Canvas, top vg.Length) {
	leg := p.Legend
	c.Max.Y = top
	leg.Top, leg.Left = true, true
	leg.XOffs, leg.YOffs = 0, 0
	leg.Draw(c)
}

// styleLegend sets the legend's face and size for a legend outside the plot.
func styleLegend(p *plot.Plot) {
	p.Legend.TextStyle = text.Style{Font: font.From(plot.DefaultFont, legendFontSize), Handler: p.Legend.TextStyle.Handler}
	p.Legend.ThumbnailWidth = vg.Points(14)
	p.Legend.Padding = vg.Points(1.5)
	p.Legend.Top, p.Legend.Left = true, true
}

// niceTicks places major ticks on a linear axis at multiples of 1, 2 or 5
// × a power of ten, 4 to 8 of them, with labels in as many decimals as the
// step needs ("0.5", "1.0" … or "2000", "4000" …; never an exponent or a
// repeated label), and minor ticks between them.
type niceTicks struct{}

// Ticks implements plot.Ticker.
func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || hi < lo {
		return nil
	}
	if hi == lo {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'f', -1, 64)}}
	}
	step, minor := niceStep(hi - lo)
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ts []plot.Tick
	first := math.Ceil(lo/minor-1e-9) * minor
	for i := 0; ; i++ {
		v := first + float64(i)*minor
		if v > hi+minor*1e-9 {
			break
		}
		if k := v / step; math.Abs(k-math.Round(k)) < 1e-6 {
			// The value is its label read back: 1.9, not 1.9000000000000001.
			label := strconv.FormatFloat(math.Round(k)*step, 'f', decimals, 64)
			if label == "-0" || strings.Trim(label, "-0.") == "" {
				label = strings.TrimPrefix(label, "-")
			}
			v, _ = strconv.ParseFloat(label, 64)
			ts = append(ts, plot.Tick{Value: v, Label: label})
		} else {
			ts = append(ts, plot.Tick{Value: v})
		}
	}
	return ts
}

// niceStep is the major tick step for a range of width span (1, 2 or 5 ×
// a power of ten giving at least 4 and at most 8 intervals) and the
// minor step between major ticks.
func niceStep(span float64) (step, minor float64) {
	p := math.Pow(10, math.Floor(math.Log10(span)))
	for _, m := range []float64{0.1, 0.2, 0.5, 1, 2, 5, 10} {
		step = m * p
		if span/step <= 8 {
			break
		}
	}
	switch first := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9)); {
	case math.Abs(first-2) < 1e-6:
		minor = step / 4
	default:
		minor = step / 5
	}
	return step, minor
}

// roundAxes puts round ticks on a plot's linear axes (a log axis keeps
// its logTicks).
func roundAxes(p *plot.Plot) {
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		if _, isLog := a.Scale.(plot.LogScale); !isLog {
			a.Tick.Marker = niceTicks{}
		}
	}
}

// StrategyHex is a strategy's colour in every figure, as "#RRGGBB" (for
// the pages that name strategies: the reports' tables, streamha serve).
func StrategyHex(strategy string) string {
	r, g, b, _ := plotutil.Color(StrategyColor(strategy)).RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// strategySwatch is a small square in a strategy's figure colour, put
// before its name in the report's tables.
func strategySwatch(strategy string) string {
	if strategy == "" {
		return ""
	}
	return `<span class="sw" style="background:` + StrategyHex(strategy) + `"></span>`
}
