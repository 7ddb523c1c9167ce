package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

func (s *Sim) startFault(i int) {
	f := s.cfg.Faults[i]
	switch f.Kind {
	case experiment.FaultCrash:
		h := s.hosts[f.Host]
		if h.state == crashed {
			return
		}
		s.trace.Add(ha.Event{T: s.now, Kind: ha.EvCrash, Host: f.Host})
		h.state = crashed
		for _, q := range h.inbox[h.head:] {
			s.drop(q)
		}
		h.inbox, h.head = nil, 0
		s.unreachable(h)
	case experiment.FaultPause:
		h := s.hosts[f.Host]
		if h.state != up {
			return
		}
		s.trace.Add(ha.Event{T: s.now, Kind: ha.EvPause, Host: f.Host, N: int64(f.For)})
		h.state = paused
		s.unreachable(h)
		s.push(&event{at: s.now + f.For, kind: evFaultEnd, f: i})
	case experiment.FaultPartition, experiment.FaultDelay, experiment.FaultLoss, experiment.FaultCorrupt:
		s.active = append(s.active, i)
		if f.Kind == experiment.FaultPartition {
			s.trace.Add(ha.Event{T: s.now, Kind: ha.EvPartition, Note: fmt.Sprint(f.Groups)})
			s.partitionDetect(f)
		} else {
			s.trace.Add(ha.Event{T: s.now, Kind: ha.EvLinkFault, Host: f.From, Peer: f.To, N: int64(f.For), Note: linkFaultNote(f)})
		}
		s.push(&event{at: s.now + f.For, kind: evFaultEnd, f: i})
	}
}

func (s *Sim) endFault(i int) {
	f := s.cfg.Faults[i]
	switch f.Kind {
	case experiment.FaultPause:
		h := s.hosts[f.Host]
		if h.state != paused {
			return
		}
		h.state = up
		h.incident++
		s.trace.Add(ha.Event{T: s.now, Kind: ha.EvResume, Host: f.Host})
		if h.busyUntil < s.now {
			h.busyUntil = s.now
		}
		s.kick(h)
		s.reachable(h)
	default:
		s.active = slices.DeleteFunc(s.active, func(j int) bool { return j == i })
		if f.Kind != experiment.FaultPartition {
			s.trace.Add(ha.Event{T: s.now, Kind: ha.EvLinkHeal, Host: f.From, Peer: f.To, Note: linkFaultNote(f)})
		}
		if f.Kind == experiment.FaultPartition {
			s.trace.Add(ha.Event{T: s.now, Kind: ha.EvHeal, Note: fmt.Sprint(f.Groups)})
			for _, g := range f.Groups {
				for _, name := range g {
					h := s.hosts[name]
					if h == nil || h.state != up {
						// A host that crashed or paused meanwhile keeps
						// the detections of that failure.
						continue
					}
					h.incident++
					s.reachable(h)
				}
			}
		}
	}
}

// linkFaultNote says what a delay, loss or corrupt fault does, for its
// trace events: "delay +30ms", "loss p=0.3", "corrupt p=0.1".
func linkFaultNote(f experiment.Fault) string {
	if f.Kind == experiment.FaultDelay {
		return fmt.Sprintf("delay +%s", f.Delay)
	}
	return fmt.Sprintf("%s p=%g", f.Kind, f.Loss)
}

// unreachable schedules every other live host's detection of h.
func (s *Sim) unreachable(h *host) {
	h.incident++
	for _, o := range s.order {
		if o == h || o.state == crashed {
			continue
		}
		s.scheduleDetect(o, h)
	}
}

func (s *Sim) scheduleDetect(observer, peer *host) {
	s.push(&event{at: s.now + s.detectDelay("detect", observer, peer), kind: evDetect, host: observer, peer: peer, inc: peer.incident})
}

// detectDelay is how long observer takes to declare peer dead: the timeout
// plus a heartbeat phase seeded per (label, observer, peer, incident).
func (s *Sim) detectDelay(label string, observer, peer *host) time.Duration {
	d := s.cfg.Detector
	if d.Heartbeat <= 0 {
		return d.Timeout
	}
	r := experiment.Seeded(s.cfg.Seed, label, observer.name, peer.name, fmt.Sprint(peer.incident))
	return d.Timeout + time.Duration(r.Int64N(int64(d.Heartbeat)))
}

// reachable tells observers that declared h dead that it is back, one heartbeat later.
func (s *Sim) reachable(h *host) {
	for _, o := range s.order {
		if h.declared[o.name] {
			delete(h.declared, o.name)
			s.push(&event{at: s.now + s.cfg.Detector.Heartbeat, kind: evAlive, host: o, peer: h})
		}
	}
}

func (s *Sim) partitionDetect(f experiment.Fault) {
	group := map[string]int{}
	for gi, g := range f.Groups {
		for _, name := range g {
			group[name] = gi
		}
	}
	for _, o := range s.order {
		go1, ok1 := group[o.name]
		if !ok1 || o.state == crashed {
			continue
		}
		for _, p := range s.order {
			gp, ok2 := group[p.name]
			if !ok2 || gp == go1 || p.state == crashed {
				continue
			}
			// the peer is unreachable from o: o declares it after the
			// detection delay, if the partition lasts that long
			if delay := s.detectDelay("detect-part", o, p); delay < f.For {
				s.push(&event{at: s.now + delay, kind: evDetect, host: o, peer: p, inc: p.incident, part: true})
			}
		}
	}
}

// linkFaults returns what the faults in force do to a message from a to
// b: cut by a partition, extra delay, loss probability and the probability
// that a message with a Body is corrupted — one pass over the active faults.
func (s *Sim) linkFaults(from, to string) (cut bool, extra time.Duration, loss, corruptP float64) {
	for _, i := range s.active {
		f := &s.cfg.Faults[i]
		switch f.Kind {
		case experiment.FaultPartition:
			ga, gb := -1, -1
			for gi, g := range f.Groups {
				if slices.Contains(g, from) {
					ga = gi
				}
				if slices.Contains(g, to) {
					gb = gi
				}
			}
			if ga >= 0 && gb >= 0 && ga != gb {
				cut = true
			}
		case experiment.FaultDelay:
			if f.OnLink(from, to) {
				extra += f.Delay
			}
		case experiment.FaultLoss:
			if f.OnLink(from, to) {
				loss = 1 - (1-loss)*(1-f.Loss)
			}
		case experiment.FaultCorrupt:
			if f.OnLink(from, to) {
				corruptP = 1 - (1-corruptP)*(1-f.Loss)
			}
		}
	}
	return
}

// ---- the Env of one host ----
