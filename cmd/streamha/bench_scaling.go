package main

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// scalePoint is one measured run of the scaling study.
type scalePoint struct {
	x        float64
	wall     time.Duration
	peakHeap uint64
	events   int64
}

// measure runs f with a sampler of the live heap and returns the wall time
// and the peak heap seen (the trace stays reachable until f returns).
func measure(f func() (int64, error)) (scalePoint, error) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var peak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				v := read()
				mu.Lock()
				peak = max(peak, v)
				mu.Unlock()
			}
		}
	}()
	t0 := time.Now()
	ev, err := f()
	wall := time.Since(t0)
	close(stop)
	<-done
	p := scalePoint{wall: wall, events: ev}
	if peak > base {
		p.peakHeap = peak - base
	}
	return p, err
}

func simRun(yaml string) func() (int64, error) {
	return func() (int64, error) {
		e, err := experiment.ParseWith([]byte(yaml), "scaling", benchLimits)
		if err != nil {
			return 0, err
		}
		st, err := strategies.Build("none", nil)
		if err != nil {
			return 0, err
		}
		cfg, err := sim.ConfigFor(e, st, true)
		if err != nil {
			return 0, err
		}
		o, err := sim.Run(cfg)
		if err != nil {
			return 0, err
		}
		n := totalsOf(o.Trace).tuples
		runtime.KeepAlive(o)
		return n, nil
	}
}

// defaultQueryYAML is the default query at scaleRate for n tuples over keys.
func defaultQueryYAML(n, keys int) string {
	d := time.Duration(float64(n) / scaleRate * float64(time.Second))
	return fmt.Sprintf(`name: scaling
seed: 42
duration: %s
drain: 3s
source: {rate: %g, keys: %d}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 1s, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
`, d, scaleRate, keys)
}

// chainYAML is a chain of k map nodes (every tuple reaches the sink).
func chainYAML(n, k int) string {
	d := time.Duration(float64(n) / scaleRate * float64(time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "name: chain\nseed: 42\nduration: %s\ndrain: 3s\nsource: {rate: %g, keys: 16}\nnodes:\n", d, scaleRate)
	for i := range k {
		fmt.Fprintf(&b, "  - {name: N%d, ops: [{map: {scale: 1}}]}\n", i)
	}
	return b.String()
}

func benchScaling(out, errw io.Writer, size benchSize, img string) error {
	type study struct {
		name, xlabel string
		xs           []int
		yaml         func(x int) string
		note         string
	}
	studies := []study{
		{"tuples", "source tuples", size.scaleTuples, func(x int) string { return defaultQueryYAML(x, 16) },
			"default query (filter+map → tumbling 1 s sum → map), 16 keys, 20 k tuples/s"},
		{"tuples-map", "source tuples", size.scaleTuples, func(x int) string { return chainYAML(x, 3) },
			"3 map nodes: every source tuple is a sink delivery in the trace"},
		{"nodes", "nodes in the chain", size.scaleNodes, func(x int) string { return chainYAML(100_000, x) },
			"chain of map nodes, 100 k tuples"},
		{"keys", "keys", size.scaleKeys, func(x int) string { return defaultQueryYAML(size.keysTuples, x) },
			fmt.Sprintf("default query, %s tuples", human(float64(size.keysTuples)))},
	}
	if err := os.MkdirAll(img, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", img, err)
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(out, "\nscaling of the simulator (no HA, no faults; peak heap above the idle heap):\n")
	fmt.Fprintf(tw, "study\tx\twall\tpeak heap\ttuple-events\ttuple-events/s\tbytes per tuple-event\n")
	for _, s := range studies {
		var pts []scalePoint
		for _, x := range s.xs {
			p, err := measure(simRun(s.yaml(x)))
			if err != nil {
				return fmt.Errorf("scaling %s=%d: %w", s.name, x, err)
			}
			p.x = float64(x)
			pts = append(pts, p)
			fmt.Fprintf(errw, "bench: scaling %s=%d: %s, peak heap %.1f MiB\n", s.name, x, p.wall.Round(time.Millisecond), float64(p.peakHeap)/(1<<20))
			fmt.Fprintf(tw, "%s\t%d\t%s\t%.1f MiB\t%d\t%s/s\t%.0f\n", s.name, x, p.wall.Round(time.Millisecond),
				float64(p.peakHeap)/(1<<20), p.events, human(float64(p.events)/p.wall.Seconds()), float64(p.peakHeap)/float64(max(1, p.events)))
		}
		if err := scalingPlot(filepath.Join(img, "scaling-"+s.name+".png"), s.xlabel, s.note, pts); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "plots written to %s/scaling-{tuples,tuples-map,nodes,keys}.png\n", img)
	return benchWholeRun(out, errw, size.scaleTuples[len(size.scaleTuples)-1])
}

// benchWholeRun measures a whole `streamha run` — reference run, every
// strategy with and without the crash, classification, run directory and
// report written — of the every-tuple-delivered chain of n tuples with a
// crash of the middle node half-way: the memory target is about a whole
// experiment, not the simulator alone.
func benchWholeRun(out, errw io.Writer, n int) error {
	yaml := chainYAML(n, 3) + fmt.Sprintf("faults: [{at: %s, crash: N1}]\n",
		time.Duration(float64(n)/scaleRate/2*float64(time.Second)))
	e, err := experiment.ParseWith([]byte(yaml), "whole-run", benchLimits)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "streamha-bench-whole-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	names := strategies.Names(false)
	fmt.Fprintf(errw, "bench: whole run of %s every-output tuples, %d strategies…\n", human(float64(n)), len(names))
	p, err := measure(func() (int64, error) {
		_, err := compareInto(e, names, dir, nil, "")
		return 0, err
	})
	if err != nil {
		return fmt.Errorf("whole run: %w", err)
	}
	fmt.Fprintf(out, "\nwhole streamha run, %s tuples through 3 map nodes (every tuple delivered), crash of N1, %s, run directory written:\n"+
		"  %s wall, peak heap %.0f MiB (target for a 10 M-tuple experiment: < 2 GiB; heap objects, live and not yet collected)%s\n",
		human(float64(n)), strings.Join(names, ", "), p.wall.Round(time.Millisecond), float64(p.peakHeap)/(1<<20), peakRSS())
	return nil
}

// peakRSS describes the bench process's peak resident set so far — the
// whole run's, as it is the bench's largest — or "" when unknown.
func peakRSS() string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil || ru.Maxrss <= 0 {
		return ""
	}
	return fmt.Sprintf("; process peak RSS %.0f MiB", float64(ru.Maxrss)/(1<<10)) // Maxrss is in KiB
}

// scalingPlot draws wall time and peak heap against x on log-log axes, one
// panel each, side by side.
func scalingPlot(path, xlabel, note string, pts []scalePoint) error {
	mk := func(title, ylabel string, y func(scalePoint) float64) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
		p.Add(plotter.NewGrid())
		var xy plotter.XYs
		var lin plotter.XYs
		for _, pt := range pts {
			v := y(pt)
			if v > 0 && pt.x > 0 && !math.IsNaN(v) {
				xy = append(xy, plotter.XY{X: pt.x, Y: v})
			}
		}
		if len(xy) > 0 {
			// a linear reference through the first point
			for _, q := range xy {
				lin = append(lin, plotter.XY{X: q.X, Y: xy[0].Y * q.X / xy[0].X})
			}
		}
		if len(xy) == 0 {
			return p, nil
		}
		if err := plotutil.AddLinePoints(p, "measured", xy, "linear from the first point", lin); err != nil {
			return nil, err
		}
		p.Legend.Top, p.Legend.Left = true, true
		return p, nil
	}
	pt, err := mk("simulator wall time\n"+note, "seconds", func(p scalePoint) float64 { return p.wall.Seconds() })
	if err != nil {
		return err
	}
	pm, err := mk("peak heap", "MiB", func(p scalePoint) float64 { return float64(p.peakHeap) / (1 << 20) })
	if err != nil {
		return err
	}
	c := vgimg.NewWith(vgimg.UseWH(11*vg.Inch, 4.5*vg.Inch), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: 8 * vg.Millimeter, PadTop: 2 * vg.Millimeter,
		PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	pt.Draw(tiles.At(dc, 0, 0))
	pm.Draw(tiles.At(dc, 1, 0))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return fmt.Errorf("render %s: %w", path, err)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
