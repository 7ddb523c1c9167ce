package ops

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"github.com/vmihailenco/msgpack/v5"
)

// ErrCorruptState is returned (wrapped) by Restore and ApplyDelta when the
// bytes are not a valid snapshot or delta of this operator and configuration.
var ErrCorruptState = errors.New("corrupt state")

// Snapshot and delta tags: the first value of every encoded state says what
// it is, so that a delta is never restored as a snapshot or vice versa and a
// state of one operator is never restored into another.
const (
	tagWindowSnap uint64 = 1 + iota
	tagWindowDelta
	tagRunningSnap
	tagRunningDelta
	tagJoinSnap
	tagJoinDelta
	tagUnionSnap
	tagChainSnap
	tagChainDelta
)

// stateVersion is bumped when an encoding changes incompatibly.
const stateVersion = 1

// encoder writes a flat sequence of msgpack values. The encoding is a pure
// function of the values written (compact integers, 64-bit floats), which is
// what makes snapshots byte-deterministic.
type encoder struct {
	buf bytes.Buffer
	e   *msgpack.Encoder
	err error
}

func newEncoder(tag uint64) *encoder {
	w := &encoder{}
	w.e = msgpack.NewEncoder(&w.buf)
	w.uint(tag)
	w.uint(stateVersion)
	return w
}

func (w *encoder) int(v int64) {
	if w.err == nil {
		w.err = w.e.EncodeInt(v)
	}
}

func (w *encoder) uint(v uint64) {
	if w.err == nil {
		w.err = w.e.EncodeUint(v)
	}
}

func (w *encoder) float(v float64) {
	if w.err == nil {
		w.err = w.e.EncodeFloat64(v)
	}
}

func (w *encoder) bool(v bool) {
	if w.err == nil {
		w.err = w.e.EncodeBool(v)
	}
}

func (w *encoder) arrayLen(n int) {
	if w.err == nil {
		w.err = w.e.EncodeArrayLen(n)
	}
}

func (w *encoder) bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return w.buf.Bytes(), nil
}

// decoder reads what encoder wrote. It never trusts a length prefix beyond
// the bytes that remain (msgpack's reflection decoder would allocate
// whatever a corrupt length says), and the first error sticks.
type decoder struct {
	r   *bytes.Reader
	d   *msgpack.Decoder
	err error
}

func newDecoder(b []byte, tag uint64) *decoder {
	r := bytes.NewReader(b)
	d := &decoder{r: r, d: msgpack.NewDecoder(r)}
	if got := d.uint(); d.err == nil && got != tag {
		d.fail("tag %d, want %d", got, tag)
	}
	if v := d.uint(); d.err == nil && v != stateVersion {
		d.fail("version %d, want %d", v, stateVersion)
	}
	return d
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrCorruptState}, args...)...)
	}
}

func (d *decoder) setErr(err error) {
	if err != nil && d.err == nil {
		d.err = fmt.Errorf("%w: %v", ErrCorruptState, err)
	}
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, err := d.d.DecodeInt64()
	d.setErr(err)
	return v
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := d.d.DecodeUint64()
	d.setErr(err)
	return v
}

func (d *decoder) uint32() uint32 {
	v := d.uint()
	if v > math.MaxUint32 {
		d.fail("value %d overflows uint32", v)
		return 0
	}
	return uint32(v)
}

func (d *decoder) float() float64 {
	if d.err != nil {
		return 0
	}
	v, err := d.d.DecodeFloat64()
	d.setErr(err)
	return v
}

func (d *decoder) bool() bool {
	if d.err != nil {
		return false
	}
	v, err := d.d.DecodeBool()
	d.setErr(err)
	return v
}

// arrayLen reads an array header for elements encoded as at least minBytes
// values each and rejects lengths the remaining input cannot hold.
func (d *decoder) arrayLen(minBytes int) int {
	if d.err != nil {
		return 0
	}
	n, err := d.d.DecodeArrayLen()
	d.setErr(err)
	if d.err != nil {
		return 0
	}
	if n < 0 || n > d.r.Len()/minBytes {
		d.fail("array length %d exceeds the %d remaining bytes", n, d.r.Len())
		return 0
	}
	return n
}

// finish reports the first error, or trailing bytes.
func (d *decoder) finish() error {
	if d.err == nil && d.r.Len() != 0 {
		d.fail("%d trailing bytes", d.r.Len())
	}
	return d.err
}

// lineage helpers: a lineage is encoded as two values (N, Hash).
func (w *encoder) lineage(n uint32, h uint64) {
	w.uint(uint64(n))
	w.uint(h)
}
