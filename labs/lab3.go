package labs

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// Lab3Intervals and Lab3CrashTimes are the sweep lab 3 asks for (its
// sweep.yaml). The crash times step by 83 ms from 1.6 s, a multiple of
// every interval: 83 ms shares no factor with the intervals' 25 ms, so
// the ten crashes fall at ten different phases of every interval, spread
// over its whole length, and the mean added latency of an interval is the
// expectation over a crash falling anywhere within it.
var (
	Lab3Intervals  = []string{"25ms", "50ms", "100ms", "200ms", "400ms", "800ms"}
	Lab3CrashTimes = lab3CrashTimes(1600*time.Millisecond, 83*time.Millisecond, 10)
)

// lab3CrashTimes are n crash times from first, step apart, as the sweep
// parameter writes them ("1.683s").
func lab3CrashTimes(first, step time.Duration, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.FormatFloat(float64((first+time.Duration(i)*step).Milliseconds())/1000, 'f', -1, 64) + "s"
	}
	return out
}

// lab3Point is one interval's figures.
type lab3Point struct {
	interval   string
	cpuPct     float64 // failure-free CPU overhead over no HA, in %
	addedMs    float64 // mean max added latency over the crash times
	addedSE    float64 // its standard error over the crash times
	addedMax   float64 // the largest over the crash times
	recoveryMs float64 // mean recovery time over the crash times (recovery_ms)
	unavailMs  float64 // mean unavailability over the crash times (unavailable_ms)
	cpuRatio   float64 // cpu× as points.csv gives it (three decimals)
	cost       float64
	recoveries []string
}

// lab3Points memoises lab3Sweep: it is deterministic.
var lab3Points struct {
	once sync.Once
	pts  []lab3Point
	err  error
}

func lab3Sweep(l *Lab) ([]lab3Point, error) {
	lab3Points.once.Do(func() { lab3Points.pts, lab3Points.err = lab3SweepOnce(l) })
	return lab3Points.pts, lab3Points.err
}

func lab3SweepOnce(l *Lab) ([]lab3Point, error) {
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
		p.cpuRatio = ratioOf(ov.CPURatio)
		var added, recovery, unavail []float64
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
			added = append(added, rec.MaxAddedLatencyMs)
			// recovery_ms and unavailable_ms as the sweep measures them:
			// against the strategy's own failure-free run.
			own := metrics.RecoveryWith(ref.Trace, out.Trace, sim.RecoveryOptions(e, ff.Trace))
			recovery = append(recovery, ptrMs(own.RecoveryMs))
			unavail = append(unavail, own.UnavailableMs)
			p.recoveries = append(p.recoveries, rec.Type)
		}
		p.addedMs, p.addedSE = meanSE(added)
		p.addedMax = slices.Max(added)
		p.recoveryMs, _ = meanSE(recovery)
		p.unavailMs, _ = meanSE(unavail)
		p.cost = lab3Cost(p.cpuPct, p.addedMs)
		pts = append(pts, p)
	}
	return pts, nil
}

// meanSE is the mean of xs and its standard error.
func meanSE(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/float64(len(xs)-1)) / math.Sqrt(float64(len(xs)))
}

// lab3Cost is the handout's cost: 1 % of CPU overhead weighs as much as
// 10 ms of added latency after a failure.
func lab3Cost(cpuPct, addedMs float64) float64 { return cpuPct + addedMs/10 }

func lab3() *Lab {
	l := &Lab{N: 3, Dir: "03-checkpoint-interval", Title: "The checkpoint-interval trade-off",
		Summary: "Sweep passive standby's checkpoint interval and the crash's phase within it; find the interval that minimises overhead + expected recovery cost.",
		Questions: []Question{
			{Key: "p1", Predict: true, Text: "Before you run: as checkpoint_interval grows from 25ms to 800ms, does the CPU overhead go up or down?"},
			{Key: "q1", Text: "CPU overhead of passive standby over no HA, in %, at checkpoint_interval 25ms?"},
			{Key: "q2", Text: "CPU overhead in % at checkpoint_interval 800ms?"},
			{Key: "q3", Text: "Mean (over the ten crash times) max added latency in ms at checkpoint_interval 800ms?"},
			{Key: "q4", Text: "Which checkpoint interval minimises cost = CPU overhead % + mean max added latency ms / 10?"},
		}}
	l.check = func(c *ctx) error {
		pts, err := lab3Sweep(l)
		if err != nil {
			return err
		}
		var table []string
		best, cheapest, fastest := pts[0], pts[0], pts[0]
		for _, p := range pts {
			table = append(table, fmt.Sprintf("%s: cpu +%.2f%%, added %.1f ms, cost %.2f", p.interval, p.cpuPct, p.addedMs, p.cost))
			if p.cost < best.cost {
				best = p
			}
			if p.cpuPct < cheapest.cpuPct {
				cheapest = p
			}
			if p.addedMs < fastest.addedMs {
				fastest = p
			}
		}
		ev := "Sweep: " + strings.Join(table, "; ") + "."
		first, last := pts[0], pts[len(pts)-1]
		trend := "down"
		if last.cpuPct > first.cpuPct {
			trend = "up"
		}
		c.choice(spec{key: "p1", evidence: fmt.Sprintf("CPU overhead goes %s: +%.2f%% at %s, +%.2f%% at %s.", trend, first.cpuPct, first.interval, last.cpuPct, last.interval),
			look: "what does a checkpoint cost, and how many are taken per second at each interval?"}, []string{trend})
		cpuConfusions := func(p lab3Point, key string) []confusion {
			return distinctMixUps(p.cpuPct, 0.05, 0.1,
				mixUp(1+p.cpuPct/100, fmt.Sprintf("That looks like the ratio cpu× at %s; %s asks for the overhead in percent: (cpu× − 1) × 100.", p.interval, key)),
				mixUp((round2(p.cpuRatio)-1)*100, "That is the overhead from cpu× as the sweep's table prints it, rounded to two decimals; take cpu_ratio from points.csv, which has three."))
		}
		c.number(spec{key: "q1", evidence: fmt.Sprintf("cpu× at 25ms is %.3f.", 1+first.cpuPct/100), look: "the cpu_ratio column of points.csv, minus 1, times 100.",
			confusions: cpuConfusions(first, "q1")}, first.cpuPct, 0.05, 0.1, "%")
		c.number(spec{key: "q2", evidence: fmt.Sprintf("cpu× at 800ms is %.3f.", 1+last.cpuPct/100), look: "the cpu_ratio column of points.csv.",
			confusions: cpuConfusions(last, "q2")}, last.cpuPct, 0.05, 0.1, "%")
		c.number(spec{key: "q3", evidence: "Mean of max_added_latency_ms over faults[0].at = " + strings.Join(Lab3CrashTimes, ", ") + ".",
			look: "the max_added_latency_ms column of points.csv, averaged over the ten crash times of the 800ms rows.",
			confusions: distinctMixUps(last.addedMs, 0.03, 0.5,
				mixUp(lab3Max(last), "That is the largest added latency of the 800ms rows; q3 asks for the mean over the ten crash times."),
				mixUp(last.recoveryMs, "That is the mean recovery time (recovery_ms: from the crash until every output is on time again); q3 asks for the largest added latency (max_added_latency_ms), a column of points.csv the printed table leaves out."),
				mixUp(last.unavailMs, "That is the mean unavailability (unavailable_ms: the longest silence at the sink); q3 asks for the largest added latency (max_added_latency_ms in points.csv)."))},
			last.addedMs, 0.03, 0.5, "ms")
		// An interval is accepted when its cost is within two standard
		// errors (over the crash times) of the minimum's: the noise of the
		// mean, not a share of a cost dominated by the detection delay.
		var ok []string
		for _, p := range pts {
			if p.cost <= best.cost+2*math.Hypot(best.addedSE, p.addedSE)/10 {
				ok = append(ok, p.interval)
			}
		}
		var confs []confusion
		if !slices.Contains(ok, cheapest.interval) {
			confs = append(confs, mistake("That interval minimises the CPU overhead alone; the cost adds the added latency after a crash.", cheapest.interval))
		}
		if !slices.Contains(ok, fastest.interval) {
			confs = append(confs, mistake("That interval minimises the added latency alone; the cost adds the CPU overhead.", fastest.interval))
		}
		byRecovery := pts[0]
		for _, p := range pts {
			if lab3Cost(p.cpuPct, p.recoveryMs) < lab3Cost(byRecovery.cpuPct, byRecovery.recoveryMs) {
				byRecovery = p
			}
		}
		if !slices.Contains(ok, byRecovery.interval) && byRecovery.interval != cheapest.interval && byRecovery.interval != fastest.interval {
			confs = append(confs, mistake("That interval minimises a cost computed with the recovery time (recovery_ms); the cost uses the largest added latency (max_added_latency_ms in points.csv).", byRecovery.interval))
		}
		c.choice(spec{key: "q4", evidence: fmt.Sprintf("The minimum cost %.2f is at %s (accepted: %s, within two standard errors of it). %s", best.cost, best.interval, strings.Join(ok, ", "), ev),
			look: "compute the cost for each interval from points.csv; plot cost against the interval.", confusions: confs}, ok)
		return nil
	}
	return l
}

// lab3Max is the largest added latency of one interval's crash times.
func lab3Max(p lab3Point) float64 { return p.addedMax }
