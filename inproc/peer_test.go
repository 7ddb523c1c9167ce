package inproc_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/ops"
	"github.com/streamha/streamha/inproc"
)

func stage(t *testing.T, specs ...map[string]map[string]any) []ha.Operator {
	t.Helper()
	var out []ha.Operator
	for _, s := range specs {
		for name, params := range s {
			op, err := ops.New(name, params)
			require.NoError(t, err)
			out = append(out, op)
		}
	}
	return out
}

func TestPipelineRunsTheOperators(t *testing.T) {
	cases := []struct {
		name  string
		batch int
	}{{"tuple at a time", 1}, {"batched", 64}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const n = 10_000
			// count what the filter keeps, to compare with the pipeline's output
			src := inproc.Source(1000, 4, 7)
			kept := 0
			for range n {
				if src().Value > 0.5 {
					kept++
				}
			}
			p := inproc.Pipeline{Batch: tc.batch, Buffer: 4, Stages: [][]ha.Operator{
				stage(t, map[string]map[string]any{"filter": {"value_gt": 0.5}}),
				stage(t, map[string]map[string]any{"map": {"scale": 2}}, map[string]map[string]any{"map": {"scale": 1}}),
			}}
			res, err := p.Run(context.Background(), n, inproc.Source(1000, 4, 7))
			require.NoError(t, err)
			require.Equal(t, int64(kept), res.Outputs)
			require.Positive(t, res.Wall)
		})
	}
}

func TestPipelineRejectsBadConfig(t *testing.T) {
	one := [][]ha.Operator{stage(t, map[string]map[string]any{"map": {"scale": 1}})}
	cases := []struct {
		name string
		p    inproc.Pipeline
		want string
	}{
		{"no stage", inproc.Pipeline{Batch: 1}, "at least one stage"},
		{"zero batch", inproc.Pipeline{Stages: one}, "batch must be ≥ 1"},
		{"negative buffer", inproc.Pipeline{Stages: one, Batch: 1, Buffer: -1}, "buffer must not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.p.Run(context.Background(), 10, inproc.Source(1, 1, 1))
			require.ErrorIs(t, err, inproc.ErrConfig)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestPipelineStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := inproc.Pipeline{Batch: 1, Stages: [][]ha.Operator{stage(t, map[string]map[string]any{"map": {"scale": 1}})}}
	_, err := p.Run(ctx, 1_000_000, inproc.Source(1, 1, 1))
	require.ErrorIs(t, err, context.Canceled)
}
