package why

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/streamha/streamha/ha"
)

// hops lists the id's emits with the fate of each. The last stage's fate
// is read from the sink's deliveries; an earlier stage's is inferred from
// its downstream's rules: a message from a stale epoch is fenced, a seq
// at or below the highest one the downstream accepted from the fragment
// is a duplicate, a seq inside an input gap the downstream traced never
// arrived.
func (r *Run) hops(s *scan, tr *ha.Trace, dels *ha.Deliveries) []Hop {
	out := []Hop{}
	fenced, gaps, takeovers := filterEvents(tr)
	replays := replayEvents(tr)
	fate := map[emitKey]string{}
	for f, ems := range s.frag {
		tk := takeovers[f]
		down := r.next(f)
		if down == "" || f == "sink" {
			continue
		}
		hw, hwHost := map[uint8]uint64{}, map[uint8]string{}
		for _, e := range ems {
			// A takeover moves the downstream to the new primary's
			// numbering, from where it resumes.
			for len(tk) > 0 && tk[0] <= e.t {
				clear(hw)
				tk = tk[1:]
			}
			port := e.tup.Stream
			k := emitKey{e.host, e.t, e.tup.Seq}
			switch {
			case e.role != "primary" && e.role != "source":
				fate[k] = "held as " + e.role + ": sent only if it takes over and the downstream asks for it"
				if rp, ok := replays.after(e); ok {
					fate[k] = fmt.Sprintf("held as %s, then sent in %s's replay to %s from seq %d at %s s", e.role, e.host, rp.Peer, rp.Seq, seconds(ms(rp.T)))
				}
			case fenced.match(down, e):
				fate[k] = "fenced by " + down + " (stale epoch " + strconv.FormatUint(e.epoch, 10) + ")"
			case e.tup.Seq <= hw[port]:
				fate[k] = fmt.Sprintf("dropped by %s as a duplicate seq: it had accepted seq %d from %s (dup_dropped)", down, hw[port], hwHost[port])
			case gaps.match(down, e):
				fate[k] = "never reached " + down + ": inside an input gap it traced (input_gap)"
			default:
				fate[k] = "accepted by " + down
				hw[port], hwHost[port] = e.tup.Seq, e.host
			}
		}
	}
	for _, h := range s.hops {
		f := fate[emitKey{h.host, h.t, h.tup.Seq}]
		if r.next(fragment(h.host)) == "sink" && (h.role == "primary" || h.role == "source") {
			f = "not delivered"
			for _, d := range dels.All() {
				if d.T >= h.t && d.Tuple.ID == h.tup.ID && d.Tuple.Seq == h.tup.Seq && d.Tuple.Lineage == h.tup.Lineage {
					f = "delivered at " + seconds(ms(d.T)) + " s"
					break
				}
			}
		}
		out = append(out, Hop{TMs: ms(h.t), Host: h.host, Role: h.role, Epoch: h.epoch, Seq: h.tup.Seq,
			Value: h.tup.Value, Sources: int64(h.tup.Lineage.N), Fate: f})
	}
	slices.SortStableFunc(out, func(a, b Hop) int {
		if a.TMs != b.TMs {
			if a.TMs < b.TMs {
				return -1
			}
			return 1
		}
		return r.stage(fragment(a.Host)) - r.stage(fragment(b.Host))
	})
	return out
}

type emitKey struct {
	host string
	t    time.Duration
	seq  uint64
}

// fencedEvents are the fenced-data events by receiving fragment.
type fencedEvents map[string][]ha.Event

// match reports whether the downstream fragment fenced a message of e's
// host and epoch at or after e was emitted (and before that host emitted
// with a newer epoch).
func (f fencedEvents) match(down string, e emitted) bool {
	for _, x := range f[down] {
		if x.Peer == e.host && x.Epoch == e.epoch && x.T >= e.t && x.T-e.t < maxFlight {
			return true
		}
	}
	return false
}

// maxFlight bounds how long after its emit a message is matched to the
// receiver's filter event.
const maxFlight = 500 * time.Millisecond

// replays are the replay_start events by replaying host.
type replays map[string][]ha.Event

func replayEvents(tr *ha.Trace) replays {
	out := replays{}
	for _, e := range tr.Events() {
		if e.Kind == ha.EvReplayStart {
			out[e.Host] = append(out[e.Host], e)
		}
	}
	return out
}

// after is the first replay by e's host after e that includes e's seq.
func (r replays) after(e emitted) (ha.Event, bool) {
	for _, x := range r[e.host] {
		if x.T >= e.t && x.Seq < e.tup.Seq {
			return x, true
		}
	}
	return ha.Event{}, false
}

type gapEvents map[string][]ha.Event

func (g gapEvents) match(down string, e emitted) bool {
	for _, x := range g[down] {
		if x.Peer == e.host && e.tup.Seq >= x.Seq && e.tup.Seq < x.Seq+uint64(x.N) {
			return true
		}
	}
	return false
}

func filterEvents(tr *ha.Trace) (fencedEvents, gapEvents, map[string][]time.Duration) {
	f, g, tk := fencedEvents{}, gapEvents{}, map[string][]time.Duration{}
	for _, e := range tr.Events() {
		switch {
		case e.Kind == ha.EvTakeover:
			tk[fragment(e.Host)] = append(tk[fragment(e.Host)], e.T)
		case e.Kind == ha.EvFenced && e.N > 0:
			f[fragment(e.Host)] = append(f[fragment(e.Host)], e)
		case e.Kind == ha.EvGap:
			g[fragment(e.Host)] = append(g[fragment(e.Host)], e)
		}
	}
	return f, g, tk
}
