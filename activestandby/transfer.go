package activestandby

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamha/streamha/ha"
)

// Strategy message types (ha.KindStrategy) and the relayed ack level.
const (
	// msgState carries a state transfer from a primary to a new secondary:
	// Body is an encoded transfer, Tuples the primary's output log.
	msgState = "as.state"
	// msgCatchUp asks an upstream to replay to the sender the tuples after
	// Seq on its input port Stream, and to count Seq as acknowledged.
	msgCatchUp = "as.catchup"
	// msgOrder carries interleaving decisions (one input port per byte);
	// Seq is the index of the first one among those the primary shipped.
	msgOrder = "as.order"
	// msgOrderNack asks the primary to resend its decisions from index Seq.
	msgOrderNack = "as.order-nack"
	// msgOrderAck tells the primary a secondary holds its decisions up to
	// index Seq (commit.go).
	msgOrderAck = "as.order-ack"

	// levelRelayed marks a KindAck a primary relays to its secondary: the
	// downstream receivers all hold the output up to Seq.
	levelRelayed uint8 = 2
)

// errTransfer marks a state transfer that cannot be installed.
var errTransfer = errors.New("bad state transfer")

// transfer is the state a primary ships to a new secondary, besides its
// output log (sent as the message's tuples).
type transfer struct {
	_msgpack struct{} `msgpack:",as_array"`
	// Ops are the operators' snapshots, in pipeline order.
	Ops [][]byte
	// In are the input positions (highest seq accepted) per input port.
	In []uint64
	// Out is the output seq of the last emitted tuple.
	Out uint64
	// Trim is the position up to which every downstream receiver acknowledged.
	Trim uint64
	// Decisions is the index of the first interleaving decision shipped
	// after the snapshot.
	Decisions uint64
}

// snapshot captures n's state for a new secondary.
func snapshot(n *ha.Node, trim, decisions uint64) (*ha.Message, error) {
	t := transfer{Out: n.OutputSeq(), Trim: trim, Decisions: decisions}
	for i, op := range n.Ops() {
		b, err := op.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("snapshot operator %d (%s): %w", i, op.Name(), err)
		}
		t.Ops = append(t.Ops, b)
	}
	for p := 0; p < n.Inputs(); p++ {
		t.In = append(t.In, n.InputSeq(p))
	}
	body, err := msgpack.Marshal(&t)
	if err != nil {
		return nil, fmt.Errorf("encode state transfer: %w", err)
	}
	return &ha.Message{Kind: ha.KindStrategy, Type: msgState, Body: body, Tuples: n.AppendOutput(nil, 0, n.OutputLen())}, nil
}

// install replaces n's state with a transfer received in m and returns the
// transferred input positions.
func install(n *ha.Node, m *ha.Message) (transfer, error) {
	var t transfer
	if err := msgpack.Unmarshal(m.Body, &t); err != nil {
		return t, fmt.Errorf("%w: decode: %w", errTransfer, err)
	}
	ops := n.Ops()
	if len(t.Ops) != len(ops) {
		return t, fmt.Errorf("%w: %d operator snapshots for %d operators", errTransfer, len(t.Ops), len(ops))
	}
	if len(t.In) != n.Inputs() {
		return t, fmt.Errorf("%w: %d input positions for %d inputs", errTransfer, len(t.In), n.Inputs())
	}
	for i, op := range ops {
		if err := op.Restore(t.Ops[i]); err != nil {
			return t, fmt.Errorf("%w: restore operator %d (%s): %w", errTransfer, i, op.Name(), err)
		}
	}
	for p, s := range t.In {
		n.SetInputSeq(p, s)
	}
	n.SetOutputSeq(t.Out)
	n.SetRetain(true)
	n.SetOutputLog(m.Tuples)
	return t, nil
}
