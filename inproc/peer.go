package inproc

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// Pipeline is the hand-written peer of the runtime: the same operators
// chained by plain Go channels, one goroutine per stage, no sequence
// numbers, retention, epochs, hooks or traces; a batch goes back to a pool
// once its receiver has read it, as the runtime's copies do. It is the
// floor a user would write by hand, and streamha bench reports the
// runtime's cost as a ratio to it.
type Pipeline struct {
	// Stages are the operator pipelines of each stage, in order (one
	// goroutine per stage). Each stage runs its operators in sequence.
	Stages [][]ha.Operator
	// Batch is how many tuples travel in one channel send (1 = tuple at a time).
	Batch int
	// Buffer is each channel's capacity in sends.
	Buffer int

	pool *sync.Pool // of *[]ha.Tuple of capacity Batch, for one Run
}

// PipelineResult is what a pipeline run measured.
type PipelineResult struct {
	// Wall is from the first tuple sent to the last output received.
	Wall time.Duration
	// Outputs is the number of tuples that left the last stage.
	Outputs int64
}

// Run generates n tuples with next on the source side (so generation costs
// the same as in the runtime's source), pushes them through the stages and
// waits for the last output. Every goroutine it starts has returned when it
// returns.
func (p Pipeline) Run(ctx context.Context, n int, next func() ha.Tuple) (PipelineResult, error) {
	if len(p.Stages) == 0 {
		return PipelineResult{}, fmt.Errorf("%w: a pipeline needs at least one stage", ErrConfig)
	}
	if p.Batch < 1 {
		return PipelineResult{}, fmt.Errorf("%w: pipeline batch must be ≥ 1, got %d", ErrConfig, p.Batch)
	}
	if p.Buffer < 0 {
		return PipelineResult{}, fmt.Errorf("%w: pipeline buffer must not be negative, got %d", ErrConfig, p.Buffer)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.pool = &sync.Pool{New: func() any { b := make([]ha.Tuple, 0, p.Batch); return &b }}
	chans := make([]chan []ha.Tuple, len(p.Stages)+1)
	for i := range chans {
		chans[i] = make(chan []ha.Tuple, p.Buffer)
	}
	done := make(chan struct{}, len(p.Stages))
	for i, ops := range p.Stages {
		go func() {
			defer func() { done <- struct{}{} }()
			p.stage(ctx, ops, chans[i], chans[i+1])
		}()
	}
	start := time.Now()
	var res PipelineResult
	sink := make(chan struct{})
	go func() {
		defer close(sink)
		for b := range chans[len(chans)-1] {
			res.Outputs += int64(len(b))
			p.put(b)
		}
	}()
	src := chans[0]
	for n > 0 && ctx.Err() == nil {
		k := min(p.Batch, n)
		b := p.get()
		for range k {
			b = append(b, next())
		}
		select {
		case src <- b:
			n -= k
		case <-ctx.Done():
		}
	}
	close(src)
	for range p.Stages {
		<-done
	}
	<-sink
	res.Wall = time.Since(start)
	return res, ctx.Err()
}

// stage runs ops on every batch from in and sends what they emit to out
// in batches of p.Batch, flushing at the end of each input batch.
func (p Pipeline) stage(ctx context.Context, ops []ha.Operator, in <-chan []ha.Tuple, out chan<- []ha.Tuple) {
	defer close(out)
	buf := p.get()
	flush := func() bool {
		if len(buf) == 0 {
			return true
		}
		select {
		case out <- buf:
			buf = p.get()
			return true
		case <-ctx.Done():
			return false
		}
	}
	emits := make([]ha.Emit, len(ops))
	for i := len(ops) - 1; i >= 0; i-- {
		if i == len(ops)-1 {
			emits[i] = func(t ha.Tuple) {
				buf = append(buf, t)
				if len(buf) == p.Batch {
					flush()
				}
			}
		} else {
			next, nextEmit := ops[i+1], emits[i+1]
			emits[i] = func(t ha.Tuple) { next.Process(t, nextEmit) }
		}
	}
	for b := range in {
		for _, t := range b {
			ops[0].Process(t, emits[0])
		}
		p.put(b)
		if !flush() {
			for range in {
				// drain so the upstream stage can finish
			}
			return
		}
	}
}

// get returns an empty batch from the pool.
func (p Pipeline) get() []ha.Tuple { return (*p.pool.Get().(*[]ha.Tuple))[:0] }

// put gives a batch its receiver has read back to the pool.
func (p Pipeline) put(b []ha.Tuple) {
	b = b[:0]
	p.pool.Put(&b)
}

// Source returns a generator of source tuples like a constant-rate source
// of rate tuples per second: keys uniform over keys, values uniform in
// [0, 1), event times 1/rate apart, each with its source id and lineage.
func Source(rate float64, keys int, seed uint64) func() ha.Tuple {
	rng := experiment.Seeded(seed, "node", "peer-source")
	var i int64
	return func() ha.Tuple {
		i++
		at := int64(float64(i) * float64(time.Second) / rate)
		return ha.Tuple{
			Seq: uint64(i), Key: uint32(rng.IntN(keys)), Time: at, Emit: at, Value: rng.Float64(),
			ID:      ha.OutputID{Kind: ha.IDSource, X: i},
			Lineage: ha.SourceLineage(0, i),
		}
	}
}
