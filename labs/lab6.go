package labs

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamha/streamha/ha/metrics"
)

// Lab6Strategy is the strategy lab 6 runs in both modes.
const Lab6Strategy = "passive-standby"

func lab6() *Lab {
	l := &Lab{N: 6, Dir: "06-real-crashes", Title: "Real crashes",
		Summary: "Cluster mode, SIGKILL of the primary; compare simulated and real recovery times.",
		Questions: []Question{
			{Key: "p1", Predict: true, Text: "Before you run: will the real recovery take longer than the simulated one? (yes or no)"},
			{Key: "q1", Text: "Path of the result.json your `streamha cluster` run wrote."},
			{Key: "q2", Text: "Real recovery time in ms (from your cluster result)."},
			{Key: "q3", Text: "Simulated recovery time in ms for the same experiment."},
			{Key: "q4", Text: "Which recovery took longer: real or sim?"},
			{Key: "q5", Text: "Real detection delay in ms (from your cluster result)."},
		}}
	l.check = func(c *ctx) error {
		s, err := l.simulate("experiment.yaml", Lab6Strategy)
		if err != nil {
			return err
		}
		simRec := ptrMs(s.rec().RecoveryMs)
		real, why := lab6Real(c)
		var confs3 []confusion
		if d := s.rec().DetectionMs; d != nil && math.Abs(*d-simRec) > 0.05 {
			confs3 = append(confs3, mixUp(*d, "That is the simulated detection time; recovery runs until the output is back to normal."))
		}
		if real != nil && real.Recovery.RecoveryMs != nil {
			confs3 = append(confs3, mixUp(*real.Recovery.RecoveryMs, "That is your cluster run's recovery (q2); q3 asks for the simulator's, from 'streamha run' on the same experiment."))
		}
		c.number(spec{key: "q3", evidence: fmt.Sprintf("The simulator gives recovery %.1f ms, detection %.1f ms.", simRec, ptrMs(s.rec().DetectionMs)),
			look: "streamha run with the lab's experiment: the 'recovery ms' column.", confusions: distinctMixUps(simRec, 0.02, 1, confs3...)}, simRec, 0.02, 1, "ms")
		if real == nil {
			for _, k := range []string{"p1", "q1", "q2", "q4", "q5"} {
				c.add(k, false, why)
			}
			return nil
		}
		if problem := lab6FigureProblem(real, filepath.Dir(lab6Path(c))); problem != "" {
			c.add("q1", false, problem)
			for _, k := range []string{"p1", "q2", "q4", "q5"} {
				c.add(k, false, "the cluster result is not usable: "+problem)
			}
			return nil
		}
		c.add("q1", true, why)
		rr := real.Recovery
		if rr.RecoveryMs == nil || rr.DetectionMs == nil {
			for _, k := range []string{"p1", "q2", "q4", "q5"} {
				c.add(k, false, "your cluster result has no recovery or detection time: did the crash happen (faults) and did the run last past it?")
			}
			return nil
		}
		c.number(spec{key: "q2", evidence: fmt.Sprintf("Your cluster result says recovery %.1f ms (%s).", *rr.RecoveryMs, rr.Type), look: "recovery_ms in your result.json.",
			confusions: []confusion{mixUp(*rr.DetectionMs, "That is your run's detection time; the question asks for recovery_ms.")}}, *rr.RecoveryMs, 0.01, 1, "ms")
		longer := "real"
		if *rr.RecoveryMs < simRec {
			longer = "sim"
		}
		cmp := fmt.Sprintf("Real %.1f ms vs simulated %.1f ms (difference %+.1f ms). %s", *rr.RecoveryMs, simRec, *rr.RecoveryMs-simRec, lab6Explain(rr, s.rec()))
		c.choice(spec{key: "p1", evidence: cmp, look: "compare recovery_ms in your result.json with the simulated run's."}, []string{yesNo(longer == "real")})
		c.choice(spec{key: "q4", evidence: cmp, look: "compare q2 and q3."}, []string{longer})
		c.number(spec{key: "q5", evidence: fmt.Sprintf("Your cluster result says detection %.1f ms; the simulator's memberlist model gives %.1f ms.", *rr.DetectionMs, ptrMs(s.rec().DetectionMs)),
			look: "detection_ms in your result.json.", confusions: distinctMixUps(*rr.DetectionMs, 0.01, 1,
				mixUp(*rr.RecoveryMs, "That is your run's recovery time; the question asks for detection_ms."),
				mixUp(ptrMs(s.rec().DetectionMs), "That is the simulator's detection (its memberlist model); q5 asks for your cluster run's: detection_ms in your result.json."))}, *rr.DetectionMs, 0.01, 1, "ms")
		return nil
	}
	return l
}

// lab6Path is the path of the student's cluster result named by q1 ("" without one).
func lab6Path(c *ctx) string {
	if len(c.answers["q1"]) == 0 {
		return ""
	}
	path := c.answers["q1"][0]
	if !filepath.IsAbs(path) && c.opts.BaseDir != "" {
		path = filepath.Join(c.opts.BaseDir, path)
	}
	return path
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
