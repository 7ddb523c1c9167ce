package activestandby

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

// A state transfer starts a new secondary; a spare that never got it
// drops its input (it holds no state to apply it to) and, taking over
// later, restarts the fragment empty — a gap where a live host holds the
// state. A transfer lost on a lossy link was never sent again: soak seed
// 77, run 741, the new secondary W.2 of W.1 missed it under 20 % loss,
// and when W.1 crashed two seconds later W.2 restarted W empty (8 wrong
// windows, 14 repeated). So the secondary acknowledges a transfer it
// installed (or holds already), and the primary sends a fresh one at
// doubling intervals (transferRetry up to maxTransferRetry) until it is
// acknowledged or the spare leaves the route.

// msgStateAck acknowledges a state transfer to the primary.
const msgStateAck = "as.state-ack"

// timerTransfer re-sends an unacknowledged state transfer.
const timerTransfer = "as.transfer"

// transferRetry is the first interval after which an unacknowledged state
// transfer is sent again; maxTransferRetry the longest.
const (
	transferRetry    = 100 * time.Millisecond
	maxTransferRetry = 16 * transferRetry
)

// transferState is a primary's transfer awaiting acknowledgement.
type transferState struct {
	to      string
	backoff time.Duration
}

// awaitTransferAck starts waiting for spare's acknowledgement.
func (h *hooks) awaitTransferAck(spare string) {
	if h.n.Planted().Has(ha.PlantTransferOnce) {
		return
	}
	h.transfer = transferState{to: spare, backoff: transferRetry}
	h.n.SetTimer(transferRetry, timerTransfer)
	h.updateCommit() // the spare holds no state yet: its acknowledgements are not waited for (commit.go)
}

// onStateAck ends the wait for the acknowledging secondary.
func (h *hooks) onStateAck(m *ha.Message) {
	if m.From == h.transfer.to {
		h.transfer = transferState{}
		h.updateCommit() // commit.go
	}
}

// retryTransfer sends the awaited secondary a fresh state transfer while
// this node is primary and the spare is still a live receiver.
func (h *hooks) retryTransfer() {
	n := h.n
	to := h.transfer.to
	if to == "" {
		return
	}
	if !n.IsPrimary() || !slices.Contains(n.Route(n.Frag()).Receivers, to) {
		h.transfer = transferState{}
		return
	}
	if n.Down(to) {
		// Cut off, perhaps: a primary on the minority side keeps its
		// secondaries in its route, and one that never got the state
		// would stay a receiver without it. Try again once it is seen.
		n.SetTimer(h.transfer.backoff, timerTransfer)
		return
	}
	m, err := h.stateFor(to)
	if err != nil {
		n.Trace(ha.Event{Kind: ha.EvNote, Peer: to, Note: fmt.Sprintf("state transfer to %s failed: %v", to, err)})
		return
	}
	n.Send(to, m)
	n.Trace(ha.Event{Kind: ha.EvNote, Peer: to, N: int64(m.WireSize()), Note: fmt.Sprintf("state transfer to %s not acknowledged: sending it again", to)})
	h.transfer.backoff = min(2*h.transfer.backoff, maxTransferRetry)
	n.SetTimer(h.transfer.backoff, timerTransfer)
}
