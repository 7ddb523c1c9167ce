package labs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// experiment parses one of the lab's embedded experiment files.
func (l *Lab) experiment(name string) (*experiment.Experiment, error) {
	b, err := l.File(name)
	if err != nil {
		return nil, err
	}
	return experiment.Parse(b, l.Dir+"/"+name)
}

// run is one strategy's simulated run of a lab experiment with everything a
// question may need.
type run struct {
	sr       *sim.StrategyRun
	cls      classify.Result
	exp, obs *ha.Deliveries
}

// simulations memoises the labs' simulations and sweeps: a simulated run
// is a pure function of the lab's embedded experiment and the strategies,
// so every check (and every test) in one process shares each run.
var simulations = struct {
	sync.Mutex
	runs map[string]*memo
}{runs: map[string]*memo{}}

// memo is one simulation or sweep, run once.
type memo struct {
	once sync.Once
	v    any
	err  error
}

// memoized returns f's result for key, running f once per process.
func memoized[T any](key string, f func() (T, error)) (T, error) {
	simulations.Lock()
	m, ok := simulations.runs[key]
	if !ok {
		m = &memo{}
		simulations.runs[key] = m
	}
	simulations.Unlock()
	m.once.Do(func() { m.v, m.err = f() })
	v, _ := m.v.(T)
	return v, m.err
}

// simulate runs strategy name on the lab's experiment file, once per
// process.
func (l *Lab) simulate(file, name string) (*run, error) {
	return memoized(l.Dir+"/"+file+"/"+name, func() (*run, error) { return l.simulateOnce(file, name) })
}

func (l *Lab) simulateOnce(file, name string) (*run, error) {
	e, err := l.experiment(file)
	if err != nil {
		return nil, err
	}
	if _, err := strategies.Lookup(name); err != nil {
		return nil, err
	}
	cmp, err := sim.Compare(e, []string{name})
	if err != nil {
		return nil, err
	}
	r := &run{sr: &cmp.Runs[0]}
	r.exp, r.obs = cmp.Reference.Deliveries(), r.sr.Trace.Deliveries()
	r.cls = metrics.Classify(r.exp, r.obs, metrics.Marks(r.sr.Trace))
	return r, nil
}

func (r *run) rec() metrics.Recovery { return r.sr.Run.Recovery }

func (r *run) label() string { return r.rec().Label() }

// statusIDs returns the ids of deliveries with the given classifier label, in delivery order, once each.
func (r *run) statusIDs(status classify.Status) []string {
	var out []string
	for i, s := range r.cls.Status {
		if s == status {
			id := r.obs.At(i).Tuple.ID.String()
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// lostPerID is, per expected id, how many source tuples its last delivered
// copy lacks (all of them when never delivered); only shortfalls > 0.
func (r *run) lostPerID() map[string]int64 {
	x := r.cls.Index
	out := map[string]int64{}
	for id, short := range metrics.Shortfalls(r.exp, r.obs, x) {
		if short > 0 {
			out[r.exp.At(int(x.First[id])).Tuple.ID.String()] = short
		}
	}
	return out
}

// replayed sums the tuples host replayed after the first fault.
func (r *run) replayed(host string) int64 {
	var n int64
	for _, e := range r.sr.Trace.Events() {
		if e.Kind == ha.EvReplayStart && e.Host == host {
			n += e.N
		}
	}
	return n
}

// stat sums a per-host counter over the faulty run's end-of-run stats.
func stat(trace *ha.Trace, f func(*ha.NodeStats) int64) int64 {
	var n int64
	for _, e := range trace.Events() {
		if e.Kind == ha.EvStats && e.Stats != nil {
			n += f(e.Stats)
		}
	}
	return n
}

func ptrMs(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// list shortens a list of ids for an explanation.
func list(ids []string, max int) string {
	if len(ids) <= max {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s, … (%d in all)", strings.Join(ids[:max], ", "), len(ids))
}

func ratioOf(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// seconds formats a time in ms as seconds with three decimals.
func seconds(ms float64) string { return strconv.FormatFloat(ms/1000, 'f', 3, 64) }

// hostStat is one host's end-of-run counter.
func hostStat(trace *ha.Trace, host string, f func(*ha.NodeStats) int64) int64 {
	for _, e := range trace.Events() {
		if e.Kind == ha.EvStats && e.Stats != nil && e.Host == host {
			return f(e.Stats)
		}
	}
	return 0
}
