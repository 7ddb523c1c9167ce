package labs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
	"github.com/streamha/streamha/strategies/conformance"
)

func lab1() *Lab {
	l := &Lab{N: 1, Dir: "01-gap-recovery", Title: "Gap recovery",
		Summary: "Run amnesia, identify which outputs were lost and why.",
		Questions: []Question{
			{"q1", "Which recovery type does amnesia achieve in this experiment?"},
			{"q2", "How many outputs were delivered with a wrong value or lineage?"},
			{"q3", "Which window(s) were damaged? Give the window start(s), e.g. 2s."},
			{"q4", "Which output id lost the most source tuples?"},
			{"q5", "How many source tuples were lost in total?"},
			{"q6", "How many milliseconds passed between the crash and its detection?"},
		}}
	l.check = func(c *ctx) error {
		r, err := l.simulate("experiment.yaml", "amnesia")
		if err != nil {
			return err
		}
		rec := r.rec()
		c.choice("q1", recoveryAnswers(rec.Type, rec.Subtype),
			fmt.Sprintf("The classifier says %s: %d missing, %d wrong, %d lost inputs.", r.label(), rec.Missing, rec.Wrong, rec.LostInputs),
			"the recovery column of the table.")
		wrong := r.statusIDs(classify.StatusWrong)
		c.number("q2", float64(rec.Wrong), 0, 0, "", "Wrong outputs: "+list(wrong, 8)+".", "the 'wrong' column, or count the explanations.")
		var windows []string
		for _, id := range append(slices.Clone(wrong), r.cls.MissingIDs...) {
			if _, w, ok := strings.Cut(id, "|w="); ok && !slices.Contains(windows, w) {
				windows = append(windows, w)
			}
		}
		// A window start is a time: "3" is read as "3s", as the ids write it.
		for i, a := range c.answers["q3"] {
			if _, err := strconv.ParseFloat(strings.TrimSpace(a), 64); err == nil {
				c.answers["q3"][i] = strings.TrimSpace(a) + "s"
			}
		}
		c.set("q3", windows, fmt.Sprintf("The damaged ids are %s; B crashed at 3.4 s, inside that window.", list(append(wrong, r.cls.MissingIDs...), 8)),
			"the ids in the explanations are key|w=window-start.")
		lost := r.lostPerID()
		var worst []string
		var most int64
		for id, n := range lost {
			if n > most {
				most, worst = n, []string{id}
			} else if n == most {
				worst = append(worst, id)
			}
		}
		sort.Strings(worst)
		c.choice("q4", worst, fmt.Sprintf("%s lost %d source tuples, the most of any output (per-id shortfall = expected lineage − delivered lineage).", strings.Join(worst, " and "), most),
			"each explanation ends with '(N inputs lost)'.")
		c.number("q5", float64(rec.LostInputs), 0, 0, "", fmt.Sprintf("Sum of the per-output shortfalls over %d damaged outputs.", len(lost)), "the 'lost in' column.")
		c.number("q6", ptrMs(rec.DetectionMs), 0, 1, "ms", "From the crash event to the first detect event of B in the trace.", "the 'detect ms' column.")
		return nil
	}
	return l
}

func lab2() *Lab {
	l := &Lab{N: 2, Dir: "02-precise-vs-repeating", Title: "Precise vs repeating",
		Summary: "Upstream backup with and without duplicate elimination; find the duplicates.",
		Questions: []Question{
			{"q1", "Which recovery does upstream backup achieve without dedup (experiment.yaml)?"},
			{"q2", "How many duplicate outputs reached the sink?"},
			{"q3", "Which output id was the first to be delivered twice (the earliest second copy)?"},
			{"q4", "How many tuples did A replay to the new B after the crash?"},
			{"q5", "Which recovery does it achieve with dedup: true (experiment-dedup.yaml)?"},
		}}
	l.check = func(c *ctx) error {
		r, err := l.simulate("experiment.yaml", "upstream-backup")
		if err != nil {
			return err
		}
		rec := r.rec()
		c.choice("q1", recoveryAnswers(rec.Type, rec.Subtype),
			fmt.Sprintf("The classifier says %s with %d duplicates, %d missing and %d wrong.", r.label(), rec.Duplicates, rec.Missing, rec.Wrong),
			"the recovery column for experiment.yaml.")
		dups := r.statusIDs(classify.StatusDuplicate)
		c.number("q2", float64(rec.Duplicates), 0, 0, "", "Duplicates: "+list(dups, 6)+".", "the 'dup' column.")
		if len(dups) == 0 {
			c.choice("q3", []string{"none"}, "No output was delivered twice.", "")
		} else {
			c.choice("q3", dups[:1], fmt.Sprintf("The first second copy delivered is %s; the duplicates run from %s to %s.", dups[0], dups[0], dups[len(dups)-1]),
				"the explanations say 'output X emitted twice', in time order.")
		}
		c.number("q4", float64(r.replayed("A")), 0, 0, "tuples", "From the replay_start events of host A in the trace.", "grep replay_start in trace-upstream-backup.jsonl.")
		d, err := l.simulate("experiment-dedup.yaml", "upstream-backup")
		if err != nil {
			return err
		}
		c.choice("q5", recoveryAnswers(d.rec().Type, d.rec().Subtype),
			fmt.Sprintf("With dedup the classifier says %s (%d duplicates).", d.label(), d.rec().Duplicates), "rerun with experiment-dedup.yaml.")
		return nil
	}
	return l
}

// Lab3Intervals and Lab3CrashTimes are the sweep lab 3 asks for.
var (
	Lab3Intervals  = []string{"25ms", "50ms", "100ms", "200ms", "400ms", "800ms"}
	Lab3CrashTimes = []string{"2.1s", "2.3s", "2.5s"}
)

// lab3Point is one interval's figures.
type lab3Point struct {
	interval   string
	cpuPct     float64 // failure-free CPU overhead over no HA, in %
	addedMs    float64 // mean max added latency over the crash times
	cost       float64
	recoveries []string
}

func lab3Sweep(l *Lab) ([]lab3Point, error) {
	e, err := l.experiment("experiment.yaml")
	if err != nil {
		return nil, err
	}
	_, ref, err := sim.Reference(e)
	if err != nil {
		return nil, err
	}
	base := metrics.OverheadOf(ref.Trace, nil)
	info, err := strategies.Lookup("passive-standby")
	if err != nil {
		return nil, err
	}
	var pts []lab3Point
	for _, iv := range Lab3Intervals {
		params, err := info.Parse(map[string]any{"checkpoint_interval": iv})
		if err != nil {
			return nil, err
		}
		p := lab3Point{interval: iv}
		st, err := info.New(params)
		if err != nil {
			return nil, err
		}
		ffCfg, err := sim.ConfigFor(e, st, true)
		if err != nil {
			return nil, err
		}
		ff, err := sim.Run(ffCfg)
		if err != nil {
			return nil, err
		}
		ov := metrics.OverheadOf(ff.Trace, &base)
		p.cpuPct = (ratioOf(ov.CPURatio) - 1) * 100
		for _, at := range Lab3CrashTimes {
			d, err := time.ParseDuration(at)
			if err != nil {
				return nil, err
			}
			e.Faults[0].At = experiment.Duration(d)
			st, err := info.New(params)
			if err != nil {
				return nil, err
			}
			cfg, err := sim.ConfigFor(e, st, false)
			if err != nil {
				return nil, err
			}
			out, err := sim.Run(cfg)
			if err != nil {
				return nil, err
			}
			rec := metrics.RecoveryOf(ref.Trace, out.Trace)
			p.addedMs += rec.MaxAddedLatencyMs / float64(len(Lab3CrashTimes))
			p.recoveries = append(p.recoveries, rec.Type)
		}
		p.cost = lab3Cost(p.cpuPct, p.addedMs)
		pts = append(pts, p)
	}
	return pts, nil
}

// lab3Cost is the handout's cost: 1 % of CPU overhead weighs as much as
// 10 ms of added latency after a failure.
func lab3Cost(cpuPct, addedMs float64) float64 { return cpuPct + addedMs/10 }

func lab3() *Lab {
	l := &Lab{N: 3, Dir: "03-checkpoint-interval", Title: "The checkpoint-interval trade-off",
		Summary: "Sweep passive standby's checkpoint interval, plot, find the interval that minimises overhead + expected recovery cost.",
		Questions: []Question{
			{"q1", "CPU overhead of passive standby over no HA, in %, at checkpoint_interval 25ms?"},
			{"q2", "CPU overhead in % at checkpoint_interval 800ms?"},
			{"q3", "Mean (over the three crash times) max added latency in ms at checkpoint_interval 800ms?"},
			{"q4", "Which checkpoint interval minimises cost = CPU overhead % + mean max added latency ms / 10?"},
		}}
	l.check = func(c *ctx) error {
		pts, err := lab3Sweep(l)
		if err != nil {
			return err
		}
		var table []string
		best := pts[0]
		for _, p := range pts {
			table = append(table, fmt.Sprintf("%s: cpu +%.2f%%, added %.1f ms, cost %.2f", p.interval, p.cpuPct, p.addedMs, p.cost))
			if p.cost < best.cost {
				best = p
			}
		}
		ev := "Sweep: " + strings.Join(table, "; ") + "."
		first, last := pts[0], pts[len(pts)-1]
		c.number("q1", first.cpuPct, 0.05, 0.1, "%", fmt.Sprintf("cpu× at 25ms is %.3f.", 1+first.cpuPct/100), "the cpu_ratio column of points.csv, minus 1, times 100.")
		c.number("q2", last.cpuPct, 0.05, 0.1, "%", fmt.Sprintf("cpu× at 800ms is %.3f.", 1+last.cpuPct/100), "the cpu_ratio column of points.csv.")
		c.number("q3", last.addedMs, 0.03, 0.5, "ms", "Mean of max_added_latency_ms over faults[0].at = "+strings.Join(Lab3CrashTimes, ", ")+".", "the max_added_latency_ms column of points.csv.")
		// Any interval within 2 % of the minimum cost is accepted: the
		// minimum of such a curve is flat.
		var ok []string
		for _, p := range pts {
			if p.cost <= best.cost*1.02 {
				ok = append(ok, p.interval)
			}
		}
		c.choice("q4", ok, fmt.Sprintf("The minimum cost %.2f is at %s (accepted: %s, within 2%% of it). %s", best.cost, best.interval, strings.Join(ok, ", "), ev),
			"compute the cost for each interval from points.csv; plot cost against the interval.")
		return nil
	}
	return l
}

func lab4() *Lab {
	l := &Lab{N: 4, Dir: "04-nondeterminism", Title: "Non-determinism",
		Summary: "A union makes active standby divergent; ship the decisions and make it precise.",
		Questions: []Question{
			{"q1", "Which recovery does active standby achieve without ship_decisions (experiment.yaml)?"},
			{"q2", "How many outputs were wrong?"},
			{"q3", "Which output id was the first wrong output delivered?"},
			{"q4", "Which recovery does it achieve with ship_decisions: true (experiment-ship.yaml)?"},
			{"q5", "What does shipping cost: the messages ratio (msgs×) over no HA with ship_decisions: true?"},
		}}
	l.check = func(c *ctx) error {
		r, err := l.simulate("experiment.yaml", "active-standby")
		if err != nil {
			return err
		}
		rec := r.rec()
		c.choice("q1", recoveryAnswers(rec.Type, rec.Subtype),
			fmt.Sprintf("The classifier says %s: %d wrong, %d missing, %d lost inputs (no input is lost, the sums are computed in another order).", r.label(), rec.Wrong, rec.Missing, rec.LostInputs),
			"the recovery column for experiment.yaml.")
		wrong := r.statusIDs(classify.StatusWrong)
		c.number("q2", float64(rec.Wrong), 0, 0, "", "Wrong outputs: "+list(wrong, 6)+".", "the 'wrong' column.")
		if len(wrong) == 0 {
			c.choice("q3", []string{"none"}, "No output was wrong.", "")
		} else {
			c.choice("q3", wrong[:1], fmt.Sprintf("The first wrong delivery is %s (the running sum of its key after a differently interleaved input).", wrong[0]),
				"the first explanation 'delivered with value … instead of …'.")
		}
		s, err := l.simulate("experiment-ship.yaml", "active-standby")
		if err != nil {
			return err
		}
		c.choice("q4", recoveryAnswers(s.rec().Type, s.rec().Subtype),
			fmt.Sprintf("With ship_decisions the classifier says %s (%d wrong).", s.label(), s.rec().Wrong), "rerun with experiment-ship.yaml.")
		msgs := ratioOf(s.sr.Run.Overhead.MessagesRatio)
		c.number("q5", msgs, 0.02, 0.02, "", fmt.Sprintf("msgs× is %.3f with shipping and %.3f without.", msgs, ratioOf(r.sr.Run.Overhead.MessagesRatio)), "the msgs× column.")
		return nil
	}
	return l
}

// Lab5Strategy is the name the lab-5 skeleton registers.
const Lab5Strategy = "my-strategy"

// Lab5Claims are the claims the completed lab-5 strategy must meet.
var Lab5Claims = conformance.Claims{
	Repeatable: conformance.Precise, Convergent: conformance.Precise,
	Deterministic: conformance.Precise, Arbitrary: conformance.Gap,
}

func lab5() *Lab {
	l := &Lab{N: 5, Dir: "05-own-strategy", Title: "Write your own strategy",
		Summary: "Complete the skeleton strategy package; the check runs the conformance suite and classifies its recovery.",
		Questions: []Question{
			{"q1", "Which recovery does your strategy achieve on the lab's experiment?"},
			{"q2", "How many tuples did A replay to the new B after the crash?"},
			{"q3", "What is the peak output-queue length (tuples, the 'peak queue' column) of your strategy?"},
			{"q4", "Which recovery does your strategy get in the conformance case arbitrary/crash-first?"},
		}}
	l.check = func(c *ctx) error {
		if _, err := strategies.Lookup(Lab5Strategy); err != nil {
			c.res.Failed = append(c.res.Failed, fmt.Sprintf("strategy %q is not registered: import your package in strategies/all/all.go (%v)", Lab5Strategy, err))
			for _, q := range l.Questions {
				c.add(q.Key, false, "cannot be checked without the strategy.")
			}
			return nil
		}
		rep, err := conformance.Check(Lab5Strategy, Lab5Claims)
		if err != nil {
			return err
		}
		var b strings.Builder
		rep.Write(&b)
		c.res.Notes = append(c.res.Notes, strings.TrimRight(b.String(), "\n"))
		if !rep.Passed() {
			var names []string
			for _, f := range rep.Failed() {
				names = append(names, f.Name)
			}
			c.res.Failed = append(c.res.Failed, fmt.Sprintf("the conformance suite failed %d of %d cases (%s); claims: precise for repeatable, convergent-capable and deterministic queries, only the invariants for arbitrary ones", len(names), len(rep.Cases), strings.Join(names, ", ")))
		}
		r, err := l.simulate("experiment.yaml", Lab5Strategy)
		if err != nil {
			return err
		}
		rec := r.rec()
		c.choice("q1", recoveryAnswers(rec.Type, rec.Subtype),
			fmt.Sprintf("The classifier says %s: %d missing, %d duplicates, %d wrong, %d lost inputs.", r.label(), rec.Missing, rec.Duplicates, rec.Wrong, rec.LostInputs),
			"run the lab's experiment with your strategy.")
		c.number("q2", float64(r.replayed("A")), 0, 0, "tuples", "From the replay_start events of host A.", "grep replay_start in the trace of your strategy.")
		peak := float64(r.sr.Run.Overhead.PeakQueue)
		c.number("q3", peak, 0.02, 1, "tuples", "Peak retained output tuples over all hosts in the failure-free run.", "the 'peak queue' column.")
		found := false
		for _, k := range rep.Cases {
			if k.Name == "arbitrary/crash-first" {
				found = true
				c.choice("q4", recoveryAnswers(k.Type, k.Subtype), fmt.Sprintf("The suite got %s (missing %d, wrong %d, lost inputs %d): the restarted union re-interleaves its two inputs, and the downstream's seq filter drops new outputs whose seq it already saw although they carry different tuples.", k.Label(), k.Recovery.Missing, k.Recovery.Wrong, k.Recovery.LostInputs), "the conformance table printed above.")
			}
		}
		if !found {
			// never let a question vanish: AllRight would then ignore it
			c.add("q4", false, "the conformance suite ran no arbitrary/crash-first case, so this answer cannot be checked")
		}
		return nil
	}
	return l
}

// Lab6Strategy is the strategy lab 6 runs in both modes.
const Lab6Strategy = "passive-standby"

func lab6() *Lab {
	l := &Lab{N: 6, Dir: "06-real-crashes", Title: "Real crashes",
		Summary: "Cluster mode, SIGKILL of the primary; compare simulated and real recovery times.",
		Questions: []Question{
			{"q1", "Path of the result.json your `streamha cluster` run wrote."},
			{"q2", "Real recovery time in ms (from your cluster result)."},
			{"q3", "Simulated recovery time in ms for the same experiment."},
			{"q4", "Which recovery took longer: real or sim?"},
			{"q5", "Real detection delay in ms (from your cluster result)."},
		}}
	l.check = func(c *ctx) error {
		s, err := l.simulate("experiment.yaml", Lab6Strategy)
		if err != nil {
			return err
		}
		simRec := ptrMs(s.rec().RecoveryMs)
		c.number("q3", simRec, 0.02, 1, "ms", fmt.Sprintf("The simulator gives recovery %.1f ms, detection %.1f ms.", simRec, ptrMs(s.rec().DetectionMs)), "streamha run with the lab's experiment: the 'recovery ms' column.")
		real, why := lab6Real(c)
		if real == nil {
			for _, k := range []string{"q1", "q2", "q4", "q5"} {
				c.add(k, false, why)
			}
			return nil
		}
		c.add("q1", true, why)
		rr := real.Recovery
		if rr.RecoveryMs == nil || rr.DetectionMs == nil {
			for _, k := range []string{"q2", "q4", "q5"} {
				c.add(k, false, "your cluster result has no recovery or detection time: did the crash happen (faults) and did the run last past it?")
			}
			return nil
		}
		c.number("q2", *rr.RecoveryMs, 0.01, 1, "ms", fmt.Sprintf("Your cluster result says recovery %.1f ms (%s).", *rr.RecoveryMs, rr.Type), "recovery_ms in your result.json.")
		longer := "real"
		if *rr.RecoveryMs < simRec {
			longer = "sim"
		}
		c.choice("q4", []string{longer}, fmt.Sprintf("Real %.1f ms vs simulated %.1f ms (difference %+.1f ms).", *rr.RecoveryMs, simRec, *rr.RecoveryMs-simRec), "compare q2 and q3.")
		c.number("q5", *rr.DetectionMs, 0.01, 1, "ms", fmt.Sprintf("Your cluster result says detection %.1f ms; the simulator's memberlist model gives %.1f ms.", *rr.DetectionMs, ptrMs(s.rec().DetectionMs)), "detection_ms in your result.json.")
		return nil
	}
	return l
}

// lab6Real reads the student's cluster result named by q1.
func lab6Real(c *ctx) (*metrics.Run, string) {
	notAvail := ""
	if !c.opts.ClusterAvailable {
		notAvail = " Note: this build of streamha has no 'cluster' command yet, so lab 6 cannot be completed with it; ask your teacher."
	}
	if len(c.answers["q1"]) == 0 {
		return nil, "no cluster result given: put the path of your cluster run's result.json in q1." + notAvail
	}
	path := c.answers["q1"][0]
	if !filepath.IsAbs(path) && c.opts.BaseDir != "" {
		path = filepath.Join(c.opts.BaseDir, path)
	}
	res, err := readResult(path)
	if err != nil {
		return nil, fmt.Sprintf("cannot read the cluster result %s: %v.%s", path, err, notAvail)
	}
	if res.Mode != "cluster" {
		return nil, fmt.Sprintf("%s is a %q result, not a cluster one: run the experiment with 'streamha cluster'.%s", path, res.Mode, notAvail)
	}
	for i := range res.Runs {
		if res.Runs[i].Strategy == Lab6Strategy {
			return &res.Runs[i], fmt.Sprintf("%s is a cluster result of %s (seed %d, faults: %s).", path, Lab6Strategy, res.Seed, strings.Join(res.Faults, "; "))
		}
	}
	return nil, fmt.Sprintf("%s has no %s run: run the cluster with --strategy %s.", path, Lab6Strategy, Lab6Strategy)
}

func lab7() *Lab {
	l := &Lab{N: 7, Dir: "07-split-brain", Title: "Split brain",
		Summary: "A pause with an aggressive detector causes a false failover; see what fencing prevents.",
		Questions: []Question{
			{"q1", "How many ms after the pause began was B declared dead?"},
			{"q2", "Was B really dead? (yes or no)"},
			{"q3", "How many outputs are missing with fencing on (experiment.yaml)?"},
			{"q4", "How many outputs are missing with fencing off (experiment-nofence.yaml)?"},
			{"q5", "With fencing on, how many messages did the hosts drop as coming from a stale epoch?"},
			{"q6", "With fencing off, for how many ms did the sink receive no output (the 'unavail ms' column)?"},
		}}
	l.check = func(c *ctx) error {
		on, err := l.simulate("experiment.yaml", "amnesia")
		if err != nil {
			return err
		}
		off, err := l.simulate("experiment-nofence.yaml", "amnesia")
		if err != nil {
			return err
		}
		det := ptrMs(on.rec().DetectionMs)
		c.number("q1", det, 0, 1, "ms", "From the pause event to the first detect event of B.", "the 'detect ms' column.")
		var pause time.Duration
		for _, e := range on.sr.Trace.Events() {
			if e.Kind == ha.EvPause {
				pause = time.Duration(e.N)
				break
			}
		}
		c.choice("q2", []string{"no"}, fmt.Sprintf("B was paused for %s and declared dead after %.1f ms: a false failover (the trace has a resume event for B and no crash).", pause, det),
			"look for crash, pause and resume events in the trace.")
		c.number("q3", float64(on.rec().Missing), 0, 0, "", fmt.Sprintf("With fencing: %s, missing %s.", on.label(), list(on.cls.MissingIDs, 5)), "the 'missing' column for experiment.yaml.")
		c.number("q4", float64(off.rec().Missing), 0, 0, "", fmt.Sprintf("Without fencing: %s, missing %s. The resumed B kept sending with its old, higher sequence numbers; C accepted them and then dropped the new primary's output as duplicates.", off.label(), list(off.cls.MissingIDs, 5)), "the 'missing' column for experiment-nofence.yaml.")
		stale := stat(on.sr.Trace, func(s *ha.NodeStats) int64 { return s.Fenced })
		c.number("q5", float64(stale), 0, 0, "messages", "Sum of fenced_dropped over the hosts' stats events.", "grep '\"fenced\"' in the trace, or sum fenced_dropped in the stats events.")
		c.number("q6", off.rec().UnavailableMs, 0.02, 1, "ms", fmt.Sprintf("Without fencing the sink waited %.1f ms; with fencing %.1f ms.", off.rec().UnavailableMs, on.rec().UnavailableMs), "the 'unavail ms' column.")
		return nil
	}
	return l
}

func readResult(path string) (*metrics.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r metrics.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("not a streamha result.json: %w", err)
	}
	return &r, nil
}
