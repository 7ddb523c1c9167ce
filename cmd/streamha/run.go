package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/internal/cliflag"
	"github.com/streamha/streamha/reports"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

type runFlags struct {
	config     string
	allowLarge bool
	strategy   string
	seed       cliflag.Seed
	out        string
	json       bool
	noOut      bool
	force      bool
	quiet      bool
	cpuProf    string
}

func newRunCmd() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run",
		Short: "Run one experiment under every strategy, side by side, in the simulator",
		Long: "run simulates the experiment (the built-in default, or --config FILE) under each strategy with\n" +
			"its fault schedule, classifies the recovery against the failure-free run, prints a comparison\n" +
			"table and writes result.json, the traces and the report into --out. A run that takes longer than\n" +
			"2 s reports each stage it starts on stderr (--quiet: never).\n\n" +
			"The table's columns and verdicts (definitions: 'streamha docs semantics'):\n" + reports.GlossaryText(),
		Example: "  streamha run\n  streamha run --strategy passive-standby,amnesia --seed 7\n  streamha run --config union --json",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRun(cmd, f)
		},
	}
	fl := c.Flags()
	cliflag.AddConfig(fl, &f.config, "the built-in experiment")
	fl.BoolVar(&f.allowLarge, "allow-large", false, "check the experiment against the large ranges, for real big runs ('streamha docs experiment', Ranges)")
	cliflag.AddStrategies(fl, &f.strategy, "the file's strategies, else all")
	cliflag.AddSeed(fl, &f.seed, "seed of the run (default: the experiment's)")
	cliflag.AddOut(fl, &f.out, cliflag.OutDir, "", "output directory (default: a new ./streamha-out/<experiment>-<seed>-<time>/, linked as streamha-out/latest);\n"+
		"refused when it holds a different run, unless --force")
	cliflag.AddForce(fl, &f.force, "what --out holds when it is a different run (its files are removed first)")
	cliflag.AddJSON(fl, &f.json, "the result (result.json)")
	fl.BoolVar(&f.noOut, "no-out", false, "write no files")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress messages on stderr")
	fl.StringVar(&f.cpuProf, "cpuprofile", "", "write a Go CPU profile of the run to FILE (read with 'go tool pprof')")
	return c
}

// loadExperiment reads --config (the built-in experiment when path is "")
// and sets the seed when one is given.
func loadExperiment(path string, seed *uint64, large bool) (*experiment.Experiment, error) {
	var e *experiment.Experiment
	o := experiment.ParseOptions{AllowLarge: large}
	if path == "" {
		e = experiment.Default()
		e.SetOptions(o)
	} else {
		var err error
		if e, err = loadExperimentFile("--config", path, o); err != nil {
			return nil, err
		}
	}
	if seed != nil {
		e.Seed = *seed
	}
	return e, nil
}

// strategyNames resolves --strategy against the experiment's own list.
func strategyNames(flag string, e *experiment.Experiment) ([]string, error) {
	if flag == "" {
		if l := e.StrategyList(); len(l) > 0 {
			var ns []string
			for _, s := range l {
				ns = append(ns, s.Name)
			}
			return ns, nil
		}
		flag = "all"
	}
	if flag == "all" {
		return strategies.Names(false), nil
	}
	return parseStrategyList(flag)
}

// parseStrategyList reads a --strategy value other than "all".
func parseStrategyList(flag string) ([]string, error) {
	ns, err := cliflag.SplitStrategies(flag)
	if err != nil {
		return nil, usage("--strategy: %w", err)
	}
	return ns, nil
}

func runRun(cmd *cobra.Command, f runFlags) (err error) {
	e, err := loadExperiment(f.config, f.seed.Value(), f.allowLarge)
	if err != nil {
		return err
	}
	if f.cpuProf != "" {
		stop, err := startCPUProfile(f.cpuProf)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, stop()) }()
	}
	names, err := strategyNames(f.strategy, e)
	if err != nil {
		return err
	}
	var progress sim.Progress
	if !f.quiet {
		progress = stageReporter(cmd.ErrOrStderr(), runProgressAfter)
	}
	dir := ""
	if !f.noOut {
		id, err := newRunIdentity("sim", e, names, reproduceCommand(f, e))
		if err != nil {
			return err
		}
		dir, err = prepareOutDir(outDirOptions{
			Out: f.out, Base: fmt.Sprintf("%s-%d", e.Name, e.Seed), Force: f.force, Reproducible: true, Now: time.Now(),
		}, id)
		if err != nil {
			return err
		}
	}
	if dir != "" {
		defer exitOnInterrupt(cmd.ErrOrStderr(), dir)()
	}
	cmp, err := compareInto(e, names, dir, progress, reproduceCommand(f, e))
	if err != nil {
		removeIfUnused(dir)
		return err
	}
	out := cmd.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(cmp.Result)
	}
	if err := reports.Table(out, cmp.Result); err != nil {
		return err
	}
	reports.Explanations(out, cmp.Result, 5)
	if dir != "" {
		fmt.Fprintf(out, "\nresults written to %s\n", dir)
	}
	return nil
}

// compareInto compares the strategies on the experiment and, unless dir is
// "", writes the run directory: each strategy's trace and figures as soon
// as its run is classified, then result.json and the report. A faulty
// trace is dropped once handled (written, or unwritten with dir ""), so a
// long experiment holds one at a time however many strategies run.
func compareInto(e *experiment.Experiment, names []string, dir string, progress sim.Progress, command string) (*sim.Comparison, error) {
	if progress == nil {
		progress = func(string) {}
	}
	// A Faulty callback takes each run's trace from the comparison; with
	// no directory it just lets the trace go.
	opts := sim.CompareOptions{Progress: progress, Faulty: func(metrics.FaultyRun) error { return nil }}
	var rd *reports.RunDir
	if dir != "" {
		var err error
		if rd, err = reports.NewRunDir(dir); err != nil {
			return nil, err
		}
		opts.Faulty = func(run metrics.FaultyRun) error {
			progress(run.Strategy + ": writing its trace and figures")
			return rd.AddRun(run)
		}
	}
	cmp, err := sim.CompareWith(e, names, opts)
	if err != nil {
		return nil, err
	}
	cmp.Result.Command = command
	if rd != nil {
		progress("writing the reference trace and the report")
		reports.AddModelsFromConfig(cmp.Result)
		if err := rd.Finish(cmp.Result, cmp.Reference); err != nil {
			return nil, err
		}
	}
	return cmp, nil
}

// runProgressAfter is how long a run stays silent before it reports its
// stages: the default experiment takes well under a second and prints
// only its table.
var runProgressAfter = 2 * time.Second

// stageReporter returns a sim.Progress that writes each stage it is told
// of to w, with the time elapsed since it was created, once after has
// passed.
func stageReporter(w io.Writer, after time.Duration) sim.Progress {
	start := time.Now()
	return func(stage string) {
		if el := time.Since(start); el >= after {
			fmt.Fprintf(w, "streamha: %s: %s\n", el.Round(100*time.Millisecond), stage)
		}
	}
}

func reproduceCommand(f runFlags, e *experiment.Experiment) string {
	parts := []string{"streamha run"}
	if f.config != "" {
		parts = append(parts, "--config", f.config)
	}
	if f.strategy != "" {
		parts = append(parts, "--strategy", f.strategy)
	}
	parts = append(parts, "--seed", fmt.Sprint(e.Seed))
	return strings.Join(parts, " ")
}

// startCPUProfile starts writing a CPU profile to path; stop ends it and
// closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, usage("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}

// exitOnInterrupt makes Ctrl-C (or SIGTERM) during a run end the process
// with exitInterrupted after saying what the run directory keeps: the
// simulator cannot be stopped midway, and the traces of the strategies
// already finished are written as they finish. The returned function
// stops listening.
func exitOnInterrupt(stderr io.Writer, dir string) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			fmt.Fprintf(stderr, "streamha: %v: the traces of the strategies finished so far are kept in %s (no result.json: the run is incomplete)\n", errInterrupted, dir)
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}
