package globalcheckpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamha/streamha/ha"
)

// ErrCorrupt is returned (wrapped) when a barrier, snapshot or restore body
// cannot be decoded.
var ErrCorrupt = errors.New("corrupt global-checkpoint message")

// Bounds on what a decoded body may claim, so garbage cannot allocate
// unbounded memory.
const (
	maxPorts    = 2
	maxOps      = 1 << 10
	maxOpState  = 1 << 30
	checksumLen = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// snapshot is one fragment's part of a global checkpoint: what the
// fragment needs to restart from it. It travels to the store in a
// "gc.snap" message and back to the restarting host in a "gc.restore".
type snapshot struct {
	// Gen is the rollback generation the snapshot was taken in.
	Gen uint64
	// ID is the checkpoint id (the barrier's interval index).
	ID uint64
	// Frag is the fragment index.
	Frag uint64
	// In is the last input seq the state reflects, per input port.
	In []uint64
	// OutSeq is the fragment's output seq counter at the snapshot.
	OutSeq uint64
	// Ops are the operators' Snapshot bytes, in pipeline order.
	Ops [][]byte
	// Log is the last fragment's retained output: what the sink may not
	// have received yet, resent by the host that restores the snapshot.
	Log []ha.Tuple
}

// encode writes s as uvarints and length-prefixed operator states,
// followed by a CRC-32C of everything before it.
func (s *snapshot) encode() []byte {
	n := 8 * (5 + len(s.In) + len(s.Ops))
	for _, o := range s.Ops {
		n += len(o)
	}
	b := make([]byte, 0, n+checksumLen)
	b = binary.AppendUvarint(b, s.Gen)
	b = binary.AppendUvarint(b, s.ID)
	b = binary.AppendUvarint(b, s.Frag)
	b = binary.AppendUvarint(b, uint64(len(s.In)))
	for _, v := range s.In {
		b = binary.AppendUvarint(b, v)
	}
	b = binary.AppendUvarint(b, s.OutSeq)
	b = binary.AppendUvarint(b, uint64(len(s.Ops)))
	for _, o := range s.Ops {
		b = binary.AppendUvarint(b, uint64(len(o)))
		b = append(b, o...)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Log)))
	for i := range s.Log {
		t, err := msgpack.Marshal(&s.Log[i])
		if err != nil {
			panic("globalcheckpoint: encode a tuple: " + err.Error()) // a Tuple always encodes
		}
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeSnapshot reads a snapshot written by encode. The operator states
// alias b.
func decodeSnapshot(b []byte) (*snapshot, error) {
	body, err := checked(b, "snapshot")
	if err != nil {
		return nil, err
	}
	r := reader{b: body}
	s := &snapshot{Gen: r.uvarint("gen"), ID: r.uvarint("id"), Frag: r.uvarint("fragment")}
	ports := r.count("input ports", maxPorts)
	for i := 0; i < ports; i++ {
		s.In = append(s.In, r.uvarint("input position"))
	}
	s.OutSeq = r.uvarint("output seq")
	ops := r.count("operator states", maxOps)
	for i := 0; i < ops; i++ {
		s.Ops = append(s.Ops, r.bytes("operator state"))
	}
	logLen := r.count("output tuples", ha.MaxTuplesPerMessage)
	for i := 0; i < logLen && r.err == nil; i++ {
		var t ha.Tuple
		if err := msgpack.Unmarshal(r.bytes("output tuple"), &t); err != nil && r.err == nil {
			r.err = fmt.Errorf("%w: output tuple %d: %w", ErrCorrupt, i, err)
		}
		s.Log = append(s.Log, t)
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes in snapshot", ErrCorrupt, len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

// barrier is what a source or a fragment tells the next fragment's
// primary: checkpoint ID of generation Gen follows its output seq Pos.
type barrier struct {
	Gen, ID, Pos uint64
}

func (m barrier) encode() []byte {
	b := binary.AppendUvarint(nil, m.Gen)
	b = binary.AppendUvarint(b, m.ID)
	b = binary.AppendUvarint(b, m.Pos)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeBarrier reads a barrier written by encode. A damaged barrier is
// rejected rather than trusted: the Pos of a completion says how far a
// host may trim what a rollback would replay.
func decodeBarrier(b []byte) (barrier, error) {
	if len(b) < checksumLen {
		return barrier{}, fmt.Errorf("%w: barrier of %d bytes", ErrCorrupt, len(b))
	}
	body, sum := b[:len(b)-checksumLen], binary.BigEndian.Uint32(b[len(b)-checksumLen:])
	if crc32.Checksum(body, castagnoli) != sum {
		return barrier{}, fmt.Errorf("%w: barrier checksum mismatch", ErrCorrupt)
	}
	r := reader{b: body}
	m := barrier{Gen: r.uvarint("gen"), ID: r.uvarint("id"), Pos: r.uvarint("position")}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes in barrier", ErrCorrupt, len(r.b))
	}
	return m, r.err
}

// reader decodes uvarints and length-prefixed bytes, keeping the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: truncated %s", ErrCorrupt, what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) count(what string, limit int) int {
	v := r.uvarint(what)
	if r.err == nil && v > uint64(limit) {
		r.err = fmt.Errorf("%w: %d %s, at most %d", ErrCorrupt, v, what, limit)
		return 0
	}
	return int(v)
}

func (r *reader) bytes(what string) []byte {
	n := r.uvarint(what + " length")
	if r.err != nil {
		return nil
	}
	if n > maxOpState || n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: %s of %d bytes, %d left", ErrCorrupt, what, n, len(r.b))
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// Bounds on a decoded order.
const (
	maxOrderHosts = 1 << 10
	maxOrderVals  = 1 << 10
	maxHostName   = 1 << 8
)

// order is a control message between the coordinator and the store:
// Term is the coordinator's term (the store's fencing token), Gen the
// rollback generation, ID a checkpoint id; Hosts and Vals carry what the
// message type needs (restore targets, trim positions, a host's name).
type order struct {
	Term, Gen, ID uint64
	Hosts         []string
	Vals          []uint64
}

func (o *order) encode() []byte {
	b := binary.AppendUvarint(nil, o.Term)
	b = binary.AppendUvarint(b, o.Gen)
	b = binary.AppendUvarint(b, o.ID)
	b = binary.AppendUvarint(b, uint64(len(o.Hosts)))
	for _, h := range o.Hosts {
		b = binary.AppendUvarint(b, uint64(len(h)))
		b = append(b, h...)
	}
	b = binary.AppendUvarint(b, uint64(len(o.Vals)))
	for _, v := range o.Vals {
		b = binary.AppendUvarint(b, v)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeOrder reads an order written by encode; a damaged one is rejected:
// its positions say how far a host may trim.
func decodeOrder(b []byte) (*order, error) {
	body, err := checked(b, "order")
	if err != nil {
		return nil, err
	}
	r := reader{b: body}
	o := &order{Term: r.uvarint("term"), Gen: r.uvarint("gen"), ID: r.uvarint("id")}
	hosts := r.count("hosts", maxOrderHosts)
	for i := 0; i < hosts && r.err == nil; i++ {
		n := r.uvarint("host name length")
		if r.err == nil && (n > maxHostName || n > uint64(len(r.b))) {
			r.err = fmt.Errorf("%w: host name of %d bytes, %d left", ErrCorrupt, n, len(r.b))
		}
		if r.err == nil {
			o.Hosts = append(o.Hosts, string(r.b[:n]))
			r.b = r.b[n:]
		}
	}
	vals := r.count("values", maxOrderVals)
	for i := 0; i < vals && r.err == nil; i++ {
		o.Vals = append(o.Vals, r.uvarint("value"))
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes in order", ErrCorrupt, len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return o, nil
}

// checked returns the body of b, a what ("snapshot", "order") written with
// its CRC-32C appended, or ErrCorrupt when b is too short or the checksum
// does not match.
func checked(b []byte, what string) ([]byte, error) {
	if len(b) < checksumLen {
		return nil, fmt.Errorf("%w: %s of %d bytes", ErrCorrupt, what, len(b))
	}
	body, sum := b[:len(b)-checksumLen], binary.BigEndian.Uint32(b[len(b)-checksumLen:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: %s checksum mismatch", ErrCorrupt, what)
	}
	return body, nil
}
