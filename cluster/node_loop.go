package cluster

import (
	"context"
	"encoding/json"
	"log"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// runner is one running node process.
type runner struct {
	opts  NodeOptions
	log   *log.Logger
	exp   *experiment.Experiment
	topo  *ha.Topology
	hosts map[string]bool
	// strategy and exp configure the ha.Node built at the start
	// (experiment.NodeConfig).
	strategy ha.Strategy
	end      time.Duration

	in   *inbox
	tr   *Transport
	det  *Detector
	env  *clusterEnv
	node *ha.Node
	http *http.Server
	met  *nodeMetrics
	mlog *memberlistLog

	stopReq   chan struct{} // /stop asked the loop to finish
	startAt   chan int64    // POST /start with --await-start
	stopOnce  sync.Once
	closeOnce sync.Once
	frozen    chan struct{} // closed once stats are written
	busy      time.Duration
	cpu0      time.Duration // process CPU time at the start instant
	started   atomic.Bool
}

// processCPU is the CPU time (user + system) this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run waits for the start instant and runs the loop.
func (r *runner) run(ctx context.Context) error {
	if r.opts.AwaitStart {
		select {
		case at := <-r.startAt:
			r.env.offset = r.env.base.Sub(time.Unix(0, at))
		case <-ctx.Done():
			r.freeze()
			return nil
		case <-r.stopReq:
			r.freeze()
			return nil
		}
	}
	if w := -r.env.Now(); w > 0 {
		t := time.NewTimer(w)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			r.freeze()
			return nil
		case <-r.stopReq:
			t.Stop()
			r.freeze()
			return nil
		}
	}
	var err error
	r.node, err = ha.NewNode(r.exp.NodeConfig(r.opts.Host, r.topo, r.strategy, r.env))
	if err != nil {
		return err
	}
	r.cpu0 = processCPU()
	r.started.Store(true)
	r.handle(func() { r.node.Start() })
	// Membership changes seen during the startup storm (processes still
	// starting, CPU saturated) are dropped; what counts is who is a member
	// at the start instant.
	r.in.dropMembership()
	alive := map[string]bool{}
	for _, h := range r.det.Members() {
		alive[h] = true
	}
	for _, h := range r.topo.Hosts() {
		if h != r.opts.Host && !alive[h] {
			r.log.Printf("start: %s is not a member at the start instant; declaring it down", h)
			r.handle(func() { r.node.Handle(ha.Input{Kind: ha.InputPeerDown, Name: h}) })
		}
	}
	endTimer := time.NewTimer(max(0, r.end-r.env.Now()))
	defer endTimer.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	wake := time.NewTimer(time.Hour)
	defer wake.Stop()
	wakeAt := time.Duration(-1) // the env time wake is set for, -1 = none
	var buf []ha.Input
	for {
		r.fireTimers()
		var wakeC <-chan time.Time
		now := r.env.Now()
		if d, ok := r.env.timers.next(now); ok {
			switch {
			case d <= 0:
				wakeC = alreadyDue
			case now+d != wakeAt:
				wake.Reset(d)
				wakeAt = now + d
				fallthrough
			default:
				wakeC = wake.C
			}
		}
		select {
		case <-wakeC:
			if wakeC != alreadyDue {
				wakeAt = -1
			}
		case <-ctx.Done():
			r.freeze()
			return nil
		case <-r.stopReq:
			r.freeze()
			return nil
		case <-endTimer.C:
			r.freeze()
			t := time.NewTimer(r.opts.Linger)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			return nil
		case <-tick.C:
			if err := r.env.trace.Flush(); err != nil && r.env.tErr == nil {
				r.env.tErr = err
				r.log.Printf("trace: %v (tracing stopped; the node will exit with an error)", err)
			}
			r.met.update()
		case <-r.in.notify:
			buf = r.in.take(buf)
			for i := range buf {
				it := buf[i]
				buf[i] = ha.Input{}
				r.handle(func() { r.node.Handle(it) })
			}
		}
	}
}

// alreadyDue is a closed channel: the loop selects on it when a timer is
// due already, so waiting inputs and due timers take turns.
var alreadyDue = func() chan time.Time {
	c := make(chan time.Time)
	close(c)
	return c
}()

// fireTimers runs the timers due now that were armed before it started.
func (r *runner) fireTimers() {
	now, mark := r.env.Now(), r.env.timers.mark()
	for {
		name, ok := r.env.timers.due(now, mark)
		if !ok {
			return
		}
		r.handle(func() { r.node.Handle(ha.Input{Kind: ha.InputTimer, Name: name}) })
	}
}

// handle runs one handler and measures its busy time (the CPU figure).
func (r *runner) handle(f func()) {
	t0 := time.Now()
	f()
	r.busy += time.Since(t0)
}

// freeze stops processing, traces the node's counters and flushes the trace.
func (r *runner) freeze() {
	select {
	case <-r.frozen:
		return
	default:
	}
	r.env.stopTimers()
	r.in.close()
	if r.node != nil {
		st := r.node.Stats()
		st.CPU = int64(r.busy)
		st.ProcessCPU = int64(processCPU() - r.cpu0)
		r.env.Trace(ha.Event{T: r.env.Now(), Kind: ha.EvStats, Host: r.opts.Host, Stats: &st})
		r.met.update()
	}
	if err := r.env.trace.Flush(); err != nil && r.env.tErr == nil {
		r.env.tErr = err
	}
	ts := r.tr.Stats()
	if b, err := json.Marshal(ts); err == nil {
		r.env.Trace(ha.Event{T: r.env.Now(), Kind: ha.EvNote, Host: r.opts.Host, Note: transportNote + string(b)})
	}
	if err := r.env.trace.Flush(); err != nil && r.env.tErr == nil {
		r.env.tErr = err
	}
	r.log.Printf("stopped: sent %d messages (%d bytes), received %d, dropped %d (queue full or broken connection), %d by faults, rejected %d connections",
		ts.SentMessages, ts.SentBytes, ts.RecvMessages, ts.Dropped, ts.FaultDropped, ts.Rejected)
	close(r.frozen)
}

// transportNote prefixes the EvNote a node traces at the end with its
// transport counters (JSON TransportStats).
const transportNote = "transport "
