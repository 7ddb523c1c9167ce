// Package activestandby implements the active standby (process pairs) HA
// strategy, registered as "active-standby".
//
// Every protected fragment runs on a primary and a secondary host. Upstreams
// send each tuple to both; both process it; only the primary's output goes
// downstream while the secondary keeps its output in a log. Every receiver
// acknowledges its input positions to its upstream primary every
// ack_interval; the primary trims its own output queue to the lowest
// position all its downstream receivers acknowledged and relays that trim
// point to its secondary, which trims its log to it (acks relayed by the
// primary). When the primary fails the secondary takes over at a new epoch
// without renumbering (processing is deterministic, so its sequence numbers
// equal the primary's), re-sends its unacknowledged log and downstreams drop
// the duplicates by sequence number. The new primary then brings a new
// secondary up on a spare by a state transfer and asks its upstreams to
// replay to it from the transferred input positions.
//
// Operators whose output depends on the arrival interleaving (union) make
// the two replicas diverge; with ship_decisions the primary ships its
// interleaving decisions to the secondary before every output that depends
// on them, and the secondary processes its input in exactly that order.
//
// The protocol and its measured costs are described in
// docs/strategies/active-standby.md.
package activestandby
