package ha

// Planted bugs 40–47: gaps inside the fault model — a rollback's reset
// sink, suspected receivers, idle upstreams, failed backups of a union, lost
// state transfers and positions restored at 0 (each undoes the fix named).
const (
	// PlantResetNoResend undoes the resend a global checkpoint's sink asks
	// for when its rollback takes its position back behind what arrived
	// (globalcheckpoint, resetSink; Node.AskResend): it waits for a later
	// tuple to show the gap, so when the restarted last fragment's output
	// had already ended — the end acknowledged while the reset waited —
	// nothing follows and the last outputs never come.
	PlantResetNoResend Planted = 1 << 40
	// PlantSkipDeadReceiver undoes the output a primary keeps sending to a
	// downstream receiver declared dead (node_suspect.go): it withholds it
	// until it sees the receiver alive and resends it then, so a union
	// paused just past one source's detection takes that source's tuples
	// behind the other's later ones, and a window behind it drops them as
	// late.
	PlantSkipDeadReceiver Planted = 1 << 41
	// PlantUnvouchedProbe undoes the round trip to its far side a primary
	// makes before it answers a takeover's probe (node_vouch.go): it
	// answers at once from its detector's view, which does not yet show
	// its far side cut off, so a backup cut off with both neighbours'
	// primaries takes over inside the island and, after the heal, fences
	// the primary that served outside and asks for input trimmed meanwhile.
	PlantUnvouchedProbe Planted = 1 << 42
	// PlantReleaseOnFailedBackup undoes the hold of a union's output after
	// its backup was declared dead (passivestandby, failedbackup.go): the
	// primary releases output once a new backup holds its decisions, while
	// the old one, only cut off from it, takes over from older decisions
	// and interleaves otherwise (an output missing, another repeated).
	PlantReleaseOnFailedBackup Planted = 1 << 43
	// PlantTransferOnce undoes the acknowledgement and resend of an active
	// standby state transfer (activestandby, transferretry.go): a transfer
	// lost on the way leaves the new secondary without state, and when the
	// primary fails it restarts the fragment empty.
	PlantTransferOnce Planted = 1 << 44
	// PlantRestoredZeroIsFresh undoes the gap detection of an input
	// position restored at 0 (SetInputSeq): the port takes any first seq
	// as the start of the stream, so what a replay sent before the first
	// tuple it accepts is lost without a trace.
	PlantRestoredZeroIsFresh Planted = 1 << 45
)

func init() {
	plantedNames[PlantResetNoResend] = "reset-no-resend"
	plantedNames[PlantSkipDeadReceiver] = "skip-dead-receiver"
	plantedNames[PlantUnvouchedProbe] = "unvouched-probe"
	plantedNames[PlantReleaseOnFailedBackup] = "release-on-failed-backup"
	plantedNames[PlantTransferOnce] = "transfer-once"
	plantedNames[PlantRestoredZeroIsFresh] = "restored-zero-is-fresh"
}
