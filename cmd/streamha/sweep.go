package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/internal/cliflag"
	"github.com/streamha/streamha/reports"
	"github.com/streamha/streamha/sweep"
)

type sweepFlags struct {
	spec       string
	config     string
	allowLarge bool
	params     []string
	strategy   string
	seeds      int
	seed       cliflag.Seed
	workers    int
	shard      string
	out        string
	noProgress bool
	noReport   bool
}

func newSweepCmd() *cobra.Command {
	var f sweepFlags
	c := &cobra.Command{
		Use:   "sweep",
		Short: "Sweep experiment or strategy parameters × strategies × seeds, with plots and reports",
		Long: "sweep runs the experiment at every combination of the swept parameter values, for every seed and\n" +
			"strategy, in parallel (--workers), and writes points.jsonl (one finished point per line, so an\n" +
			"interrupted sweep resumes where it stopped), the plots (PNG and SVG), report.md, report.html,\n" +
			"results.csv, results.json and points.csv into --out.\n\n" +
			"A parameter is a strategy parameter (given to every strategy that declares it; the others run\n" +
			"unchanged) or an experiment path: source.rate, detector.timeout, faults[0].at,\n" +
			"nodes[1].ops[0].tumbling.size. --shard i/n runs one slice; join slices with 'streamha report merge'.\n" +
			"See 'streamha docs sweeps'.",
		Example: "  streamha sweep --param checkpoint_interval=50ms,100ms,200ms,400ms,800ms --seeds 5\n" +
			"  streamha sweep --param faults[0].at=5s,10s,15s --param source.rate=1000,4000 --seeds 3\n" +
			"  streamha sweep --spec sweep-checkpoint --shard 0/4 --out sweep-0",
		RunE: func(cmd *cobra.Command, _ []string) error { return runSweep(cmd, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.spec, "spec", "", "sweep spec YAML file or built-in example name ('streamha docs sweeps'); flags add to it")
	cliflag.AddConfig(fl, &f.config, "the spec's, else the built-in experiment")
	fl.BoolVar(&f.allowLarge, "allow-large", false, "check every point against the large ranges, for real big runs ('streamha docs experiment', Ranges)")
	fl.StringArrayVar(&f.params, "param", nil, "swept parameter NAME=V1,V2,... (repeatable: the cartesian product is swept)")
	cliflag.AddStrategies(fl, &f.strategy, "the spec's, else the experiment's, else all")
	fl.IntVar(&f.seeds, "seeds", 0, "seeds per setting: the experiment's seed, seed+1, ... (default: the spec's, else 1)")
	cliflag.AddSeed(fl, &f.seed, "first seed of the sweep (default: the experiment's)")
	fl.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "points run in parallel")
	fl.StringVar(&f.shard, "shard", "", "run only slice i of n (\"i/n\", 0 ≤ i < n) for array jobs")
	cliflag.AddOut(fl, &f.out, cliflag.OutDir, "", "output directory (default ./streamha-out/sweep-<name>-<hash>/, with -shard-i-of-n for a shard: the same sweep\n"+
		"resumes there, a different one gets its own; linked as streamha-out/latest-sweep)")
	fl.BoolVar(&f.noProgress, "no-progress", false, "no progress bar (it is shown only on a terminal anyway)")
	fl.BoolVar(&f.noReport, "no-report", false, "write points only, no plots or reports (the default for a shard)")
	return c
}

// buildSweep resolves the spec file and flags into a sweep.
func buildSweep(f sweepFlags) (*experiment.Sweep, error) {
	spec := &experiment.SweepFile{}
	if f.spec != "" {
		var err error
		if spec, err = loadSweepSpec(f.spec); err != nil {
			return nil, err
		}
	}
	if f.config != "" {
		spec.Experiment = f.config
	}
	base := experiment.DefaultYAML
	if spec.Experiment != "" {
		flag := "--spec's experiment"
		if f.config != "" {
			flag = "--config"
		}
		b, _, err := readExperimentFile(flag, spec.Experiment, experiment.ParseOptions{AllowLarge: f.allowLarge})
		if err != nil {
			return nil, err
		}
		base = string(b)
	}
	if first := f.seed.Value(); first != nil {
		if len(spec.SeedList) > 0 {
			return nil, usage("--seed cannot be combined with the spec's seed_list")
		}
		n := max(1, spec.Seeds)
		if f.seeds > 0 {
			n = f.seeds
		}
		for i := range n {
			spec.SeedList = append(spec.SeedList, *first+uint64(i))
		}
	}
	if f.seeds < 0 {
		return nil, usage("--seeds: must be positive, got %d", f.seeds)
	}
	if f.seeds > 0 && len(spec.SeedList) == 0 {
		spec.Seeds = f.seeds
	}
	for _, p := range f.params {
		sp, err := experiment.ParseParamFlag(p)
		if err != nil {
			return nil, err
		}
		spec.Params = append(spec.Params, sp)
	}
	var names []string
	switch f.strategy {
	case "":
		names = spec.Strategies
	case "all":
		e, err := experiment.ParseWith([]byte(base), "experiment", experiment.ParseOptions{AllowLarge: f.allowLarge})
		if err != nil {
			return nil, err
		}
		names, err = strategyNames("all", e)
		if err != nil {
			return nil, err
		}
	default:
		e, err := experiment.ParseWith([]byte(base), "experiment", experiment.ParseOptions{AllowLarge: f.allowLarge})
		if err != nil {
			return nil, err
		}
		if names, err = strategyNames(f.strategy, e); err != nil {
			return nil, err
		}
	}
	return experiment.NewSweep(spec.Name, base, spec.Params, names, spec.Seeds, spec.SeedList, experiment.ParseOptions{AllowLarge: f.allowLarge})
}

func parseShard(s string) (int, int, error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, usage("--shard %q: want i/n with 0 ≤ i < n, such as 0/4", s)
	}
	return i, n, nil
}

func sweepCommand(f sweepFlags) string {
	parts := []string{"streamha sweep"}
	if f.spec != "" {
		parts = append(parts, "--spec", f.spec)
	}
	if f.config != "" {
		parts = append(parts, "--config", f.config)
	}
	for _, p := range f.params {
		parts = append(parts, "--param", p)
	}
	if f.strategy != "" {
		parts = append(parts, "--strategy", f.strategy)
	}
	if f.seeds > 0 {
		parts = append(parts, "--seeds", strconv.Itoa(f.seeds))
	}
	if f.seed.Value() != nil {
		parts = append(parts, "--seed", f.seed.String())
	}
	return strings.Join(parts, " ")
}

func runSweep(cmd *cobra.Command, f sweepFlags) error {
	sw, err := buildSweep(f)
	if err != nil {
		return err
	}
	shard, shards, err := parseShard(f.shard)
	if err != nil {
		return err
	}
	if f.workers < 1 {
		return usage("--workers: must be at least 1, got %d", f.workers)
	}
	dir := f.out
	if dir == "" {
		// The sweep's hash in the name: the same sweep resumes in its
		// directory, a different one gets its own.
		dir = filepath.Join(outRoot, "sweep-"+sw.Name+"-"+sw.Hash()[:8])
		if shards > 1 {
			dir += fmt.Sprintf("-shard-%d-of-%d", shard, shards)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create output directory: %w", err)
		}
		linkLatest(outRoot, "latest-sweep", dir)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := cmd.OutOrStdout()
	total := sw.Len()
	if shards > 1 {
		total = len(sw.Shard(shard, shards))
	}
	fmt.Fprintf(out, "sweep %s (%s): %d points (%d settings × %d seeds) × %d strategies, %d workers → %s\n",
		sw.Name, sw.Hash(), total, sw.Settings(), len(sw.Seeds), len(sw.Strategies), f.workers, dir)
	progress := newProgress(cmd.ErrOrStderr(), "sweep", total, f.noProgress)
	start := time.Now()
	points, err := sweep.Run(ctx, dir, sw, sweep.Options{
		Workers: f.workers, Shard: shard, Shards: shards, Progress: progress.set, Command: sweepCommand(f),
	})
	progress.finish()
	if err != nil {
		if errors.Is(err, reports.ErrSweepMismatch) {
			return usage("--out %s: %w; choose another --out, or leave --out out for a directory named after the sweep", dir, err)
		}
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("%w: the finished points are kept in %s; run the same command again to resume", errInterrupted, dir)
		}
		return err
	}
	fmt.Fprintf(out, "%d points done in %s\n", len(points), time.Since(start).Round(time.Millisecond))
	if shards > 1 && !cmd.Flags().Changed("no-report") {
		f.noReport = true
	}
	if f.noReport {
		if shards > 1 {
			fmt.Fprintf(out, "shard %d/%d written to %s; join the shards with: streamha report merge --out DIR %s ...\n", shard, shards, dir, dir)
		} else {
			fmt.Fprintf(out, "points written to %s (render with: streamha report %s)\n", dir, dir)
		}
		return nil
	}
	return renderSweep(out, dir)
}

// renderSweep writes a sweep directory's plots and reports and prints its table.
func renderSweep(out io.Writer, dir string) error {
	meta, all, err := sweep.Render(dir)
	if re := (*reports.ReadError)(nil); errors.As(err, &re) {
		return usage("%s: %w", dir, re.Err) // a damaged directory: exit 2, as for a run directory
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	if err := reports.PrintSweepTable(out, meta.Sweep, all); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nreport written to %s\n", filepath.Join(dir, "report.html"))
	return nil
}

// progress is a progress bar with ETA on a terminal, silent otherwise;
// notes go to the same writer either way.
type progress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func newProgress(w io.Writer, what string, total int, off bool) *progress {
	f, ok := w.(*os.File)
	if off || !ok || !term.IsTerminal(int(f.Fd())) {
		return &progress{w: w}
	}
	return &progress{w: w, bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)}
}

func (p *progress) set(done, _ int) {
	if p.bar != nil {
		_ = p.bar.Set(done)
	}
}

// note prints a line above the bar.
func (p *progress) note(s string) {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	fmt.Fprintln(p.w, s)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
