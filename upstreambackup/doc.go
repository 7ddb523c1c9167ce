// Package upstreambackup implements the "upstream backup" high-availability
// strategy of Hwang et al. (ICDE 2005), registered as "upstream-backup".
//
// Every node is the backup of its downstream neighbour: it keeps the tuples
// it sends in its output queue until a level-1 acknowledgement says their
// effects reached the next hop. A downstream node acknowledges two levels
// to each upstream every ack_interval, in one KindAck message when both
// are due (Seq = the level-1 point, the level-0 point in the body):
//
//   - level 0 (Seq = the highest input seq received on that port): the
//     tuples arrived;
//   - level 1 (Seq = an input seq no retained state depends on any more):
//     every operator of the node reports, through ha.Horizon, the oldest
//     event time its state still depends on (for a tumbling window the
//     start of the oldest open window); the node maps that time to an
//     input seq with a compact record of (seq, event time) of the inputs
//     it accepted, and acknowledges up to that seq once its own outputs
//     emitted so far (which include every output derived from those inputs)
//     are level-0 acknowledged by its downstream. The sink acknowledges
//     level 1 directly: it has no state and no downstream.
//
// An upstream trims its queue at the level-1 point, or earlier when the
// retention bound (max_tuples, max_age) says so. On a failure the first live
// spare of the failed fragment restarts it with empty state and takes over
// with fresh sequence numbers; the upstream replays its whole queue, which
// holds every input still affecting the lost state, so no input is lost.
// Outputs the failed node had already delivered are produced again:
// repeating recovery, or precise with dedup, where downstream nodes drop
// outputs whose id they already received from that fragment. The dedup
// memory is bounded: an id can be forgotten once the replay that could
// produce it again is impossible, that is once its event time is at or below
// the floor of the queue that a replacement would replay (relayed by the
// upstream in "ub.floor" messages, which only dedup needs: without it none
// are sent).
//
// A restarted window operator also recreates windows that started before
// the replayed history (a sliding window opens every window containing the
// first replayed tuple). They are incomplete, and with level-1 trimming
// they were all delivered complete before the failure: the replacement
// learns the queue floor from its upstream ("ub.replay-floor") and tells
// its downstream to drop window results starting at or before it
// ("ub.incomplete"). When a retention bound cut into the state, the dropped
// or partial windows make the recovery a gap, the trade-off the strategy
// exposes. State that depends on all history (a running sum) never lets the
// level-1 point advance: the queue grows without bound, which the result
// reports (sim.Reporter) rather than hides.
package upstreambackup
