package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/internal/cliflag"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

func init() { extraCommands = append(extraCommands, newSoakCmd) }

type soakFlags struct {
	runs        uint64
	seed        cliflag.Seed
	start       uint64
	strategy    string
	workers     int
	out         string
	noShrink    bool
	maxFailures int
	json        bool
	noProgress  bool
	generator   string
	determinism bool
	plant       string
	planted     ha.Planted
}

func newSoakCmd() *cobra.Command {
	var f soakFlags
	c := &cobra.Command{
		Use:   "soak",
		Short: "Run thousands of short simulated experiments with random fault schedules and check invariants",
		Long: "soak draws, for each strategy, --runs short experiments (3-5 s of simulated time, every query class)\n" +
			"with random fault schedules (crashes, crashes during a recovery, back-to-back failures, pauses,\n" +
			"partitions, delays, losses, corruptions) and checks invariants after each run: no panic, a bounded\n" +
			"number of simulator events (no livelock), lost inputs bounded by the inputs, bounded output queues,\n" +
			"and precise recovery for the precise strategies when the faults stay within their fault model\n" +
			"('streamha docs reliability'). A failing case is shrunk and written as a minimal experiment file into --out.\n" +
			"Run i of a strategy is a pure function of (--seed, strategy, i): shard with --seed or --start.",
		Example: "  streamha soak --runs 1000\n  streamha soak --runs 10000 --strategy passive-standby --workers 2\n" +
			"  streamha soak --seed 7 --start 20000 --runs 10000   # one shard of a larger soak",
		RunE: func(cmd *cobra.Command, _ []string) error { return runSoak(cmd, f) },
	}
	fl := c.Flags()
	fl.Uint64Var(&f.runs, "runs", 100, "runs per strategy")
	f.seed = cliflag.SeedOf(1)
	cliflag.AddSeed(fl, &f.seed, "soak seed (every run derives its experiment from it)")
	fl.Uint64Var(&f.start, "start", 0, "index of the first run (shard a soak: --start k*N --runs N)")
	cliflag.AddStrategies(fl, &f.strategy, "those the soak draws parameters for: "+strings.Join(sim.SoakStrategies(), ", "))
	fl.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "parallel runs")
	f.out = "soak-failures"
	cliflag.AddOut(fl, &f.out, cliflag.OutDir, "", "directory for the minimal experiment file of each failure")
	fl.BoolVar(&f.noShrink, "no-shrink", false, "write failing cases as drawn, without shrinking them")
	fl.IntVar(&f.maxFailures, "max-failures", 20, "stop after this many failing runs (0 = never)")
	cliflag.AddJSON(fl, &f.json, "the summary")
	fl.BoolVar(&f.noProgress, "no-progress", false, "no progress bar (it is shown only on a terminal anyway)")
	fl.StringVar(&f.generator, "generator", sim.GeneratorSwarm, "fault schedule generator: "+strings.Join(sim.Generators(), " or ")+
		" (swarm: each run draws a shape of faults first; classic: one fixed mix)")
	fl.BoolVar(&f.determinism, "check-determinism", false, "rerun every 10th run and compare its trace's hash with the first run's")
	fl.StringVar(&f.plant, "plant", "", "re-introduce fixed protocol bugs by name (the soak's self-test)")
	_ = fl.MarkHidden("plant")
	return c
}

// soakSeed is --seed (1 unless given).
func (f soakFlags) soakSeed() uint64 { return *f.seed.Value() }

// soakJob is one run to check.
type soakJob struct {
	strategy string
	run      uint64
}

// soakOutcome is a checked run, shrunk if it failed.
type soakOutcome struct {
	job    soakJob
	res    *sim.SoakResult
	err    error
	min    *sim.SoakCase
	minRes *sim.SoakResult
	shrink int
	file   string // the minimal experiment written for a failure
}

// soakStats summarises one strategy.
type soakStats struct {
	Strategy       string `json:"strategy"`
	Runs           int    `json:"runs"`
	InModel        int    `json:"in_model"`
	PreciseChecked int    `json:"precise_checked"`
	// OutsidePromise counts the runs the precise invariant did not apply
	// to, per reason (sim.SoakResult.OutsidePromise).
	OutsidePromise map[string]int `json:"outside_promise"`
	LiveChecked    int            `json:"liveness_checked"`
	Faults         map[string]int `json:"faults"`
	Queries        map[string]int `json:"queries"`
	Recoveries     map[string]int `json:"recoveries"`
	Failures       int            `json:"failures"`
	Violations     map[string]int `json:"violations"`
	MaxEventRatio  float64        `json:"max_event_ratio"`
	Files          []string       `json:"files,omitempty"`
}

type soakSummary struct {
	Seed     uint64       `json:"seed"`
	Start    uint64       `json:"start"`
	Runs     uint64       `json:"runs_per_strategy"`
	Workers  int          `json:"workers"`
	WallSecs float64      `json:"wall_seconds"`
	Stopped  bool         `json:"stopped_early,omitempty"`
	Total    int          `json:"runs_total"`
	Strats   []*soakStats `json:"strategies"`
	// Coverage counts the runs that reached each named rare state.
	Coverage map[string]int `json:"coverage"`
	// Rechecked counts the runs rerun for --check-determinism.
	Rechecked int `json:"determinism_rechecked,omitempty"`
}

func runSoak(cmd *cobra.Command, f soakFlags) error {
	out := cmd.OutOrStdout()
	if f.runs == 0 {
		return usage("--runs must be at least 1")
	}
	if f.workers < 1 {
		return usage("--workers must be at least 1, got %d", f.workers)
	}
	if f.maxFailures < 0 {
		return usage("--max-failures must not be negative, got %d", f.maxFailures)
	}
	names := sim.SoakStrategies()
	var err error
	switch f.strategy {
	case "":
	case "all":
		names = strategies.Names(false)
	default:
		if names, err = parseStrategyList(f.strategy); err != nil {
			return err
		}
	}
	if !slices.Contains(sim.Generators(), f.generator) {
		return usage("--generator: %q is not a generator (known: %s)", f.generator, strings.Join(sim.Generators(), ", "))
	}
	if f.planted, err = ha.ParsePlanted(f.plant); err != nil {
		return usage("--plant: %v", err)
	}
	total := int(f.runs) * len(names)
	jobs := make(chan soakJob)
	results := make(chan soakOutcome)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range f.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				results <- checkSoakJob(f, j)
			}
		}()
	}
	go func() {
		defer close(jobs)
		for i := range f.runs {
			for _, s := range names {
				select {
				case jobs <- soakJob{strategy: s, run: f.start + i}:
				case <-stop:
					return
				}
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	began := time.Now()
	bar := newProgress(cmd.ErrOrStderr(), "soak", total, f.noProgress)
	var outcomes []soakOutcome
	failures := 0
	stopped := false
	var writeErr error
	for o := range results {
		if o.err == nil && o.res.Failed() {
			// Written at once, so a long soak shows its failures as it goes.
			if file, err := writeSoakFailure(f.out, o); err != nil {
				writeErr = err // keep draining the workers
			} else {
				o.file = file
				bar.note(fmt.Sprintf("soak failure: %s: %s broke %s", file, o.res.Case.ID(), o.res.Violations[0].Invariant))
			}
		}
		outcomes = append(outcomes, o)
		if o.err != nil || o.res.Failed() {
			failures++
			if f.maxFailures > 0 && failures >= f.maxFailures && !stopped {
				stopped = true
				close(stop)
			}
		}
		bar.set(len(outcomes), total)
	}
	bar.finish()
	wall := time.Since(began)
	if writeErr != nil {
		return fmt.Errorf("soak: write a failing case: %w", writeErr)
	}
	// Report in a fixed order whatever the workers' timing.
	slices.SortFunc(outcomes, func(a, b soakOutcome) int {
		if c := slices.Index(names, a.job.strategy) - slices.Index(names, b.job.strategy); c != 0 {
			return c
		}
		return int(a.job.run) - int(b.job.run)
	})
	sum := soakSummary{Seed: f.soakSeed(), Start: f.start, Runs: f.runs, Workers: f.workers,
		WallSecs: wall.Seconds(), Stopped: stopped, Total: len(outcomes), Coverage: map[string]int{}}
	byName := map[string]*soakStats{}
	for _, n := range names {
		st := &soakStats{Strategy: n, Faults: map[string]int{}, Queries: map[string]int{},
			Recoveries: map[string]int{}, Violations: map[string]int{}, OutsidePromise: map[string]int{}}
		byName[n] = st
		sum.Strats = append(sum.Strats, st)
	}
	var firstErr error
	for _, o := range outcomes {
		st := byName[o.job.strategy]
		st.Runs++
		if o.err != nil {
			st.Failures++
			st.Violations["generate"]++
			firstErr = o.err
			continue
		}
		r := o.res
		for _, fl := range r.Case.Experiment.Faults {
			st.Faults[fl.Kind()]++
		}
		st.Queries[r.Case.Query]++
		if r.InModel {
			st.InModel++
		}
		if r.PreciseChecked {
			st.PreciseChecked++
		} else {
			st.OutsidePromise[r.OutsidePromise()]++
		}
		if r.Live.Checked && r.Live.Expected > 0 {
			st.LiveChecked++
		}
		for _, c := range r.Coverage {
			sum.Coverage[c]++
		}
		if r.TraceHash != "" {
			sum.Rechecked++
		}
		if r.Recovery.Type != "" {
			st.Recoveries[r.Recovery.Type]++
		}
		if r.RefEvents > 0 {
			st.MaxEventRatio = max(st.MaxEventRatio, float64(r.Events)/float64(r.RefEvents))
		}
		if !r.Failed() {
			continue
		}
		st.Failures++
		for _, v := range r.Violations {
			st.Violations[v.Invariant]++
		}
		st.Files = append(st.Files, o.file)
	}
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		printSoakSummary(out, sum)
	}
	if firstErr != nil {
		return firstErr
	}
	if failures > 0 {
		return fmt.Errorf("soak: %d of %d runs broke an invariant (minimal experiments in %s)", failures, len(outcomes), f.out)
	}
	if thin := thinCoverage(sum); len(thin) > 0 {
		return fmt.Errorf("soak: coverage: %s (each named state must be reached in at least %.1f %% of a soak of %d runs or more)",
			strings.Join(thin, "; "), 100*sim.CoverageMinShare, sim.CoverageMinRuns)
	}
	return nil
}

// checkSoakJob generates, checks and (when it fails) shrinks one run.
func checkSoakJob(f soakFlags, j soakJob) soakOutcome {
	o := soakOutcome{job: j}
	c, err := sim.GenerateSoakCaseWith(f.generator, f.soakSeed(), j.strategy, j.run)
	if err == nil {
		c.Planted = f.planted
		c.HashTrace = f.determinism && j.run%10 == 0
	}
	if err != nil {
		o.err = fmt.Errorf("soak run %s/%d/%d: %w", j.strategy, f.soakSeed(), j.run, err)
		return o
	}
	o.res = sim.CheckSoakCase(c)
	if c.HashTrace && !o.res.Failed() {
		sim.CheckDeterminism(o.res)
	}
	o.min, o.minRes = c, o.res
	if o.res.Failed() && !f.noShrink {
		o.min, o.minRes, o.shrink = sim.ShrinkSoakCase(c, o.res.Violations[0].Invariant, 0)
	}
	return o
}

func writeSoakFailure(dir string, o soakOutcome) (string, error) {
	b, err := sim.ReproYAML(o.min, o.minRes)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%d-%d.yaml", o.job.strategy, o.res.Case.Seed, o.job.run))
	return name, os.WriteFile(name, b, 0o644)
}
