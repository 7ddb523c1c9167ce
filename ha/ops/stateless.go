package ops

import (
	"fmt"
	"math"

	"github.com/streamha/streamha/ha"
)

// restoreStateless accepts only an empty snapshot: a stateless operator's
// Snapshot is always empty, so anything else is not one of its snapshots.
func restoreStateless(name string, snap []byte) error {
	if len(snap) != 0 {
		return fmt.Errorf("%s: restore: %w: stateless operator got a %d-byte snapshot", name, ErrCorruptState, len(snap))
	}
	return nil
}

// filterOp keeps tuples with gt < Value < lt.
type filterOp struct {
	gt, lt float64
}

func buildFilter(p *params) (ha.Operator, error) {
	gt, hasGT, err := p.float("value_gt")
	if err != nil {
		return nil, err
	}
	lt, hasLT, err := p.float("value_lt")
	if err != nil {
		return nil, err
	}
	if !hasGT && !hasLT {
		return nil, p.errf("value_gt", "filter needs value_gt, value_lt or both")
	}
	if !hasGT {
		gt = math.Inf(-1)
	}
	if !hasLT {
		lt = math.Inf(1)
	}
	if hasGT && hasLT && gt >= lt {
		return nil, p.errf("value_lt", "must be greater than value_gt (%g), got %g", gt, lt)
	}
	return &filterOp{gt: gt, lt: lt}, nil
}

func (*filterOp) Name() string    { return "filter" }
func (*filterOp) Class() ha.Class { return ha.Repeatable }
func (f *filterOp) Process(t ha.Tuple, emit ha.Emit) {
	if t.IsEnd() || t.Value > f.gt && t.Value < f.lt {
		emit(t)
	}
}
func (*filterOp) Snapshot() ([]byte, error) { return nil, nil }
func (*filterOp) Restore(snap []byte) error { return restoreStateless("filter", snap) }

// mapOp applies Value = Value*scale + offset.
type mapOp struct {
	scale, offset float64
}

func buildMap(p *params) (ha.Operator, error) {
	scale, hasScale, err := p.float("scale")
	if err != nil {
		return nil, err
	}
	if !hasScale {
		scale = 1
	}
	offset, _, err := p.float("offset")
	if err != nil {
		return nil, err
	}
	if math.IsInf(scale, 0) || math.IsInf(offset, 0) {
		return nil, p.errf("scale", "scale and offset must be finite")
	}
	return &mapOp{scale: scale, offset: offset}, nil
}

func (*mapOp) Name() string    { return "map" }
func (*mapOp) Class() ha.Class { return ha.Repeatable }
func (m *mapOp) Process(t ha.Tuple, emit ha.Emit) {
	if t.IsEnd() {
		emit(t)
		return
	}
	t.Value = t.Value*m.scale + m.offset
	emit(t)
}
func (*mapOp) Snapshot() ([]byte, error) { return nil, nil }
func (*mapOp) Restore(snap []byte) error { return restoreStateless("map", snap) }

// unionOp passes both ports through in arrival order on port 0. Its only
// state is which ports have ended: it passes the end of stream on once
// both have, so that nothing downstream closes a window while the other
// port still delivers.
type unionOp struct {
	ended [2]bool
}

func (*unionOp) Name() string    { return "union" }
func (*unionOp) Class() ha.Class { return ha.Arbitrary }
func (u *unionOp) Process(t ha.Tuple, emit ha.Emit) {
	if t.IsEnd() {
		u.ended[min(int(t.Stream), 1)] = true
		if !u.ended[0] || !u.ended[1] {
			return
		}
	}
	t.Stream = 0
	emit(t)
}

// Snapshot is empty until a port has ended, then the ended ports.
func (u *unionOp) Snapshot() ([]byte, error) {
	if !u.ended[0] && !u.ended[1] {
		return nil, nil
	}
	e := newEncoder(tagUnionSnap)
	e.bool(u.ended[0])
	e.bool(u.ended[1])
	b, err := e.bytes()
	if err != nil {
		return nil, fmt.Errorf("union: encode state: %w", err)
	}
	return b, nil
}

// Restore replaces the ended ports; nil or empty means none.
func (u *unionOp) Restore(snap []byte) error {
	if len(snap) == 0 {
		u.ended = [2]bool{}
		return nil
	}
	d := newDecoder(snap, tagUnionSnap)
	ended := [2]bool{d.bool(), d.bool()}
	if err := d.finish(); err != nil {
		return fmt.Errorf("union: restore: %w", err)
	}
	u.ended = ended
	return nil
}
