package activestandby

import (
	"github.com/streamha/streamha/ha"
)

// Decisions from a primary that may still live. A primary paused past the
// detector's timeout resumes, processes its backlog and sends outputs to
// the downstream — which accepts them until it learns the new route — with
// the interleaving decisions they depend on shipped to the secondary just
// before. The secondary has taken over meanwhile and, its predecessor's
// decisions run out, interleaves the held input in its own arrival order:
// its output at a seq then differs from the predecessor's output at that
// seq, which the downstream already holds; the downstream drops the new
// one as a duplicate by seq and keeps the predecessor's, and the same
// output arrives again later under another seq: one output missing, one
// repeated (a 230 ms pause of the union's primary, found by the soak).
//
// So a new primary of a union with ship_decisions keeps following its
// predecessor's decisions for decisionGrace after it took over: decisions
// the predecessor still ships come on the link just before any output of
// it the downstream may accept, so within one more link delay they are
// here, and the new primary's output equals what the downstream already
// holds. Input that no decision covers waits meanwhile (at most
// decisionGrace); after it, the new primary decides the order itself.

// decisionGrace is how long a new primary still follows its predecessor's
// decisions: the settle time an election allows for a message that would
// arrive.
const decisionGrace = ha.ElectionSettle

// timerGrace ends the decision grace.
const timerGrace = "as.grace"

// startGrace starts following the predecessor prev's decisions for
// decisionGrace after a takeover; it reports false when there is nothing
// to follow (no ordered fragment, or the switch is planted).
func (h *hooks) startGrace(prev string) bool {
	n := h.n
	if !h.ordered() || prev == "" || prev == n.Host() || n.Planted().Has(ha.PlantZombieDecisions) {
		return false
	}
	h.graceFrom = prev
	n.SetTimer(decisionGrace, timerGrace)
	return true
}

// inGrace reports whether this primary still follows its predecessor's decisions.
func (h *hooks) inGrace() bool { return h.graceFrom != "" && h.n.IsPrimary() }

// endGrace stops following the predecessor: the held input goes in
// arrival order, and this primary decides from now on.
func (h *hooks) endGrace() {
	if h.graceFrom == "" {
		return
	}
	h.graceFrom = ""
	h.n.FollowOrder(nil)
	h.release()
	h.recruit()
}
