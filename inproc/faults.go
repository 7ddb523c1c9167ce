package inproc

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/streamha/streamha/ha"
)

// Pause is a pause fault: Host handles nothing from At for For (what it is
// sent waits in its mailbox), as a process stopped by SIGSTOP. A pause
// longer than Config.DetectAfter makes every other host declare it dead,
// and see it alive again when it resumes.
type Pause struct {
	At, For time.Duration
	Host    string
}

// Partition is a partition fault: from At for For, messages between hosts
// of different groups are lost (hosts in no group are unaffected). One
// that lasts longer than Config.DetectAfter makes the hosts of each group
// declare those of the others dead, and alive again when it heals.
type Partition struct {
	At, For time.Duration
	Groups  [][]string
}

// faultState is what the pause and partition faults change while a run
// goes on, under its own lock: every host's goroutine reads the partition
// on each Send.
type faultState struct {
	mu sync.Mutex
	// group is each host's side of the partition in force (0: none).
	group map[string]int
	// part numbers the partitions, so a detection scheduled for one that
	// healed meanwhile does nothing.
	part int
	// told maps a host to the hosts told it was dead by the fault in force.
	told map[string][]string
	// paused hosts, and the hosts told each was dead
	paused map[string]bool
	// stop wakes paused hosts when the run ends.
	stop     chan struct{}
	stopOnce sync.Once
	// events are the partitions and heals, for the run's trace.
	events []ha.Event
	// timers are a partition's detection and heal, stopped with the run.
	timers []*time.Timer
}

// checkFaults rejects pauses and partitions naming unknown hosts or
// lasting no time.
func (r *runtime) checkFaults() error {
	for i, p := range r.cfg.Pauses {
		if _, ok := r.hosts[p.Host]; !ok {
			return fmt.Errorf("%w: pauses[%d]: unknown host %q", ErrConfig, i, p.Host)
		}
		if p.For <= 0 || p.At < 0 {
			return fmt.Errorf("%w: pauses[%d]: at must not be negative and for must be positive", ErrConfig, i)
		}
	}
	for i, p := range r.cfg.Partitions {
		if p.For <= 0 || p.At < 0 {
			return fmt.Errorf("%w: partitions[%d]: at must not be negative and for must be positive", ErrConfig, i)
		}
		if len(p.Groups) < 2 {
			return fmt.Errorf("%w: partitions[%d]: needs at least two groups", ErrConfig, i)
		}
		for _, g := range p.Groups {
			for _, h := range g {
				if _, ok := r.hosts[h]; !ok {
					return fmt.Errorf("%w: partitions[%d]: unknown host %q", ErrConfig, i, h)
				}
			}
		}
	}
	return nil
}

// scheduleFaults arms the timers of the pauses and partitions.
func (r *runtime) scheduleFaults() []*time.Timer {
	f := &r.faults
	f.stop, f.paused, f.told = make(chan struct{}), map[string]bool{}, map[string][]string{}
	var ts []*time.Timer
	for _, p := range r.cfg.Pauses {
		h := r.hosts[p.Host]
		ts = append(ts,
			time.AfterFunc(p.At, func() { h.box.put(item{kind: itPause, d: p.For}) }),
			time.AfterFunc(p.At+r.cfg.DetectAfter, func() { r.detectPaused(h) }))
	}
	for _, p := range r.cfg.Partitions {
		ts = append(ts, time.AfterFunc(p.At, func() { r.partition(p) }))
	}
	return ts
}

// stopFaults stops the partitions' timers and wakes paused hosts: the run
// is over.
func (r *runtime) stopFaults() {
	f := &r.faults
	f.mu.Lock()
	for _, t := range f.timers {
		t.Stop()
	}
	f.mu.Unlock()
	f.stopOnce.Do(func() { close(f.stop) })
}

// faulted reports whether a partition or a pause is in force.
func (r *runtime) faulted() bool {
	f := &r.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.group != nil || len(f.paused) > 0
}

// cut reports whether a partition in force separates from and to.
func (r *runtime) cut(from, to string) bool {
	f := &r.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	a, b := f.group[from], f.group[to]
	return a != 0 && b != 0 && a != b
}

// partition starts p, arms its detection and its heal.
func (r *runtime) partition(p Partition) {
	f := &r.faults
	f.mu.Lock()
	f.part++
	id := f.part
	f.group = map[string]int{}
	for i, g := range p.Groups {
		for _, h := range g {
			f.group[h] = i + 1
		}
	}
	f.events = append(f.events, ha.Event{T: r.now(), Kind: ha.EvPartition, Note: fmt.Sprint(p.Groups)})
	f.timers = append(f.timers,
		time.AfterFunc(r.cfg.DetectAfter, func() { r.detectPartition(id) }),
		time.AfterFunc(p.For, func() { r.heal(id) }))
	f.mu.Unlock()
}

// detectPartition makes each side declare the other dead, if partition id
// is still in force.
func (r *runtime) detectPartition(id int) {
	f := &r.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.part != id || f.group == nil || r.stopping.Load() {
		return
	}
	for _, o := range r.order {
		for _, peer := range r.order {
			a, b := f.group[o.name], f.group[peer.name]
			if a != 0 && b != 0 && a != b && !o.crashed.Load() {
				f.told[o.name] = append(f.told[o.name], peer.name)
				o.box.put(item{in: ha.Input{Kind: ha.InputPeerDown, Name: peer.name}})
			}
		}
	}
}

// heal ends partition id: every host told a peer was dead sees it alive.
func (r *runtime) heal(id int) {
	f := &r.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.part != id || r.stopping.Load() {
		return
	}
	f.group = nil
	f.events = append(f.events, ha.Event{T: r.now(), Kind: ha.EvHeal})
	for _, o := range r.order {
		for _, peer := range f.told[o.name] {
			if !o.crashed.Load() {
				o.box.put(item{in: ha.Input{Kind: ha.InputPeerUp, Name: peer}})
			}
		}
	}
	clear(f.told)
}

// detectPaused makes every other host declare h dead if it is still paused.
func (r *runtime) detectPaused(h *host) {
	f := &r.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.paused[h.name] || r.stopping.Load() {
		return
	}
	for _, o := range r.order {
		if o != h && !o.crashed.Load() && !slices.Contains(f.told[o.name], h.name) {
			f.told[o.name] = append(f.told[o.name], h.name)
			o.box.put(item{in: ha.Input{Kind: ha.InputPeerDown, Name: h.name}})
		}
	}
}

// pause stops the host's goroutine for d (or until the run ends); on
// resuming, the hosts told it was dead see it alive again.
func (h *host) pause(d time.Duration) {
	r := h.r
	f := &r.faults
	f.mu.Lock()
	f.paused[h.name] = true
	f.mu.Unlock()
	h.trace.Add(ha.Event{T: r.now(), Kind: ha.EvPause, Host: h.name})
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-f.stop:
		t.Stop()
	}
	h.trace.Add(ha.Event{T: r.now(), Kind: ha.EvResume, Host: h.name})
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.paused, h.name)
	for _, o := range r.order {
		if i := slices.Index(f.told[o.name], h.name); i >= 0 {
			f.told[o.name] = slices.Delete(f.told[o.name], i, i+1)
			if !o.crashed.Load() && !r.stopping.Load() {
				o.box.put(item{in: ha.Input{Kind: ha.InputPeerUp, Name: h.name}})
			}
		}
	}
}
