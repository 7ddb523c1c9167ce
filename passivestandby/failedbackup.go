package passivestandby

import "github.com/streamha/streamha/ha"

// A union's primary releases an output only once its backup holds the
// interleaving decisions it depends on (output commit). When the detector
// declares the backup dead, the primary recruits a new one and, once that
// one acknowledged its first checkpoint, would release at once. But a
// backup declared dead may only be cut off from its primary: it declares
// the primary dead too, about a heartbeat later, and takes over from the
// decisions it holds, fencing the primary. Whatever the primary released
// meanwhile from decisions the old backup never saw, the successor
// interleaves otherwise, and the downstream, which drops by seq, keeps the
// primary's copies: an output missing, another repeated (passive standby,
// soak seed 9905, run 1098: {A} | {A.1} for 340 ms). So after its backup
// failed, the primary holds its output for failedBackupHold, by when such
// a backup has taken over and its route has fenced the primary; after a
// real crash the output is only late.
const failedBackupHold = 2 * ha.ElectionSettle

// timerHold ends the hold after a failed backup.
const timerHold = "ps.hold"

// holdAfterFailedBackup starts the hold when the backup was declared dead
// and the output waits for decisions.
func (h *hooks) holdAfterFailedBackup() {
	if !h.recording || h.n.Planted().Has(ha.PlantReleaseOnFailedBackup) {
		return
	}
	h.holdUntil = h.n.Now() + failedBackupHold
	h.n.SetTimer(failedBackupHold, timerName(timerHold, h.gen))
}

// holding reports whether the output waits out a failed backup's hold.
func (h *hooks) holding() bool { return h.n.Now() < h.holdUntil }

// endHold releases what the hold kept: the outputs whose decisions the
// current backup holds, or, with no backup left, all of them.
func (h *hooks) endHold() {
	if h.holding() {
		return
	}
	if h.backup == "" {
		h.waits = nil
		h.n.GateOutput(false)
		return
	}
	d := h.decAcked
	h.decAcked = 0
	h.decisionsHeld(d)
}
