package ha

import (
	"fmt"
	"strconv"
	"time"
)

// IDKind says how an output id is built.
type IDKind uint8

// Output id kinds.
const (
	// IDSource identifies one source tuple: Key is the source stream, X its
	// number on that stream. Maps and filters keep their input's id.
	IDSource IDKind = iota
	// IDWindow identifies one window result: Key is the key, X the window
	// start in nanoseconds of event time.
	IDWindow
	// IDKey identifies one running-aggregate result: Key is the key, X the
	// number of updates of that key so far.
	IDKey
	// IDPair identifies one join result: Key is the key, X packs the left
	// and right source tuple numbers (left<<32 | right).
	IDPair
	// IDEnd marks the end of a source stream (Key is the stream): the
	// final mark a source sends after its last tuple. It travels like a
	// tuple, closes every open window of the operators it passes and is
	// never delivered to the sink (docs/semantics.md, "End of stream").
	IDEnd
)

// IsEnd reports whether t is an end-of-stream mark.
func (t *Tuple) IsEnd() bool { return t.ID.Kind == IDEnd }

// EndMark is the end-of-stream mark of source stream at time at (its
// event time and intended emission time).
func EndMark(stream uint32, at time.Duration) Tuple {
	return Tuple{Time: int64(at), Emit: int64(at), ID: OutputID{Kind: IDEnd, Key: stream}}
}

// OutputID is the logical identity of a tuple, compared across runs by the
// classifier (for example "k03|w=9s" for a windowed aggregate).
type OutputID struct {
	Kind IDKind
	Key  uint32
	X    int64
}

// String formats the id the way reports and classify logs show it.
func (id OutputID) String() string {
	switch id.Kind {
	case IDWindow:
		return KeyName(id.Key) + "|w=" + time.Duration(id.X).String()
	case IDPair:
		return KeyName(id.Key) + "|s0:" + strconv.FormatInt(id.X>>32, 10) + "*s1:" + strconv.FormatInt(id.X&0xffffffff, 10)
	case IDKey:
		return KeyName(id.Key) + "#" + strconv.FormatInt(id.X, 10)
	case IDEnd:
		return "end-of-stream s" + strconv.FormatUint(uint64(id.Key), 10)
	default:
		return "s" + strconv.FormatUint(uint64(id.Key), 10) + ":" + strconv.FormatInt(id.X, 10)
	}
}

// keyNames holds the names of the first keys, so that formatting the key
// of every delivery for the classifier does not allocate.
var keyNames = func() (names [1024]string) {
	for k := range names {
		names[k] = formatKey(uint32(k))
	}
	return names
}()

// KeyName formats a key index ("k03").
func KeyName(k uint32) string {
	if int(k) < len(keyNames) {
		return keyNames[k]
	}
	return formatKey(k)
}

func formatKey(k uint32) string {
	if k < 10 {
		return "k0" + strconv.FormatUint(uint64(k), 10)
	}
	return "k" + strconv.FormatUint(uint64(k), 10)
}

// Lineage summarises the source tuples a tuple reflects: how many, and an
// order-independent hash of their ids (a sum of mixed ids), so that a result
// computed from fewer or other inputs is detectable.
type Lineage struct {
	N    uint32
	Hash uint64
}

// Add merges another lineage into l.
func (l *Lineage) Add(o Lineage) {
	l.N += o.N
	l.Hash += o.Hash
}

// SourceLineage is the lineage of one source tuple.
func SourceLineage(stream uint32, n int64) Lineage {
	return Lineage{N: 1, Hash: mix64(uint64(stream)<<48 ^ uint64(n))}
}

// mix64 is the splitmix64 finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Tuple is one stream element. Seq is assigned by the producing node per
// output stream and is what downstream nodes use to drop duplicates.
type Tuple struct {
	// Stream is the input port the tuple arrives on at its consumer
	// (0 or 1; binary operators such as union and join use both).
	Stream uint8
	// Seq is the per-stream sequence number assigned by the producer.
	Seq uint64
	// Key is the grouping key index.
	Key uint32
	// Time is the event time in nanoseconds since the start of the run.
	Time int64
	// Emit is the intended emission time (ns) this tuple's latency is
	// measured from: the source's scheduled time, or a window's end.
	Emit int64
	// Value is the payload.
	Value float64
	// ID is the logical output id.
	ID OutputID
	// Lineage summarises the source tuples reflected.
	Lineage Lineage
}

// String is a compact human-readable form used in traces and errors.
func (t Tuple) String() string {
	return fmt.Sprintf("%s seq=%d key=%s v=%g n=%d", t.ID, t.Seq, KeyName(t.Key), t.Value, t.Lineage.N)
}
