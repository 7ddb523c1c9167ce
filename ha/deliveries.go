package ha

import (
	"encoding/binary"
	"iter"
	"math"
	"time"
)

// Delivery is one output the sink received, at time T.
type Delivery struct {
	T     time.Duration
	Tuple Tuple
}

// Latency is the delivery's end-to-end latency from its intended emission time.
func (d Delivery) Latency() time.Duration { return d.T - time.Duration(d.Tuple.Emit) }

// Deliveries is a sink's output log in delivery order, kept compact for
// runs of millions of deliveries: the log is cut into blocks of 64, and
// each field of a block is stored as its offset from the block's smallest
// value in as few bytes as the block's range needs (frame of reference),
// after a prediction that makes it small — a delivery's time and its
// tuple's event time relative to its emission time, a source tuple's
// lineage hash relative to the one its id implies. Delivery order keeps
// most fields near-monotone, so a map query's outputs take about 20 bytes
// a delivery, header included, instead of the 88 of a Delivery, and any
// delivery is still read in constant time. The log holds no pointers for
// the garbage collector to scan beyond one per 256 KiB slab.
// The zero value is an empty log; At and All return copies.
type Deliveries struct {
	blocks []block
	slabs  [][]byte // encoded blocks; the last may still grow
	open   [blockLen]Delivery
	nOpen  int // deliveries in open, the block not yet encoded
}

// blockLen is the number of deliveries per encoded block.
const (
	blockBits = 6
	blockLen  = 1 << blockBits
)

// Field numbers of an encoded delivery.
const (
	fT       = iota // T - Emit
	fStream         // Stream
	fSeq            // Seq
	fKey            // Key
	fTime           // Time - Emit
	fEmit           // Emit
	fValue          // bits of Value
	fIDKind         // ID.Kind
	fIDKey          // ID.Key
	fIDX            // ID.X
	fLinN           // Lineage.N
	fLinHash        // Lineage.Hash ^ the hash a source id implies
	nFields
)

// block is the header of one encoded block of blockLen deliveries: field
// f of delivery j is base[f] plus the width[f]-byte little-endian number
// at slab[start+off[f]+j*width[f]] (0 when width[f] is 0).
type block struct {
	base  [nFields]uint64
	off   [nFields]uint16
	width [nFields]uint8
	slab  uint32
	start uint32
}

// Slab sizes: the first slab starts small, so that a short log (a windowed
// query delivers a few hundred outputs) costs little, and doubles up to
// maxSlab; the others are maxSlab.
const (
	minSlab = 8 << 10
	maxSlab = 1 << 18
)

// predictedHash is the lineage hash a tuple with id carries when it
// reflects exactly the source tuple its id names, 0 for other ids.
func predictedHash(id OutputID) uint64 {
	if id.Kind != IDSource {
		return 0
	}
	return SourceLineage(id.Key, id.X).Hash
}

// delivery rebuilds a delivery from its encoded fields.
func delivery(v *[nFields]uint64) Delivery {
	d := Delivery{
		T: time.Duration(v[fT]),
		Tuple: Tuple{
			Stream:  uint8(v[fStream]),
			Seq:     v[fSeq],
			Key:     uint32(v[fKey]),
			Time:    int64(v[fTime]),
			Emit:    int64(v[fEmit]),
			Value:   math.Float64frombits(v[fValue]),
			ID:      OutputID{Kind: IDKind(v[fIDKind]), Key: uint32(v[fIDKey]), X: int64(v[fIDX])},
			Lineage: Lineage{N: uint32(v[fLinN]), Hash: v[fLinHash]},
		},
	}
	d.unpredict()
	return d
}

// unpredict turns a delivery whose fields are as encoded (T and Time
// relative to Emit, the hash relative to the one the id implies) back
// into the delivery.
func (d *Delivery) unpredict() {
	t := &d.Tuple
	d.T += time.Duration(t.Emit)
	t.Time += t.Emit
	t.Lineage.Hash ^= predictedHash(t.ID)
}

// LastTime is the time of the last delivery, 0 without any. Deliveries
// are appended as they happen, so the last one is the latest.
func (d *Deliveries) LastTime() time.Duration {
	if d.Len() == 0 {
		return 0
	}
	return d.At(d.Len() - 1).T
}

// Len is the number of deliveries.
func (d *Deliveries) Len() int {
	if d == nil {
		return 0
	}
	return len(d.blocks)<<blockBits + d.nOpen
}

// At returns the i-th delivery (0 ≤ i < Len).
func (d *Deliveries) At(i int) Delivery {
	b, j := i>>blockBits, i&(blockLen-1)
	if b == len(d.blocks) {
		return d.open[j]
	}
	var v [nFields]uint64
	for f := range nFields {
		v[f] = d.field(b, j, f)
	}
	return delivery(&v)
}

// ID returns the output id of the i-th delivery (0 ≤ i < Len), reading
// only its id from the log.
func (d *Deliveries) ID(i int) OutputID {
	b, j := i>>blockBits, i&(blockLen-1)
	if b == len(d.blocks) {
		return d.open[j].Tuple.ID
	}
	return OutputID{Kind: IDKind(d.field(b, j, fIDKind)), Key: uint32(d.field(b, j, fIDKey)), X: int64(d.field(b, j, fIDX))}
}

// field is encoded field f of delivery j of sealed block b.
func (d *Deliveries) field(b, j, f int) uint64 {
	h := &d.blocks[b]
	w := int(h.width[f])
	if w == 0 {
		return h.base[f]
	}
	p := int(h.start) + int(h.off[f]) + j*w
	return h.base[f] + binary.LittleEndian.Uint64(d.slabs[h.slab][p:p+8])&widthMask[w]
}

// decode decodes sealed block b, a field at a time.
func (d *Deliveries) decode(b int, out *[blockLen]Delivery) {
	h := &d.blocks[b]
	s := d.slabs[h.slab][h.start:]
	var col [blockLen]uint64
	for f := range nFields {
		base, w := h.base[f], int(h.width[f])
		if w == 0 {
			for j := range col {
				col[j] = base
			}
		} else {
			mask, p := widthMask[w], int(h.off[f])
			for j := range col {
				col[j] = base + binary.LittleEndian.Uint64(s[p:p+8])&mask
				p += w
			}
		}
		setField(out, f, &col)
	}
	for j := range out {
		out[j].unpredict()
	}
}

// setField stores column f of a block, as encoded, into its deliveries.
// It and getField are written out a field at a time, one loop per column:
// a switch per value (one setter for both the row and the column paths)
// made reading in order 2.8 times slower (BenchmarkDeliveries/all: 13 →
// 37 ns a delivery).
func setField(out *[blockLen]Delivery, f int, col *[blockLen]uint64) {
	switch f {
	case fT:
		for j, v := range col {
			out[j].T = time.Duration(v)
		}
	case fStream:
		for j, v := range col {
			out[j].Tuple.Stream = uint8(v)
		}
	case fSeq:
		for j, v := range col {
			out[j].Tuple.Seq = v
		}
	case fKey:
		for j, v := range col {
			out[j].Tuple.Key = uint32(v)
		}
	case fTime:
		for j, v := range col {
			out[j].Tuple.Time = int64(v)
		}
	case fEmit:
		for j, v := range col {
			out[j].Tuple.Emit = int64(v)
		}
	case fValue:
		for j, v := range col {
			out[j].Tuple.Value = math.Float64frombits(v)
		}
	case fIDKind:
		for j, v := range col {
			out[j].Tuple.ID.Kind = IDKind(v)
		}
	case fIDKey:
		for j, v := range col {
			out[j].Tuple.ID.Key = uint32(v)
		}
	case fIDX:
		for j, v := range col {
			out[j].Tuple.ID.X = int64(v)
		}
	case fLinN:
		for j, v := range col {
			out[j].Tuple.Lineage.N = uint32(v)
		}
	case fLinHash:
		for j, v := range col {
			out[j].Tuple.Lineage.Hash = v
		}
	}
}

// DeliveryReader reads a log mostly in order, as the classifier and the
// trace writer do: when a read follows the previous one into a block not
// yet decoded, it decodes the whole block; any other read decodes the one
// delivery (or field) asked for. Blocks never change once encoded, so the
// log may grow while it is read; a DeliveryReader belongs to one goroutine.
type DeliveryReader struct {
	d    *Deliveries
	b    int // the block in buf, -1 for none
	next int // the index that would continue the last read
	buf  [blockLen]Delivery
}

// Reader returns a reader of the log.
func (d *Deliveries) Reader() *DeliveryReader { return &DeliveryReader{d: d, b: -1} }

// cached reports whether delivery i is in buf, decoding its block first
// when i continues the previous read.
func (r *DeliveryReader) cached(i int) bool {
	b := i >> blockBits
	seq := i == r.next
	r.next = i + 1
	if b == r.b {
		return true
	}
	if !seq || b >= len(r.d.blocks) {
		return false
	}
	r.d.decode(b, &r.buf)
	r.b = b
	return true
}

// Len is the number of deliveries in the log.
func (r *DeliveryReader) Len() int { return r.d.Len() }

// At returns the i-th delivery (0 ≤ i < Len), as Deliveries.At does.
func (r *DeliveryReader) At(i int) Delivery {
	if r.cached(i) {
		return r.buf[i&(blockLen-1)]
	}
	return r.d.At(i)
}

// ID returns the output id of the i-th delivery, as Deliveries.ID does.
func (r *DeliveryReader) ID(i int) OutputID {
	if r.cached(i) {
		return r.buf[i&(blockLen-1)].Tuple.ID
	}
	return r.d.ID(i)
}

// widthMask[w] keeps the low w bytes of a word.
var widthMask = [9]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff,
	0xffffffffff, 0xffffffffffff, 0xffffffffffffff, math.MaxUint64}

// Append adds a delivery at the end.
func (d *Deliveries) Append(x Delivery) {
	d.open[d.nOpen] = x
	if d.nOpen++; d.nOpen == blockLen {
		d.seal()
	}
}

// seal encodes the open block, which is full.
func (d *Deliveries) seal() {
	var cols [nFields][blockLen]uint64
	var h block
	size := 0
	for f := range nFields {
		col := &cols[f]
		getField(&d.open, f, col)
		lo, hi := col[0], col[0]
		for _, v := range col {
			lo, hi = min(lo, v), max(hi, v)
		}
		w := byteWidth(hi - lo)
		h.base[f], h.width[f], h.off[f] = lo, uint8(w), uint16(size)
		size += w * blockLen
	}
	s := d.room(size + 8)
	h.slab, h.start = uint32(len(d.slabs)-1), uint32(len(*s))
	buf := (*s)[len(*s) : len(*s)+size+8]
	// Each value is written as a whole word, in increasing address order:
	// the bytes past its width are overwritten by the next value, or by
	// the next field, or fall in the 8 bytes past the block.
	for f := range nFields {
		w := int(h.width[f])
		if w == 0 {
			continue
		}
		p, base := int(h.off[f]), h.base[f]
		for _, v := range &cols[f] {
			binary.LittleEndian.PutUint64(buf[p:p+8], v-base)
			p += w
		}
	}
	*s = (*s)[:len(*s)+size] // the 8 bytes past it stay readable
	d.blocks = append(d.blocks, h)
	d.nOpen = 0
}

// getField reads field f of a block's deliveries, encoded, into col.
func getField(in *[blockLen]Delivery, f int, col *[blockLen]uint64) {
	switch f {
	case fT:
		for j := range in {
			col[j] = uint64(int64(in[j].T) - in[j].Tuple.Emit)
		}
	case fStream:
		for j := range in {
			col[j] = uint64(in[j].Tuple.Stream)
		}
	case fSeq:
		for j := range in {
			col[j] = in[j].Tuple.Seq
		}
	case fKey:
		for j := range in {
			col[j] = uint64(in[j].Tuple.Key)
		}
	case fTime:
		for j := range in {
			col[j] = uint64(in[j].Tuple.Time - in[j].Tuple.Emit)
		}
	case fEmit:
		for j := range in {
			col[j] = uint64(in[j].Tuple.Emit)
		}
	case fValue:
		for j := range in {
			col[j] = math.Float64bits(in[j].Tuple.Value)
		}
	case fIDKind:
		for j := range in {
			col[j] = uint64(in[j].Tuple.ID.Kind)
		}
	case fIDKey:
		for j := range in {
			col[j] = uint64(in[j].Tuple.ID.Key)
		}
	case fIDX:
		for j := range in {
			col[j] = uint64(in[j].Tuple.ID.X)
		}
	case fLinN:
		for j := range in {
			col[j] = uint64(in[j].Tuple.Lineage.N)
		}
	case fLinHash:
		for j := range in {
			col[j] = in[j].Tuple.Lineage.Hash ^ predictedHash(in[j].Tuple.ID)
		}
	}
}

// room returns the slab the next block goes to, with at least n bytes of
// capacity left: the last one, or the first one grown while it is small,
// or a new one.
func (d *Deliveries) room(n int) *[]byte {
	if k := len(d.slabs); k > 0 {
		s := &d.slabs[k-1]
		if k == 1 && cap(*s)-len(*s) < n && cap(*s) < maxSlab {
			grown := make([]byte, len(*s), min(max(2*cap(*s), len(*s)+n), maxSlab))
			copy(grown, *s)
			*s = grown
		}
		if cap(*s)-len(*s) >= n {
			return s
		}
	}
	size := maxSlab
	if len(d.slabs) == 0 {
		size = minSlab
	}
	d.slabs = append(d.slabs, make([]byte, 0, max(size, n)))
	return &d.slabs[len(d.slabs)-1]
}

// byteWidth is the number of bytes x needs (0 for 0).
func byteWidth(x uint64) int {
	w := 0
	for ; x != 0; x >>= 8 {
		w++
	}
	return w
}

// All yields every delivery with its index, in order, decoding the log
// a block at a time.
func (d *Deliveries) All() iter.Seq2[int, Delivery] {
	return func(yield func(int, Delivery) bool) {
		if d == nil {
			return
		}
		var buf [blockLen]Delivery
		for b := range d.blocks {
			d.decode(b, &buf)
			for j := range buf {
				if !yield(b<<blockBits+j, buf[j]) {
					return
				}
			}
		}
		for j := range d.nOpen {
			if !yield(len(d.blocks)<<blockBits+j, d.open[j]) {
				return
			}
		}
	}
}

// Last returns the last delivery, and false when there is none.
func (d *Deliveries) Last() (Delivery, bool) {
	if d.Len() == 0 {
		return Delivery{}, false
	}
	return d.At(d.Len() - 1), true
}

// Slice returns a copy of the deliveries as one slice.
func (d *Deliveries) Slice() []Delivery {
	out := make([]Delivery, 0, d.Len())
	for _, x := range d.All() {
		out = append(out, x)
	}
	return out
}
