package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/internal/safefile"
	"github.com/streamha/streamha/reports"
)

func newServeCmd() *cobra.Command {
	var addr string
	var allowHosts []string
	c := &cobra.Command{
		Use:   "serve [DIR]",
		Short: "Browse and compare the runs, sweeps and chain sweeps under DIR (default streamha-out) in a local web page",
		Long: "serve starts a web server, bound to localhost by default, with a page that lists every run,\n" +
			"sweep and chain sweep under DIR (experiment, seed, mode, each strategy's verdict and recovery time),\n" +
			"opens their reports and files, and compares two runs, two sweeps or two chain sweeps: side by\n" +
			"side, with B − A for recovery, latency and cost. It reads the directories on every request, so\n" +
			"new runs appear on reload. Ctrl-C stops it (exit status 0). It serves only regular files of at\n" +
			"most 1 GiB that resolve inside DIR (no symbolic link out of it), and only to requests whose Host is\n" +
			"the address it listens on (--allow-host adds a name).",
		Example: "  streamha serve\n  streamha serve results --addr 127.0.0.1:9000",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := outRoot
			if len(args) == 1 {
				root = args[0]
			}
			if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
				return usage("serve: %s is not a directory (run 'streamha run' first, or give DIR)", root)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usage("--addr: %w", err)
			}
			for i, h := range allowHosts {
				allowHosts[i] = strings.ToLower(h)
			}
			srv := newServeServer(hostCheck(ln.Addr(), allowHosts, newBrowser(root)))
			fmt.Fprintf(cmd.OutOrStdout(), "serving %s at http://%s/ (Ctrl-C stops)\n", root, ln.Addr())
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			done := make(chan error, 1)
			go func() { done <- srv.Serve(limitServe(ln)) }()
			select {
			case err := <-done:
				return fmt.Errorf("serve: %w", err)
			case <-ctx.Done():
			}
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(shut); err != nil {
				return fmt.Errorf("serve: stop: %w", err)
			}
			if err := <-done; !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serve: %w", err)
			}
			return nil
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:8700", "address to listen on (host:port; port 0 picks a free one)")
	c.Flags().StringSliceVar(&allowHosts, "allow-host", nil, "also answer requests whose Host header is this name (a reverse proxy's); repeat or comma-separate")
	return c
}

// browser serves the result browser over one directory tree.
type browser struct {
	root  string
	files http.Handler
	// dir is root opened as an os.Root: every file is read through it,
	// so nothing outside root is ever read (serve_guard.go).
	dir *os.Root
}

func newBrowser(root string) http.Handler {
	dir, err := os.OpenRoot(root)
	if err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, fmt.Sprintf("serve: %v", err), http.StatusInternalServerError)
		})
	}
	b := &browser{root: root, dir: dir, files: confinedFiles{root: dir}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", b.index)
	mux.HandleFunc("GET /compare", b.compare)
	mux.HandleFunc("GET /compare-sweeps", b.compareSweeps)
	mux.HandleFunc("GET /compare-chains", b.compareChains)
	mux.Handle("GET /files/", b.files)
	return mux
}

// browsedRun is a run directory with its result.
type browsedRun struct {
	Dir    string // slash-separated, relative to the root
	Result *metrics.Result
	Report bool // report.html exists
	When   time.Time
}

// browsedSweep is a sweep directory.
type browsedSweep struct {
	Dir     string
	Name    string
	Points  int
	Command string
	Report  bool
}

// scan finds run directories (result.json) and sweep directories
// (sweep.json) under the root, newest first. Symbolic links (latest) are
// not followed, so each directory is listed once.
func (b *browser) scan() ([]browsedRun, []browsedSweep, []browsedChain, error) {
	var runs []browsedRun
	var sweeps []browsedSweep
	var chains []browsedChain
	err := filepath.WalkDir(b.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(b.root, p)
		rel = filepath.ToSlash(rel)
		if strings.Count(rel, "/") > 4 {
			return fs.SkipDir
		}
		if fi, err := b.dir.Stat(path.Join(rel, reports.ResultFile)); err == nil {
			var r metrics.Result
			if raw, err := safefile.ReadFileIn(b.dir, path.Join(rel, reports.ResultFile), reports.MaxResultFile); err == nil && json.Unmarshal(raw, &r) == nil {
				runs = append(runs, browsedRun{Dir: rel, Result: &r, Report: b.exists(path.Join(rel, "report.html")), When: fi.ModTime()})
			}
			return fs.SkipDir
		}
		if raw, err := safefile.ReadFileIn(b.dir, path.Join(rel, reports.SweepMetaFile), reports.MaxResultFile); err == nil {
			var meta reports.SweepMeta
			if json.Unmarshal(raw, &meta) == nil && meta.Sweep != nil {
				sweeps = append(sweeps, browsedSweep{
					Dir: rel, Name: meta.Sweep.Name, Points: b.countLines(path.Join(rel, reports.SweepPointsFile)),
					Command: meta.Command, Report: b.exists(path.Join(rel, "report.html")),
				})
			}
			return fs.SkipDir
		}
		if raw, err := safefile.ReadFileIn(b.dir, path.Join(rel, reports.ChainSweepFile), reports.MaxResultFile); err == nil {
			if cs, err := reports.ParseChainSweep(raw, path.Join(rel, reports.ChainSweepFile)); err == nil {
				chains = append(chains, browsedChain{Dir: rel, Sweep: cs, Report: b.exists(path.Join(rel, "report.html"))})
			}
			return fs.SkipDir
		}
		return nil
	})
	slices.SortStableFunc(runs, func(x, y browsedRun) int { return y.When.Compare(x.When) })
	return runs, sweeps, chains, err
}

// exists reports whether name resolves to a file inside the root.
func (b *browser) exists(name string) bool {
	_, err := b.dir.Stat(name)
	return err == nil
}

func (b *browser) index(w http.ResponseWriter, _ *http.Request) {
	runs, sweeps, chains, err := b.scan()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	render(w, indexPage, map[string]any{"Root": b.root, "Runs": runs, "Sweeps": sweeps, "Chains": chains})
}

func (b *browser) compare(w http.ResponseWriter, r *http.Request) {
	runs, _, _, err := b.scan()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	find := func(dir string) *browsedRun {
		for i := range runs {
			if runs[i].Dir == dir {
				return &runs[i]
			}
		}
		return nil
	}
	a, c := find(r.URL.Query().Get("a")), find(r.URL.Query().Get("b"))
	if a == nil || c == nil {
		http.Error(w, "compare: choose two runs listed on the front page (?a=DIR&b=DIR)", http.StatusNotFound)
		return
	}
	// One row per strategy of either run, in the first run's order.
	var names []string
	for _, run := range append(slices.Clone(a.Result.Runs), c.Result.Runs...) {
		if !slices.Contains(names, run.Strategy) {
			names = append(names, run.Strategy)
		}
	}
	render(w, comparePage, map[string]any{"A": a, "B": c, "Rows": runRows(a.Result, c.Result, names), "Cols": make([]int, 6)})
}

func render(w http.ResponseWriter, t *template.Template, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := t.Execute(w, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

var pageFuncs = template.FuncMap{
	"verdict": func(r metrics.Recovery) string { return r.Label() },
	// colour is a strategy's colour in the reports' figures.
	"colour": reports.StrategyHex,
	// ms is the recovery time as the table prints it ("not recovered (> 9.7 s)";
	// "no fault" when nothing failed).
	"ms": func(r metrics.Recovery) string {
		switch {
		case r.RecoveryMs != nil:
			return fmt.Sprintf("%.1f ms", *r.RecoveryMs)
		case r.NotRecovered:
			return r.RecoveryText()
		}
		return "no fault"
	},
	"outcome": outcome,
}

const pageStyle = `<meta name="viewport" content="width=device-width, initial-scale=1"><style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;display:block;max-width:100%;overflow-x:auto}
td a,td code{overflow-wrap:anywhere}.d{color:#555;font-size:90%}td.n{text-align:right;font-variant-numeric:tabular-nums}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}
.gap{color:#b00020}.precise{color:#1b5e20}.rollback{color:#8a5a00}
.side{display:flex;gap:1em}.side iframe{flex:1;height:80vh;border:1px solid #ccc}
code{font-size:90%}
.sw{display:inline-block;width:.8em;height:.8em;margin-right:.35em;border-radius:2px}
@media (max-width:600px){body{margin:.6em}.side{flex-direction:column}.side iframe{flex:none;width:100%;height:80vh}td,th{padding:.2em .3em}
table.list,table.list tbody,table.list tr,table.list td{display:block;border:0}table.list tr:first-child{display:none}
table.list tr{border-top:1px solid #ccc;padding:.3em 0}table.list td[data-l]::before{content:attr(data-l) ": ";color:#555}
table.list td.ab{display:inline-block}}
</style>`

var indexPage = template.Must(template.New("index").Funcs(pageFuncs).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>streamha results: {{.Root}}</title>` + pageStyle + `</head><body>
<h1>streamha results in <code>{{.Root}}</code></h1>
<h2>Runs</h2>
{{if .Runs}}<form action="compare" method="get">
<table class="list"><tr><th>A</th><th>B</th><th>directory</th><th>experiment</th><th>seed</th><th>mode</th><th>strategies: recovery</th><th>report</th></tr>
{{range $i, $r := .Runs}}<tr>
<td class="ab" data-l="A"><input type="radio" name="a" value="{{$r.Dir}}"{{if eq $i 1}} checked{{end}}></td>
<td class="ab" data-l="B"><input type="radio" name="b" value="{{$r.Dir}}"{{if eq $i 0}} checked{{end}}></td>
<td><a href="files/{{$r.Dir}}/">{{$r.Dir}}</a></td><td data-l="experiment">{{$r.Result.Experiment}}</td><td data-l="seed">{{$r.Result.Seed}}</td><td data-l="mode">{{$r.Result.Mode}}</td>
<td>{{range $r.Result.Runs}}<span class="sw" style="background:{{colour .Strategy}}"></span>{{.Strategy}}: <span class="{{.Recovery.Type}}">{{verdict .Recovery}}</span> <span class="d">{{outcome .Recovery}}</span><br>{{end}}</td>
<td>{{if $r.Report}}<a href="files/{{$r.Dir}}/report.html">report</a>{{end}}</td>
</tr>{{end}}</table>
<button type="submit">Compare A and B side by side</button></form>
{{else}}<p>No runs yet: <code>streamha run</code> writes one.</p>{{end}}
<h2>Sweeps</h2>
{{if .Sweeps}}<form action="compare-sweeps" method="get"><table class="list"><tr><th>A</th><th>B</th><th>directory</th><th>sweep</th><th>points done</th><th>command</th><th>report</th></tr>
{{range $i, $s := .Sweeps}}<tr><td class="ab" data-l="A"><input type="radio" name="a" value="{{$s.Dir}}"{{if eq $i 1}} checked{{end}}></td><td class="ab" data-l="B"><input type="radio" name="b" value="{{$s.Dir}}"{{if eq $i 0}} checked{{end}}></td>
<td><a href="files/{{$s.Dir}}/">{{$s.Dir}}</a></td><td data-l="sweep">{{$s.Name}}</td><td data-l="points done">{{$s.Points}}</td><td><code>{{$s.Command}}</code></td>
<td>{{if $s.Report}}<a href="files/{{$s.Dir}}/report.html">report</a>{{end}}</td></tr>{{end}}</table>
<button type="submit">Compare sweeps A and B</button></form>
{{else}}<p>No sweeps yet: <code>streamha sweep</code> writes one.</p>{{end}}
<h2>Chain sweeps</h2>
{{if .Chains}}<form action="compare-chains" method="get"><table class="list"><tr><th>A</th><th>B</th><th>directory</th><th>chain lengths</th><th>command</th><th>report</th></tr>
{{range $i, $c := .Chains}}<tr><td class="ab" data-l="A"><input type="radio" name="a" value="{{$c.Dir}}"{{if eq $i 1}} checked{{end}}></td><td class="ab" data-l="B"><input type="radio" name="b" value="{{$c.Dir}}"{{if eq $i 0}} checked{{end}}></td>
<td><a href="files/{{$c.Dir}}/">{{$c.Dir}}</a></td><td data-l="chain lengths">{{$c.Lengths}}</td><td><code>{{$c.Sweep.Command}}</code></td>
<td>{{if $c.Report}}<a href="files/{{$c.Dir}}/report.html">report</a>{{end}}</td></tr>{{end}}</table>
<button type="submit">Compare chain sweeps A and B</button></form>
{{else}}<p>No chain sweeps yet: <code>streamha chain-sweep</code> writes one.</p>{{end}}
</body></html>`))

// countLines counts the lines of a regular file inside the root of at
// most reports.MaxPointsFile bytes (0 when it cannot be read).
func (b *browser) countLines(name string) int {
	f, err := safefile.OpenIn(b.dir, name, reports.MaxPointsFile)
	if err != nil {
		return 0
	}
	defer f.Close()
	return linesOf(f)
}

// countLines counts the lines of the regular file at path, as
// browser.countLines does.
func countLines(path string) int {
	f, err := safefile.Open(path, reports.MaxPointsFile)
	if err != nil {
		return 0
	}
	defer f.Close()
	return linesOf(f)
}

// linesOf counts the lines of f; a line over 64 MiB ends the count.
func linesOf(f *safefile.File) int {
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		n++
	}
	return n
}
