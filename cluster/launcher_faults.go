package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/strategies"
)

// action is one step of the fault schedule.
type action struct {
	at   time.Duration
	what string
	do   func() error
}

// faultSpec is the fault schedule of one run; the zero value (or nil) is
// a failure-free run.
type faultSpec struct {
	faults []experiment.Fault
	// chaos is the chaos report being built (chaos runs only).
	chaos *ChaosReport
}

// faultsFor returns the fault schedule of strategy's run: the
// experiment's, or a chaos plan for the strategy's topology.
func (l *launcher) faultsFor(strategy string) (*faultSpec, error) {
	st, err := strategies.Build(strategy, l.exp.ParamsFor(strategy))
	if err != nil {
		return nil, err
	}
	topo := l.exp.Topology(st)
	faults, err := l.exp.Schedule(topo, st.Name())
	if err != nil {
		return nil, err
	}
	c := l.cfg.Chaos
	if c == nil {
		return &faultSpec{faults: faults}, nil
	}
	cc := *c
	if cc.Profile == "" {
		cc.Profile = l.cfg.Profile
	}
	tm, err := timingFor(cc.Profile)
	if err != nil {
		return nil, err
	}
	if cc.Window <= 0 {
		cc.Window = tm.window
	}
	plan, err := PlanChaos(topo, st.Replicas(), l.exp.Duration.D(), cc)
	if err != nil {
		return nil, err
	}
	rep := &ChaosReport{Strategy: strategy, Seed: cc.Seed, Duration: l.exp.Duration.D(), Window: cc.Window, Plan: plan}
	return &faultSpec{faults: simFaults(plan), chaos: rep}, nil
}

// finishChaos completes a chaos report from the run and checks it.
func (l *launcher) finishChaos(rep *ChaosReport, strategy string, out *runOut, ref *ha.Trace, rec metrics.Recovery) error {
	st, err := strategies.Build(strategy, l.exp.ParamsFor(strategy))
	if err != nil {
		return err
	}
	rep.Applied, rep.Nodes, rep.Orphans, rep.Elapsed = out.applied, out.nodes, out.orphans, out.elapsed
	rep.Bound = out.end + DefaultLinger + ChaosExitSlack
	rep.check(chaosInput{
		exp: l.exp, topo: l.exp.Topology(st), replicas: st.Replicas(), params: l.exp.ParamsFor(strategy),
		ref: ref, trace: out.trace, rec: rec,
	})
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out.dir, "chaos.json"), b, 0o644)
}

// schedule turns the fault list into timed actions. With stall,
// partitions stall links (FaultRules.Stall) instead of dropping messages.
func (l *launcher) schedule(faults []experiment.Fault, ps map[string]*proc, record func(ha.Event), stall bool) []action {
	var acts []action
	rules := map[string]*activeRules{}
	for h := range ps {
		rules[h] = &activeRules{}
	}
	add := func(at time.Duration, what string, do func() error) {
		acts = append(acts, action{at: at, what: what, do: do})
	}
	signal := func(h string, sig syscall.Signal) error {
		p := ps[h]
		if p == nil {
			return fmt.Errorf("no process for %s", h)
		}
		return syscall.Kill(p.cmd.Process.Pid, sig)
	}
	for i, f := range faults {
		switch f.Kind {
		case experiment.FaultCrash:
			add(f.At, "kill "+f.Host, func() error {
				p := ps[f.Host]
				if p == nil || p.killed {
					return nil
				}
				p.killed = true
				record(ha.Event{Kind: ha.EvCrash, Host: f.Host})
				return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			})
		case experiment.FaultPause:
			add(f.At, fmt.Sprintf("pause %s for %s", f.Host, f.For), func() error {
				p := ps[f.Host]
				if p == nil || p.killed || p.paused {
					return nil
				}
				p.paused = true
				record(ha.Event{Kind: ha.EvPause, Host: f.Host, N: int64(f.For)})
				return signal(f.Host, syscall.SIGSTOP)
			})
			add(f.At+f.For, "resume "+f.Host, func() error {
				p := ps[f.Host]
				if p == nil || p.killed || !p.paused {
					return nil
				}
				p.paused = false
				record(ha.Event{Kind: ha.EvResume, Host: f.Host})
				return signal(f.Host, syscall.SIGCONT)
			})
		case experiment.FaultPartition, experiment.FaultDelay, experiment.FaultLoss:
			if f.Kind == experiment.FaultPartition && l.net != nil {
				acts = append(acts, l.netPartition(i, f, record)...)
				continue
			}
			affected := map[string]FaultRules{}
			switch f.Kind {
			case experiment.FaultPartition:
				for gi, g := range f.Groups {
					for _, h := range g {
						var block []string
						for gj, o := range f.Groups {
							if gj != gi {
								block = append(block, o...)
							}
						}
						if stall {
							affected[h] = FaultRules{Stall: block}
						} else {
							affected[h] = FaultRules{Block: block}
						}
					}
				}
			case experiment.FaultDelay:
				for _, h := range fromHosts(f.From, ps) {
					affected[h] = FaultRules{Delay: []LinkDelay{{To: f.To, Extra: f.Delay}}}
				}
			case experiment.FaultLoss:
				for _, h := range fromHosts(f.From, ps) {
					affected[h] = FaultRules{Loss: []LinkLoss{{To: f.To, P: f.Loss}}}
				}
			}
			apply := func(on bool) error {
				var errs []error
				for _, h := range sortedHosts(affected) {
					ar := rules[h]
					if ar == nil {
						continue
					}
					if on {
						ar.add(i, affected[h])
					} else {
						ar.remove(i)
					}
					if err := l.postFaults(ps[h], ar.merged()); err != nil {
						errs = append(errs, err)
					}
				}
				return errors.Join(errs...)
			}
			what := fmt.Sprintf("%s %v", f.Kind, f.Groups)
			if f.Kind != experiment.FaultPartition {
				what = fmt.Sprintf("%s %s→%s", f.Kind, f.From, f.To)
			}
			add(f.At, what, func() error {
				if f.Kind == experiment.FaultPartition {
					record(ha.Event{Kind: ha.EvPartition, Note: fmt.Sprint(f.Groups)})
				}
				return apply(true)
			})
			add(f.At+f.For, "end of "+what, func() error {
				if f.Kind == experiment.FaultPartition {
					record(ha.Event{Kind: ha.EvHeal, Note: fmt.Sprint(f.Groups)})
				}
				return apply(false)
			})
		}
	}
	sort.SliceStable(acts, func(a, b int) bool { return acts[a].at < acts[b].at })
	return acts
}

func fromHosts(from string, ps map[string]*proc) []string {
	if from != "" {
		return []string{from}
	}
	return sortedHosts(ps)
}

func sortedHosts[V any](m map[string]V) []string {
	hs := make([]string, 0, len(m))
	for h := range m {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	return hs
}

// activeRules merges the rules of every fault in force on one host.
type activeRules struct {
	ids   []int
	rules []FaultRules
}

func (a *activeRules) add(id int, r FaultRules) {
	a.ids = append(a.ids, id)
	a.rules = append(a.rules, r)
}

func (a *activeRules) remove(id int) {
	if i := slices.Index(a.ids, id); i >= 0 {
		a.ids = slices.Delete(a.ids, i, i+1)
		a.rules = slices.Delete(a.rules, i, i+1)
	}
}

func (a *activeRules) merged() FaultRules {
	var m FaultRules
	for _, r := range a.rules {
		m.Block = append(m.Block, r.Block...)
		m.Stall = append(m.Stall, r.Stall...)
		m.Delay = append(m.Delay, r.Delay...)
		m.Loss = append(m.Loss, r.Loss...)
	}
	return m
}

// postFaults sends rules to a node's control endpoint.
func (l *launcher) postFaults(p *proc, r FaultRules) error {
	if p == nil || p.killed {
		return nil
	}
	return l.post(p, "/fault", r)
}
