package main

import (
	"fmt"
	"html/template"
	"math"
	"net/http"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/reports"
)

// browsedChain is a chain-sweep directory.
type browsedChain struct {
	Dir    string
	Sweep  *reports.ChainSweep
	Report bool
}

// Lengths lists the chain lengths the sweep ran.
func (c browsedChain) Lengths() string {
	var ns []string
	for _, p := range c.Sweep.Points {
		ns = append(ns, strconv.Itoa(p.Fragments))
	}
	return strings.Join(ns, ", ")
}

// outcome says what a strategy's recovery time means for its verdict, so
// that a gap's time never reads as a successful recovery: "recovered in
// 224.2 ms"; a gap's "N inputs lost; output normal again 222.4 ms after
// the fault"; "not recovered (> 9.7 s)"; "no fault".
func outcome(r metrics.Recovery) string {
	switch {
	case r.NotRecovered:
		return r.RecoveryText()
	case r.RecoveryMs == nil:
		return "no fault"
	case r.Type == "gap":
		return fmt.Sprintf("%d inputs lost; output normal again %.1f ms after the fault", r.LostInputs, *r.RecoveryMs)
	}
	return fmt.Sprintf("recovered in %.1f ms", *r.RecoveryMs)
}

// numText writes a figure, "–" for none (nil or NaN).
func numText(v any, prec int) string {
	f, ok := asFloat(v)
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(f, 'f', prec, 64)
}

// diffCell is B − A with its sign, "–" when either has no figure.
func diffCell(a, b any, prec int) string {
	x, okA := asFloat(a)
	y, okB := asFloat(b)
	if !okA || !okB {
		return "–"
	}
	d := y - x
	s := strconv.FormatFloat(d, 'f', prec, 64)
	if d > 0 {
		s = "+" + s
	}
	if strings.Trim(s, "+-0.") == "" {
		s = strings.TrimLeft(s, "+-")
	}
	return s
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case *float64:
		if x == nil || math.IsNaN(*x) {
			return 0, false
		}
		return *x, true
	case float64:
		// A negative time is "none" (chain sweeps write -1 so).
		return x, !math.IsNaN(x) && x >= 0
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// runRow is one strategy of two runs compared.
type runRow struct {
	Strategy string
	A, B     *metrics.Run
}

// runRows pairs the runs of two results by strategy, in names' order.
func runRows(a, b *metrics.Result, names []string) []runRow {
	pick := func(res *metrics.Result, name string) *metrics.Run {
		for i := range res.Runs {
			if res.Runs[i].Strategy == name {
				return &res.Runs[i]
			}
		}
		return nil
	}
	var rows []runRow
	for _, n := range names {
		rows = append(rows, runRow{n, pick(a, n), pick(b, n)})
	}
	return rows
}

// sweepRow is one strategy and setting of two sweeps compared.
type sweepRow struct {
	Strategy, Setting string
	A, B              *reports.SweepRow
}

// recMean is a sweep row's mean recovery time, or NaN when no seed
// recovered (then NotRecovered says how many did not).
func recMean(r *reports.SweepRow) float64 {
	if r == nil || r.RecoveryMs.N == 0 {
		return math.NaN()
	}
	return r.RecoveryMs.Mean
}

func (b *browser) compareSweeps(w http.ResponseWriter, r *http.Request) {
	_, sweeps, _, err := b.scan()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	find := func(dir string) *browsedSweep {
		for i := range sweeps {
			if sweeps[i].Dir == dir {
				return &sweeps[i]
			}
		}
		return nil
	}
	a, c := find(r.URL.Query().Get("a")), find(r.URL.Query().Get("b"))
	if a == nil || c == nil {
		http.Error(w, "compare-sweeps: choose two sweeps listed on the front page (?a=DIR&b=DIR)", http.StatusNotFound)
		return
	}
	load := func(s *browsedSweep) ([]reports.SweepRow, error) {
		for _, f := range []string{reports.SweepMetaFile, reports.SweepPointsFile} {
			if !b.exists(path.Join(s.Dir, f)) { // resolves inside the root, symbolic links included
				return nil, fmt.Errorf("%s: no %s inside the served directory", s.Dir, f)
			}
		}
		_, pts, err := reports.LoadSweepDir(filepath.Join(b.root, filepath.FromSlash(s.Dir)))
		if err != nil {
			return nil, err
		}
		return reports.Aggregate(pts), nil
	}
	ra, err := load(a)
	if err != nil {
		http.Error(w, "compare-sweeps: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	rb, err := load(c)
	if err != nil {
		http.Error(w, "compare-sweeps: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	key := func(r reports.SweepRow) string { return r.Strategy + "\x00" + strings.Join(r.Values, ", ") }
	var rows []sweepRow
	index := map[string]int{}
	add := func(r *reports.SweepRow, isA bool) {
		k := key(*r)
		i, ok := index[k]
		if !ok {
			i = len(rows)
			index[k] = i
			rows = append(rows, sweepRow{Strategy: r.Strategy, Setting: strings.Join(r.Values, ", ")})
		}
		if isA {
			rows[i].A = r
		} else {
			rows[i].B = r
		}
	}
	for i := range ra {
		add(&ra[i], true)
	}
	for i := range rb {
		add(&rb[i], false)
	}
	render(w, compareSweepsPage, map[string]any{"A": a, "B": c, "Rows": rows})
}

// chainRow is one chain length of two chain sweeps compared.
type chainRow struct {
	Fragments int
	A, B      *reports.ChainPoint
}

func (b *browser) compareChains(w http.ResponseWriter, r *http.Request) {
	_, _, chains, err := b.scan()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	find := func(dir string) *browsedChain {
		for i := range chains {
			if chains[i].Dir == dir {
				return &chains[i]
			}
		}
		return nil
	}
	a, c := find(r.URL.Query().Get("a")), find(r.URL.Query().Get("b"))
	if a == nil || c == nil {
		http.Error(w, "compare-chains: choose two chain sweeps listed on the front page (?a=DIR&b=DIR)", http.StatusNotFound)
		return
	}
	var rows []chainRow
	at := func(n int) int {
		return slices.IndexFunc(rows, func(r chainRow) bool { return r.Fragments == n })
	}
	for _, side := range []*browsedChain{a, c} {
		for i := range side.Sweep.Points {
			p := &side.Sweep.Points[i]
			k := at(p.Fragments)
			if k < 0 {
				rows = append(rows, chainRow{Fragments: p.Fragments})
				k = len(rows) - 1
			}
			if side == a {
				rows[k].A = p
			} else {
				rows[k].B = p
			}
		}
	}
	slices.SortStableFunc(rows, func(x, y chainRow) int { return x.Fragments - y.Fragments })
	render(w, compareChainsPage, map[string]any{"A": a, "B": c, "Rows": rows, "Cols": make([]int, 4)})
}

// compareFuncs are the page functions plus those of the comparison tables.
var compareFuncs = func() template.FuncMap {
	m := template.FuncMap{
		"diff": diffCell,
		"num":  numText,
		// pair hands a figure of A and of B, and a precision, to a cell3.
		"pair":    func(a, b any, prec int) map[string]any { return map[string]any{"A": a, "B": b, "P": prec} },
		"recMean": recMean,
		"statMean": func(r *reports.SweepRow, which string) float64 {
			if r == nil {
				return math.NaN()
			}
			st := r.CPURatio
			if which == "bytes" {
				st = r.BytesRatio
			}
			if st.N == 0 {
				return math.NaN()
			}
			return st.Mean
		},
	}
	for k, v := range pageFuncs {
		m[k] = v
	}
	return m
}()

var comparePage = template.Must(template.New("compare").Funcs(compareFuncs).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>streamha: {{.A.Dir}} vs {{.B.Dir}}</title>` + pageStyle + `</head><body>
<p><a href="./">all runs</a></p>
<h1>{{.A.Dir}} vs {{.B.Dir}}</h1>
<table><tr><th></th><th>A: <a href="files/{{.A.Dir}}/">{{.A.Dir}}</a></th><th>B: <a href="files/{{.B.Dir}}/">{{.B.Dir}}</a></th></tr>
<tr><th>experiment · seed · mode</th><td>{{.A.Result.Experiment}} · {{.A.Result.Seed}} · {{.A.Result.Mode}}</td><td>{{.B.Result.Experiment}} · {{.B.Result.Seed}} · {{.B.Result.Mode}}</td></tr>
<tr><th>command</th><td><code>{{.A.Result.Command}}</code></td><td><code>{{.B.Result.Command}}</code></td></tr>
<tr><th>faults</th><td>{{range .A.Result.Faults}}{{.}}<br>{{end}}</td><td>{{range .B.Result.Faults}}{{.}}<br>{{end}}</td></tr>
</table>
<h2>Recovery</h2>
<table><tr><th>strategy</th><th>A recovery</th><th>B recovery</th><th>A missing · dup · wrong · lost</th><th>B missing · dup · wrong · lost</th></tr>
{{range .Rows}}<tr><td><span class="sw" style="background:{{colour .Strategy}}"></span>{{.Strategy}}</td>
{{with .A}}<td><span class="{{.Recovery.Type}}">{{verdict .Recovery}}</span><br><span class="d">{{outcome .Recovery}}</span></td>{{else}}<td>not run</td>{{end}}
{{with .B}}<td><span class="{{.Recovery.Type}}">{{verdict .Recovery}}</span><br><span class="d">{{outcome .Recovery}}</span></td>{{else}}<td>not run</td>{{end}}
{{with .A}}<td>{{.Recovery.Missing}} · {{.Recovery.Duplicates}} · {{.Recovery.Wrong}} · {{.Recovery.LostInputs}}</td>{{else}}<td>–</td>{{end}}
{{with .B}}<td>{{.Recovery.Missing}} · {{.Recovery.Duplicates}} · {{.Recovery.Wrong}} · {{.Recovery.LostInputs}}</td>{{else}}<td>–</td>{{end}}
</tr>{{end}}</table>
<h2>B − A</h2>
<p>Each figure of A, of B, and B − A (– where either has none: a strategy not run, or not recovered, whose time is no number).</p>
<table><tr><th>strategy</th><th colspan="3">recovery ms</th><th colspan="3">detect ms</th><th colspan="3">+latency ms</th><th colspan="3">cpu×</th><th colspan="3">bytes×</th><th colspan="3">msgs×</th></tr>
<tr><th></th>{{range $i := .Cols}}<th>A</th><th>B</th><th>B − A</th>{{end}}</tr>
{{range .Rows}}{{$a := .A}}{{$b := .B}}<tr><td><span class="sw" style="background:{{colour .Strategy}}"></span>{{.Strategy}}</td>
{{template "cell3" (pair (and $a $a.Recovery.RecoveryMs) (and $b $b.Recovery.RecoveryMs) 1)}}
{{template "cell3" (pair (and $a $a.Recovery.DetectionMs) (and $b $b.Recovery.DetectionMs) 1)}}
{{template "cell3" (pair (and $a $a.Recovery.MaxAddedLatencyMs) (and $b $b.Recovery.MaxAddedLatencyMs) 1)}}
{{template "cell3" (pair (and $a $a.Overhead.CPURatio) (and $b $b.Overhead.CPURatio) 2)}}
{{template "cell3" (pair (and $a $a.Overhead.BytesRatio) (and $b $b.Overhead.BytesRatio) 2)}}
{{template "cell3" (pair (and $a $a.Overhead.MessagesRatio) (and $b $b.Overhead.MessagesRatio) 2)}}
</tr>{{end}}</table>
<div class="side">
{{if .A.Report}}<iframe title="report A" src="files/{{.A.Dir}}/report.html"></iframe>{{end}}
{{if .B.Report}}<iframe title="report B" src="files/{{.B.Dir}}/report.html"></iframe>{{end}}
</div>
</body></html>
{{define "cell3"}}<td class="n">{{num .A .P}}</td><td class="n">{{num .B .P}}</td><td class="n">{{diff .A .B .P}}</td>{{end}}`))

var compareSweepsPage = template.Must(template.New("compare-sweeps").Funcs(compareFuncs).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>streamha: sweeps {{.A.Dir}} vs {{.B.Dir}}</title>` + pageStyle + `</head><body>
<p><a href="./">all results</a></p>
<h1>Sweeps {{.A.Dir}} vs {{.B.Dir}}</h1>
<table><tr><th></th><th>A: <a href="files/{{.A.Dir}}/">{{.A.Dir}}</a></th><th>B: <a href="files/{{.B.Dir}}/">{{.B.Dir}}</a></th></tr>
<tr><th>sweep</th><td>{{.A.Name}} ({{.A.Points}} points)</td><td>{{.B.Name}} ({{.B.Points}} points)</td></tr>
<tr><th>command</th><td><code>{{.A.Command}}</code></td><td><code>{{.B.Command}}</code></td></tr>
<tr><th>report</th><td>{{if .A.Report}}<a href="files/{{.A.Dir}}/report.html">report A</a>{{end}}</td><td>{{if .B.Report}}<a href="files/{{.B.Dir}}/report.html">report B</a>{{end}}</td></tr>
</table>
<p>Means over seeds, A, B and B − A, per strategy and setting. A recovery time is the mean over the seeds that recovered; "not rec." counts the others, never averaged in.</p>
<table><tr><th>strategy</th><th>setting</th><th colspan="3">recovery ms</th><th colspan="2">not rec.</th><th colspan="3">cpu×</th><th colspan="3">bytes×</th></tr>
<tr><th></th><th></th><th>A</th><th>B</th><th>B − A</th><th>A</th><th>B</th><th>A</th><th>B</th><th>B − A</th><th>A</th><th>B</th><th>B − A</th></tr>
{{range .Rows}}<tr><td><span class="sw" style="background:{{colour .Strategy}}"></span>{{.Strategy}}</td><td>{{.Setting}}</td>
{{template "cell3" (pair (recMean .A) (recMean .B) 1)}}
<td class="n">{{with .A}}{{.NotRecovered}}/{{.Seeds}}{{else}}–{{end}}</td><td class="n">{{with .B}}{{.NotRecovered}}/{{.Seeds}}{{else}}–{{end}}</td>
{{template "cell3" (pair (statMean .A "cpu") (statMean .B "cpu") 2)}}
{{template "cell3" (pair (statMean .A "bytes") (statMean .B "bytes") 2)}}
</tr>{{end}}</table>
</body></html>
{{define "cell3"}}<td class="n">{{num .A .P}}</td><td class="n">{{num .B .P}}</td><td class="n">{{diff .A .B .P}}</td>{{end}}`))

var compareChainsPage = template.Must(template.New("compare-chains").Funcs(compareFuncs).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>streamha: chain sweeps {{.A.Dir}} vs {{.B.Dir}}</title>` + pageStyle + `</head><body>
<p><a href="./">all results</a></p>
<h1>Chain sweeps {{.A.Dir}} vs {{.B.Dir}}</h1>
<table><tr><th></th><th>A: <a href="files/{{.A.Dir}}/">{{.A.Dir}}</a></th><th>B: <a href="files/{{.B.Dir}}/">{{.B.Dir}}</a></th></tr>
<tr><th>setup</th><td>{{.A.Sweep.Setup}}</td><td>{{.B.Sweep.Setup}}</td></tr>
<tr><th>command</th><td><code>{{.A.Sweep.Command}}</code></td><td><code>{{.B.Sweep.Command}}</code></td></tr>
</table>
<p>Restart: crash → every restarted fragment caught up (ms), mean over seeds; A, B and B − A ("–": no seed restarted, or a length only one sweep ran).</p>
<table><tr><th>fragments</th><th colspan="3"><span class="sw" style="background:{{colour "global-checkpoint"}}"></span>global-checkpoint restart</th><th colspan="3"><span class="sw" style="background:{{colour "passive-standby"}}"></span>passive-standby restart</th><th colspan="3">global-checkpoint recovery</th><th colspan="3">passive-standby recovery</th></tr>
<tr><th></th>{{range $i := .Cols}}<th>A</th><th>B</th><th>B − A</th>{{end}}</tr>
{{range .Rows}}{{$a := .A}}{{$b := .B}}<tr><td class="n">{{.Fragments}}</td>
{{template "cell3" (pair (and $a $a.GCRestartMs) (and $b $b.GCRestartMs) 1)}}
{{template "cell3" (pair (and $a $a.PSRestartMs) (and $b $b.PSRestartMs) 1)}}
{{template "cell3" (pair (and $a $a.GCRecoveryMs) (and $b $b.GCRecoveryMs) 1)}}
{{template "cell3" (pair (and $a $a.PSRecoveryMs) (and $b $b.PSRecoveryMs) 1)}}
</tr>{{end}}</table>
</body></html>
{{define "cell3"}}<td class="n">{{num .A .P}}</td><td class="n">{{num .B .P}}</td><td class="n">{{diff .A .B .P}}</td>{{end}}`))
