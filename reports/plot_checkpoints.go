package reports

import (
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
)

// maxCheckpointPanels bounds the hosts a checkpoint timeline shows, one
// panel each (the hosts a checkpoint was restored from always among them).
const maxCheckpointPanels = 4

// checkpoint is one checkpoint a primary sent to its backup.
type checkpoint struct {
	id       uint64
	t        float64 // s, when it was taken
	bytes    int64
	kind     string // "full" or "incremental"
	acked    bool   // the backup reported holding it
	restored *ha.Event
}

// hostCheckpoints are the checkpoints of one primary, in the order taken.
type hostCheckpoints struct {
	host, backup string
	cks          []checkpoint
}

// checkpointsOf collects from a trace the checkpoints of every primary,
// whether its backup acknowledged each, and which one a takeover restored.
func checkpointsOf(trace *ha.Trace) []*hostCheckpoints {
	var hosts []*hostCheckpoints
	byHost := map[string]*hostCheckpoints{}
	find := func(host string, id uint64) *checkpoint {
		h := byHost[host]
		if h == nil {
			return nil
		}
		for i := len(h.cks) - 1; i >= 0; i-- {
			if h.cks[i].id == id {
				return &h.cks[i]
			}
		}
		return nil
	}
	for _, e := range trace.Events() {
		switch e.Kind {
		case ha.EvCheckpointBeg:
			h := byHost[e.Host]
			if h == nil {
				h = &hostCheckpoints{host: e.Host, backup: e.Peer}
				byHost[e.Host] = h
				hosts = append(hosts, h)
			}
			h.cks = append(h.cks, checkpoint{id: e.Seq, t: e.T.Seconds(), bytes: e.N, kind: e.Note})
		case ha.EvCheckpointEnd: // Host is the backup, Peer the primary
			if c := find(e.Peer, e.Seq); c != nil {
				c.acked = true
			}
		case ha.EvRestore: // Host restored Peer's checkpoint Seq
			if c := find(e.Peer, e.Seq); c != nil {
				ev := e
				c.restored = &ev
			}
		}
	}
	return hosts
}

// CheckpointFigure renders the checkpoint timeline of a run whose strategy
// checkpoints: per primary, each checkpoint at the time it was taken with
// its size, the ones the backup never acknowledged hollow, and the one a
// takeover restored circled and named, beside the crash, detection and
// takeover marks. ok is false when the trace has no periodic checkpoint
// (full or incremental; a strategy that only seeds a new spare has none).
func CheckpointFigure(name, strategy string, trace *ha.Trace, rec metrics.Recovery) (fig Figure, ok bool, err error) {
	hosts := checkpointsOf(trace)
	periodic := slices.ContainsFunc(hosts, func(h *hostCheckpoints) bool {
		return slices.ContainsFunc(h.cks, func(c checkpoint) bool { return c.kind == "full" || c.kind == "incremental" })
	})
	if !periodic { // a one-off state transfer (a new spare) is no timeline
		return Figure{}, false, nil
	}
	// The hosts restored from first, then in the order they began.
	restored := func(h *hostCheckpoints) bool {
		return slices.ContainsFunc(h.cks, func(c checkpoint) bool { return c.restored != nil })
	}
	slices.SortStableFunc(hosts, func(a, b *hostCheckpoints) int {
		switch ra, rb := restored(a), restored(b); {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
	var notes []string
	if len(hosts) > maxCheckpointPanels {
		notes = append(notes, fmt.Sprintf("%d more checkpointing hosts not shown", len(hosts)-maxCheckpointPanels))
		hosts = hosts[:maxCheckpointPanels]
	}
	title := strategy + ": checkpoint timeline"
	ms, windows := runMarkers(trace, rec)
	end := 0.0
	if last, ok := trace.Deliveries().Last(); ok {
		end = last.T.Seconds()
	}
	for _, m := range ms {
		end = max(end, m.t)
	}
	for _, h := range hosts {
		end = max(end, h.cks[len(h.cks)-1].t)
	}
	col := plotutil.Color(StrategyColor(strategy))
	var rows [][]*plot.Plot
	for i, h := range hosts {
		p, err := checkpointPanel(h, col, ms, windows, i == 0)
		if err != nil {
			return Figure{}, false, err
		}
		p.X.Min, p.X.Max = 0, end*1.01
		if i == len(hosts)-1 {
			p.X.Label.Text = "time (s)"
		}
		rows = append(rows, []*plot.Plot{p})
	}
	fig, err = grid(name, title, notes, figW, vg.Length(1+2.2*float64(len(rows)))*vg.Inch, rows)
	return fig, true, err
}

// checkpointPanel draws one primary's checkpoints: size against the time
// taken, as stems.
func checkpointPanel(h *hostCheckpoints, col color.Color, ms []marker, windows [][2]float64, withMarks bool) (*plot.Plot, error) {
	full, acked := 0, 0
	var hi int64 = 1
	for _, c := range h.cks {
		hi = max(hi, c.bytes)
		if c.kind == "full" {
			full++
		}
		if c.acked {
			acked++
		}
	}
	t := fmt.Sprintf("%s → %s: %d checkpoints (%d full), %d acknowledged", h.host, h.backup, len(h.cks), full, acked)
	for _, c := range h.cks {
		if c.restored != nil {
			t += fmt.Sprintf("\n#%d (%d B, taken at %.2f s) restored by %s at %.2f s",
				c.id, c.bytes, c.t, c.restored.Host, c.restored.T.Seconds())
		}
	}
	p := newPlot(t, "", "checkpoint (bytes)", nil)
	p.Y.Min, p.Y.Max = 0, float64(hi)*1.15
	if err := decorate(p, ms, windows, 0, p.Y.Max, withMarks); err != nil {
		return nil, err
	}
	var ackXY, openXY plotter.XYs
	stems := &stemLines{col: col}
	// A long run's checkpoints are thinned to every k-th (a restored one
	// is always drawn).
	k := stride(len(h.cks), maxPoints)
	if k > 1 {
		t += fmt.Sprintf("\n(every %d-th checkpoint drawn)", k)
		p.Title.Text = t
	}
	for i, c := range h.cks {
		if i%k != 0 && c.restored == nil {
			continue
		}
		xy := plotter.XY{X: c.t, Y: float64(c.bytes)}
		stems.xy = append(stems.xy, xy)
		if c.acked {
			ackXY = append(ackXY, xy)
		} else {
			openXY = append(openXY, xy)
		}
	}
	p.Add(stems)
	for _, g := range []struct {
		xy    plotter.XYs
		shape draw.GlyphDrawer
		label string
	}{
		{ackXY, draw.CircleGlyph{}, "acknowledged by " + h.backup},
		{openXY, draw.RingGlyph{}, "not acknowledged"},
	} {
		if len(g.xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(g.xy)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Shape: g.shape, Radius: vg.Points(2)}
		p.Add(sc)
		p.Legend.Add(g.label, sc)
	}
	for _, c := range h.cks {
		if c.restored == nil {
			continue
		}
		sc, err := plotter.NewScatter(plotter.XYs{{X: c.t, Y: float64(c.bytes)}})
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: colCrash, Shape: draw.RingGlyph{}, Radius: vg.Points(6)}
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("restored: #%d", c.id), sc)
	}
	return p, nil
}

// stemLines draws a thin vertical line from 0 to each point.
type stemLines struct {
	xy  plotter.XYs
	col color.Color
}

// Plot implements plot.Plotter.
func (s *stemLines) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := draw.LineStyle{Color: s.col, Width: vg.Points(0.5)}
	for _, xy := range s.xy {
		c.StrokeLine2(sty, tx(xy.X), ty(0), tx(xy.X), ty(xy.Y))
	}
}
