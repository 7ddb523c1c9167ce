package reports

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// labelRings is how far from its point a label may be moved, in label
// heights, before it is left out.
const labelRings = 24

// placeLabels chooses a box for each label, anchored at a point and of
// the given size (X width, Y height): the first of the positions right,
// left, above and below the point — then the same moved away in steps of
// one label height — that lies inside bounds and intersects neither a box
// chosen before it nor the glyph (a square of half-side glyph) of any
// point. placed[i] is false for a label no position fits; it is not drawn.
func placeLabels(anchors, sizes []vg.Point, glyph vg.Length, bounds vg.Rectangle) (boxes []vg.Rectangle, placed []bool) {
	boxes = make([]vg.Rectangle, len(anchors))
	placed = make([]bool, len(anchors))
	var taken []vg.Rectangle
	for _, a := range anchors {
		taken = append(taken, vg.Rectangle{Min: vg.Point{X: a.X - glyph, Y: a.Y - glyph}, Max: vg.Point{X: a.X + glyph, Y: a.Y + glyph}})
	}
	inside := func(r vg.Rectangle) bool {
		return r.Min.X >= bounds.Min.X && r.Max.X <= bounds.Max.X && r.Min.Y >= bounds.Min.Y && r.Max.Y <= bounds.Max.Y
	}
	free := func(r vg.Rectangle) bool {
		for _, t := range taken {
			if overlaps(r, t) {
				return false
			}
		}
		return true
	}
	for i, a := range anchors {
		w, h := sizes[i].X, sizes[i].Y
		gap := glyph + vg.Points(1)
		for ring := 0; ring <= labelRings && !placed[i]; ring++ {
			d := vg.Length(ring) * h
			for _, min := range []vg.Point{
				{X: a.X + gap, Y: a.Y - h/2 + d}, {X: a.X + gap, Y: a.Y - h/2 - d}, // right, up and down
				{X: a.X - gap - w, Y: a.Y - h/2 + d}, {X: a.X - gap - w, Y: a.Y - h/2 - d}, // left
				{X: a.X - w/2 + d, Y: a.Y + gap}, {X: a.X - w/2 - d, Y: a.Y + gap}, // above
				{X: a.X - w/2 + d, Y: a.Y - gap - h}, {X: a.X - w/2 - d, Y: a.Y - gap - h}, // below
				{X: a.X + gap + d, Y: a.Y + gap + d}, {X: a.X + gap + d, Y: a.Y - gap - h - d}, // diagonals
				{X: a.X - gap - w - d, Y: a.Y + gap + d}, {X: a.X - gap - w - d, Y: a.Y - gap - h - d},
			} {
				r := vg.Rectangle{Min: min, Max: vg.Point{X: min.X + w, Y: min.Y + h}}
				if inside(r) && free(r) {
					boxes[i], placed[i] = r, true
					taken = append(taken, r)
					break
				}
			}
		}
	}
	return boxes, placed
}

// overlaps reports whether two rectangles share more than an edge.
func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// placedLabels is a plotter of point labels that never overlap each other
// or the points (placeLabels); a label moved away from its point is joined
// to it by a thin line.
type placedLabels struct {
	xy     plotter.XYs
	labels []string
	cols   []color.Color
	// dx shifts a label's point sideways on the canvas, as its glyph is
	// (dodgedScatter); nil or 0 for none.
	dx    []vg.Length
	glyph vg.Length
	style text.Style
	// drawn are the boxes of the labels drawn last, for tests.
	drawn []vg.Rectangle
}

// newPlacedLabels is an empty set of labels in a small face.
func newPlacedLabels(glyph vg.Length) *placedLabels {
	return &placedLabels{glyph: glyph, style: text.Style{
		Font: font.From(plot.DefaultFont, 7), Handler: plot.DefaultTextHandler,
		XAlign: draw.XLeft, YAlign: draw.YBottom,
	}}
}

// add labels the point xy with s in colour col.
func (l *placedLabels) add(xy plotter.XY, s string, col color.Color) {
	l.addDodged(xy, 0, s, col)
}

// addDodged labels the point xy drawn dx to the side.
func (l *placedLabels) addDodged(xy plotter.XY, dx vg.Length, s string, col color.Color) {
	l.xy = append(l.xy, xy)
	l.labels = append(l.labels, s)
	l.cols = append(l.cols, col)
	l.dx = append(l.dx, dx)
}

// Plot implements plot.Plotter.
func (l *placedLabels) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	anchors := make([]vg.Point, len(l.xy))
	sizes := make([]vg.Point, len(l.xy))
	for i, xy := range l.xy {
		anchors[i] = vg.Point{X: tx(xy.X), Y: ty(xy.Y)}
		if i < len(l.dx) {
			anchors[i].X += l.dx[i]
		}
		r := l.style.Rectangle(l.labels[i])
		sizes[i] = vg.Point{X: r.Max.X - r.Min.X, Y: r.Max.Y - r.Min.Y}
	}
	boxes, placed := placeLabels(anchors, sizes, l.glyph, c.Rectangle)
	l.drawn = l.drawn[:0]
	for i, ok := range placed {
		if !ok {
			continue
		}
		b := boxes[i]
		sty := l.style
		sty.Color = l.cols[i]
		c.FillText(sty, b.Min, l.labels[i])
		l.drawn = append(l.drawn, b)
		// A label moved off its point is tied to it.
		if near := nearestPoint(b, anchors[i]); distance(near, anchors[i]) > 2*l.glyph+sizes[i].Y {
			c.StrokeLine2(draw.LineStyle{Color: l.cols[i], Width: vg.Points(0.4)}, anchors[i].X, anchors[i].Y, near.X, near.Y)
		}
	}
}

// nearestPoint is the point of rectangle r nearest to p.
func nearestPoint(r vg.Rectangle, p vg.Point) vg.Point {
	return vg.Point{X: min(max(p.X, r.Min.X), r.Max.X), Y: min(max(p.Y, r.Min.Y), r.Max.Y)}
}

func distance(a, b vg.Point) vg.Length {
	return vg.Length(math.Hypot(float64(a.X-b.X), float64(a.Y-b.Y)))
}

// dodgedScatter draws glyphs dx to the side of their points on the
// canvas: marks of several strategies at one point stay apart.
type dodgedScatter struct {
	xy    plotter.XYs
	dx    vg.Length
	style draw.GlyphStyle
}

// Plot implements plot.Plotter.
func (d *dodgedScatter) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	for _, xy := range d.xy {
		pt := vg.Point{X: tx(xy.X) + d.dx, Y: ty(xy.Y)}
		if c.Contains(pt) {
			c.DrawGlyph(d.style, pt)
		}
	}
}

// DataRange implements plot.DataRanger.
func (d *dodgedScatter) DataRange() (xmin, xmax, ymin, ymax float64) {
	return plotter.XYRange(d.xy)
}

// Thumbnail implements plot.Thumbnailer.
func (d *dodgedScatter) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(d.style, c.Center())
}
