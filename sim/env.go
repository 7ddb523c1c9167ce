package sim

import (
	"math/rand/v2"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

type env struct {
	s *Sim
	h *host
	// the last destination, so a node sending to the same host again skips the name lookup
	lastTo  string
	lastDst *host
}

func (e *env) Now() time.Duration { return e.h.start + e.h.charged }

func (e *env) Rand() *rand.Rand { return e.h.rng }

func (e *env) Trace(ev ha.Event) { e.s.trace.Add(ev) }

func (e *env) Work(ops, bytes int) {
	c := e.s.cfg.CPU
	e.h.charged += time.Duration(ops)*c.PerOp + time.Duration(bytes)*c.PerByte
}

func (e *env) SetTimer(d time.Duration, name string) {
	ev := e.s.newEvent()
	ev.at, ev.kind, ev.host, ev.it = e.Now()+d, evTimer, e.h, ha.Input{Kind: ha.InputTimer, Name: name}
	e.s.push(ev)
}

// Send sends a copy of m, Tuples included, in recycled memory: the node
// lends m for the call only (ha.Env), and the copy goes back to the
// recycler once the receiver handled it or the network dropped it.
func (e *env) Send(to string, m *ha.Message) { e.send(to, e.s.pool.copyMessage(m)) }

// send schedules the arrival of m at host to, if the network delivers it;
// m belongs to the recycler.
func (e *env) send(to string, m *ha.Message) {
	s := e.s
	dst, arr, sent := e.transit(to, m)
	own := true
	switch {
	case sent == nil:
		s.pool.release(m)
		return
	case sent != m:
		// a corrupted copy sharing m's Tuples: both are left to the garbage collector
		own = false
	}
	ev := s.newEvent()
	ev.at, ev.kind, ev.host, ev.own, ev.it = arr, evArrive, dst, own, ha.Input{Kind: ha.InputMessage, Msg: sent}
	s.push(ev)
}

// transit models m's trip to host to: where and when it arrives and what
// arrives (m, or a corrupted copy), or nil when it is lost on the way.
func (e *env) transit(to string, m *ha.Message) (*host, time.Duration, *ha.Message) {
	s := e.s
	dst := e.lastDst
	if dst == nil || to != e.lastTo {
		var ok bool
		if dst, ok = s.hosts[to]; !ok {
			return nil, 0, nil
		}
		e.lastTo, e.lastDst = to, dst
	}
	if dst == e.h {
		return nil, 0, nil
	}
	if e.h.links == nil {
		e.h.links = make([]*link, len(s.order))
	}
	l := e.h.links[dst.idx]
	if l == nil {
		l = &link{rng: experiment.SeededPCG(s.cfg.Seed, "link", e.h.name, to)}
		e.h.links[dst.idx] = l
	}
	dep := e.Now()
	cut, extra, loss, corruptP := s.linkFaults(e.h.name, to)
	n := s.cfg.Network
	loss = 1 - (1-loss)*(1-n.Loss)
	// draw in a fixed pattern so one message's fate never shifts another's
	j := unitFloat(l.rng)
	lost := unitFloat(l.rng) < loss
	if cut || lost {
		return nil, 0, nil
	}
	if p := corruptP; p > 0 && len(m.Body) > 0 {
		if l.crng == nil {
			l.crng = experiment.Seeded(s.cfg.Seed, "corrupt", e.h.name, to)
		}
		if l.crng.Float64() < p {
			m = corrupt(m, l.crng)
			s.trace.Add(ha.Event{T: dep, Kind: ha.EvNote, Host: e.h.name, Peer: to, Seq: m.Seq,
				Note: corruptNote + " one byte of a " + m.Type + " message"})
		}
	}
	tx := dep
	if n.Bandwidth > 0 {
		tx = max(dep, l.txFree) + time.Duration(float64(m.WireSize()*8)/n.Bandwidth*float64(time.Second))
		l.txFree = tx
	}
	arr := tx + n.Latency + extra + time.Duration(j*float64(n.Jitter))
	if arr < l.lastArr {
		arr = l.lastArr
	}
	l.lastArr = arr
	return dst, arr, m
}

// corrupt returns a copy of m whose Body has one byte flipped (the sender
// may keep the original to resend it).
func corrupt(m *ha.Message, r *rand.Rand) *ha.Message {
	c := *m
	c.Body = append([]byte(nil), m.Body...)
	c.Body[r.IntN(len(c.Body))] ^= byte(1 + r.IntN(255))
	return &c
}
