package passivestandby

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamha/streamha/ha"
)

// ErrCorruptCheckpoint is returned (wrapped) when checkpoint bytes cannot be
// decoded.
var ErrCorruptCheckpoint = errors.New("corrupt checkpoint")

// ErrChecksum is returned (wrapped) when a checkpoint's checksum does not
// match its bytes: it was damaged in transit or in storage. It matches
// ErrCorruptCheckpoint too.
var ErrChecksum = fmt.Errorf("%w: checksum mismatch", ErrCorruptCheckpoint)

// checksumLen is the length of the CRC-32C trailer of a checkpoint.
const checksumLen = 4

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxPorts bounds the input positions a checkpoint may carry.
const maxPorts = 2

// maxOps bounds the operator states a checkpoint may carry.
const maxOps = 1 << 10

// Operator state kinds inside a checkpoint.
const (
	stateFull  uint8 = 0 // the operator's Snapshot
	stateDelta uint8 = 1 // the operator's SnapshotDelta (ha.Incremental)
)

// opState is one operator's part of a checkpoint.
type opState struct {
	Kind uint8
	Data []byte
}

// checkpoint is everything a backup needs to take over from the primary at
// the moment it was captured. It travels as the Body of a "ps.ckpt"
// message, encoded as a msgpack array (see EncodeMsgpack and
// decodeCheckpoint).
type checkpoint struct {
	// ID numbers the checkpoints of one primary host, from 1.
	ID uint64
	// Base is the checkpoint an incremental checkpoint applies on top of;
	// 0 for a full checkpoint.
	Base uint64
	// In is the last input seq consumed on each input port.
	In []uint64
	// OutSeq is the primary's output seq counter.
	OutSeq uint64
	// Decisions is the index, in the primary's stream of interleaving
	// decisions, of the first decision made after this checkpoint.
	Decisions uint64
	// LogTrim: retained output with seq ≤ LogTrim is no longer needed.
	LogTrim uint64
	// Ops are the operator states, one per operator of the fragment.
	Ops []opState
	// Log is the unacknowledged output: all of it in a full checkpoint,
	// the tuples emitted since the base in an incremental one.
	Log []ha.Tuple
}

// Full reports whether the checkpoint stands alone.
func (c *checkpoint) Full() bool { return c.Base == 0 }

// EncodeMsgpack writes the checkpoint as an 8-element array.
func (c *checkpoint) EncodeMsgpack(e *msgpack.Encoder) error {
	if err := e.EncodeArrayLen(8); err != nil {
		return err
	}
	for _, err := range []error{
		e.EncodeUint64(c.ID), e.EncodeUint64(c.Base), e.EncodeArrayLen(len(c.In)),
	} {
		if err != nil {
			return err
		}
	}
	for _, s := range c.In {
		if err := e.EncodeUint64(s); err != nil {
			return err
		}
	}
	for _, err := range []error{
		e.EncodeUint64(c.OutSeq), e.EncodeUint64(c.Decisions), e.EncodeUint64(c.LogTrim),
		e.EncodeArrayLen(len(c.Ops)),
	} {
		if err != nil {
			return err
		}
	}
	for _, o := range c.Ops {
		if err := e.EncodeUint8(o.Kind); err != nil {
			return err
		}
		if err := e.EncodeBytes(o.Data); err != nil {
			return err
		}
	}
	if err := e.EncodeArrayLen(len(c.Log)); err != nil {
		return err
	}
	for i := range c.Log {
		if err := c.Log[i].EncodeMsgpack(e); err != nil {
			return err
		}
	}
	return nil
}

// ckDecoder reads a checkpoint written by EncodeMsgpack. It never trusts a
// length prefix beyond the bytes that remain, so garbage cannot allocate
// unbounded memory, and the first error sticks.
type ckDecoder struct {
	r   *bytes.Reader
	d   *msgpack.Decoder
	err error
}

func (c *ckDecoder) fail(format string, a ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: "+format, append([]any{ErrCorruptCheckpoint}, a...)...)
	}
}

func (c *ckDecoder) setErr(err error) {
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("%w: %w", ErrCorruptCheckpoint, err)
	}
}

func (c *ckDecoder) uint64() uint64 {
	if c.err != nil {
		return 0
	}
	v, err := c.d.DecodeUint64()
	c.setErr(err)
	return v
}

// arrayLen reads an array header whose elements take at least minBytes each.
func (c *ckDecoder) arrayLen(what string, minBytes, limit int) int {
	if c.err != nil {
		return 0
	}
	n, err := c.d.DecodeArrayLen()
	c.setErr(err)
	if c.err != nil {
		return 0
	}
	if n < 0 || n > limit || n > c.r.Len()/minBytes {
		c.fail("%s: bad length %d (%d bytes left)", what, n, c.r.Len())
		return 0
	}
	return n
}

func (c *ckDecoder) bytes(what string) []byte {
	if c.err != nil {
		return nil
	}
	n, err := c.d.DecodeBytesLen()
	c.setErr(err)
	if c.err != nil {
		return nil
	}
	if n < 0 {
		return nil
	}
	if n > c.r.Len() {
		c.fail("%s: %d bytes announced, %d left", what, n, c.r.Len())
		return nil
	}
	b := make([]byte, n)
	c.setErr(c.d.ReadFull(b))
	return b
}

func (c *ckDecoder) checkpoint() *checkpoint {
	ck := &checkpoint{}
	if n := c.arrayLen("checkpoint", 1, 8); c.err == nil && n != 8 {
		c.fail("%d fields, want 8", n)
	}
	ck.ID = c.uint64()
	ck.Base = c.uint64()
	ck.In = make([]uint64, c.arrayLen("input positions", 1, maxPorts))
	for i := range ck.In {
		ck.In[i] = c.uint64()
	}
	ck.OutSeq = c.uint64()
	ck.Decisions = c.uint64()
	ck.LogTrim = c.uint64()
	ck.Ops = make([]opState, c.arrayLen("operator states", 2, maxOps))
	for i := range ck.Ops {
		if c.err != nil {
			break
		}
		k, err := c.d.DecodeUint8()
		c.setErr(err)
		if c.err == nil && k != stateFull && k != stateDelta {
			c.fail("operator %d: unknown state kind %d", i, k)
		}
		ck.Ops[i] = opState{Kind: k, Data: c.bytes("operator state")}
	}
	// A tuple takes at least 16 bytes (10 fields, one a 2-element array).
	n := c.arrayLen("output log", 16, math.MaxInt32)
	if n > 0 {
		ck.Log = make([]ha.Tuple, n)
		for i := range ck.Log {
			if c.err != nil {
				break
			}
			if err := ck.Log[i].DecodeMsgpack(c.d); err != nil {
				c.fail("logged tuple %d: %v", i, err)
			}
		}
	}
	if c.err == nil && c.r.Len() != 0 {
		c.fail("%d trailing bytes", c.r.Len())
	}
	return ck
}

// encodeCheckpoint returns the checkpoint's wire bytes: the msgpack array
// followed by the CRC-32C (Castagnoli) of that array, big-endian. sizeHint
// is the capacity to start with (the size of a similar checkpoint): a
// buffer grown from nothing copies itself at every doubling, and the
// output log's tuples are written straight into the spare capacity.
func encodeCheckpoint(c *checkpoint, sizeHint int) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, max(0, sizeHint)))
	if err := c.EncodeMsgpack(msgpack.NewEncoder(buf)); err != nil {
		return nil, fmt.Errorf("encode checkpoint %d: %w", c.ID, err)
	}
	return appendChecksum(buf.Bytes()), nil
}

// appendChecksum appends the CRC-32C trailer of body.
func appendChecksum(body []byte) []byte {
	return binary.BigEndian.AppendUint32(body, crc32.Checksum(body, castagnoli))
}

// decodeCheckpoint verifies the checksum of checkpoint bytes written by
// encodeCheckpoint and parses them. A damaged or truncated checkpoint is an
// error matching ErrCorruptCheckpoint (and ErrChecksum when the bytes do
// not match their checksum); nothing of it is used.
func decodeCheckpoint(b []byte) (*checkpoint, error) {
	if len(b) < checksumLen {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the checksum", ErrCorruptCheckpoint, len(b))
	}
	body, sum := b[:len(b)-checksumLen], binary.BigEndian.Uint32(b[len(b)-checksumLen:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return nil, fmt.Errorf("%w (%d bytes: computed %08x, stored %08x)", ErrChecksum, len(b), got, sum)
	}
	return decodeCheckpointBody(body)
}

// decodeCheckpointBody parses the msgpack array of a checkpoint (without
// its checksum); trailing bytes are an error.
func decodeCheckpointBody(b []byte) (*checkpoint, error) {
	r := bytes.NewReader(b)
	d := &ckDecoder{r: r, d: msgpack.NewDecoder(r)}
	ck := d.checkpoint()
	if d.err != nil {
		return nil, d.err
	}
	return ck, nil
}

// rollback restores the first len(undo) operators to the states in undo.
func rollback(ops []ha.Operator, undo [][]byte) error {
	for i, b := range undo {
		if err := ops[i].Restore(b); err != nil {
			return fmt.Errorf("operator %d (%s): %w", i, ops[i].Name(), err)
		}
	}
	return nil
}

// keeping says which checkpoint the backup falls back to.
func (h *hooks) keeping() string {
	if h.held == nil {
		return "no earlier checkpoint held"
	}
	return fmt.Sprintf("keeping checkpoint %d from %s", h.held.id, h.held.from)
}
