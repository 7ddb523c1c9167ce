// Package passivestandby implements the "passive standby" high-availability
// strategy of Hwang et al. (ICDE 2005), registered as "passive-standby".
//
// Every protected fragment runs on a primary with one backup (hosts B and
// B.1; the spares B.2, … follow in takeover order). The protocol:
//
//   - Checkpoints. Every checkpoint_interval (on a fixed grid of multiples
//     of the interval) the primary captures its operator states, the last
//     input seq consumed on every input port, its output seq counter and its
//     unacknowledged output, and sends them to its backup in a "ps.ckpt"
//     message. In incremental mode only the operators' changes since the
//     previous checkpoint (ha.Incremental) and the output emitted since
//     then travel, with a full checkpoint every full_every checkpoints. At
//     most one checkpoint is outstanding: the next one waits until the
//     backup acknowledged the previous one. Serialisation is charged to the
//     primary as CPU per byte (the primary pauses processing), unless async
//     is set: then it is modelled as copy-on-write serialisation on another
//     core, not charged to the processing thread. The backup applies a
//     checkpoint to its own operators only once it has fully arrived, and is
//     charged the deserialisation.
//   - Coverage and trimming. Every node retains its output. The backup
//     acknowledges each checkpoint ("ps.ckpt-ack"); the primary then sends
//     each upstream a KindAck with the input seq that checkpoint covers, and
//     the upstream trims its output queue up to it. The sink acknowledges
//     what it received every ack_interval.
//   - Takeover. When the failure detector declares the primary dead, its
//     backup (announced by the primary to every host of the fragment in
//     "ps.backup" messages) restores the input positions, output seq and
//     unacknowledged output of its latest complete checkpoint, takes over
//     at a new epoch without renumbering, resends that output to its
//     downstream (which drops what it has by seq) and asks its upstreams to
//     replay what followed the checkpoint. It then picks the next live host
//     of the fragment as its own backup and sends it a full checkpoint at
//     once, so a second failure is survived too. If the backup fails, the
//     primary does the same. If no backup holding a checkpoint survives,
//     the next host in line restarts the fragment with empty state, traces
//     a note and renumbers its output: the recovery is then honestly a gap.
//   - Non-determinism. With log_nondeterminism the primary of a fragment
//     with two inputs records the input port of every tuple it processes
//     and ships these decisions to the backup ("ps.order") before the
//     outputs they influence leave (order_interval 0) or periodically; after
//     a takeover the new primary follows the decisions made after its
//     checkpoint during the replay, so a union re-interleaves exactly as
//     before.
//   - Auto interval. checkpoint_interval: auto measures the cost C of every
//     checkpoint (capture until acknowledged) and uses Young's first-order
//     optimum sqrt(2 × C × mtbf); the interval chosen is reported through
//     sim.Reporter.
package passivestandby
