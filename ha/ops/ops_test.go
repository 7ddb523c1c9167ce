package ops

import (
	"math"
	"testing"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClass(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		class  ha.Class
	}{
		{"filter", map[string]any{"value_gt": 0}, ha.Repeatable},
		{"map", nil, ha.Repeatable},
		{"tumbling", map[string]any{"size": "1s"}, ha.ConvergentCapable},
		{"sliding", map[string]any{"size": "2s", "slide": "1s"}, ha.ConvergentCapable},
		{"running_sum", nil, ha.Deterministic},
		{"hash_chain", nil, ha.Deterministic},
		{"join", map[string]any{"window": "1s"}, ha.Repeatable},
		{"union", map[string]any{}, ha.Arbitrary},
	}
	require.Len(t, tests, len(Names()), "every operator is covered")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := mustNew(t, tt.name, tt.params)
			assert.Equal(t, tt.name, op.Name())
			assert.Equal(t, tt.class, op.Class())
		})
	}
}

func TestCapabilities(t *testing.T) {
	for _, c := range statefulCases {
		op := mustNew(t, c.name, c.params)
		assert.Implements(t, (*ha.Horizon)(nil), op, c.name)
		assert.Implements(t, (*ha.Incremental)(nil), op, c.name)
		assert.Implements(t, (*ha.Sizer)(nil), op, c.name)
	}
	for _, c := range []struct {
		name string
		p    map[string]any
	}{{"tumbling", map[string]any{"size": "1s"}}, {"sliding", map[string]any{"size": "1s", "slide": "1s"}}, {"join", map[string]any{"window": "1s"}}} {
		assert.Implements(t, (*LateCounter)(nil), mustNew(t, c.name, c.p), c.name)
	}
}

func TestDocs(t *testing.T) {
	docs := Docs()
	require.Len(t, docs, len(registry))
	for _, d := range docs {
		assert.NotEmpty(t, d.Doc, d.Name)
		for _, p := range d.Params {
			assert.NotEmpty(t, p.Name, d.Name)
			assert.NotEmpty(t, p.Type, d.Name+"."+p.Name)
			assert.NotEmpty(t, p.Doc, d.Name+"."+p.Name)
		}
	}
	docs[0].Params[0].Name = "mutated"
	assert.NotEqual(t, "mutated", Docs()[0].Params[0].Name, "Docs returns a copy")
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		is     error
		msg    string
	}{
		{"fliter", nil, ErrUnknownOperator, `unknown operator "fliter" (known: filter, map, tumbling, sliding, running_sum, hash_chain, join, union)`},
		{"tumbling", map[string]any{"sise": "1s"}, ErrUnknownParameter, `tumbling: unknown parameter "sise" (known: size, agg)`},
		{"union", map[string]any{"x": 1}, ErrUnknownParameter, `union: unknown parameter "x" (it takes no parameters)`},
		{"hash_chain", map[string]any{"seed": 1}, ErrUnknownParameter, `hash_chain: unknown parameter "seed" (it takes no parameters)`},
		{"tumbling", map[string]any{"size": "-1s"}, ErrInvalidParameter, `tumbling.size: must be a positive duration, got "-1s"`},
		{"tumbling", map[string]any{"size": "0s"}, ErrInvalidParameter, `tumbling.size: must be a positive duration, got "0s"`},
		{"tumbling", map[string]any{"size": 1000}, ErrInvalidParameter, `tumbling.size: must be a duration string with a unit such as "1s" or "250ms", got 1000 (int)`},
		{"tumbling", map[string]any{"size": "1000"}, ErrInvalidParameter, `tumbling.size: must be a positive duration such as "1s" or "250ms", got "1000"`},
		{"tumbling", map[string]any{}, ErrInvalidParameter, `tumbling.size: required (a duration such as "1s")`},
		{"tumbling", map[string]any{"size": "1s", "agg": "median"}, ErrInvalidParameter, `tumbling.agg: must be one of count, sum, avg, min, max, got "median"`},
		{"tumbling", map[string]any{"size": "1s", "agg": 3}, ErrInvalidParameter, `tumbling.agg: must be one of count, sum, avg, min, max, got 3 (int)`},
		{"sliding", map[string]any{"size": "3s", "slide": "2s"}, ErrInvalidParameter, `sliding.size: must be a multiple of slide (2s), got "3s"`},
		{"sliding", map[string]any{"size": "1s"}, ErrInvalidParameter, `sliding.slide: required (a duration such as "1s")`},
		{"sliding", map[string]any{"size": "1h", "slide": "1ms"}, ErrInvalidParameter, `sliding.slide: size/slide must be at most 1000 windows per tuple, got 3600000`},
		{"join", map[string]any{"window": 1.5}, ErrInvalidParameter, `join.window: must be a duration string with a unit such as "1s" or "250ms", got 1.5 (float64)`},
		{"filter", nil, ErrInvalidParameter, `filter.value_gt: filter needs value_gt, value_lt or both`},
		{"filter", map[string]any{"value_gt": "3"}, ErrInvalidParameter, `filter.value_gt: must be a number, got "3"`},
		{"filter", map[string]any{"value_gt": 5, "value_lt": 1.5}, ErrInvalidParameter, `filter.value_lt: must be greater than value_gt (5), got 1.5`},
		{"map", map[string]any{"scale": true}, ErrInvalidParameter, `map.scale: must be a number, got true (bool)`},
		{"map", map[string]any{"offset": math.Inf(1)}, ErrInvalidParameter, `map.offset: must be a finite number of magnitude at most 1e+15, got +Inf`},
		{"map", map[string]any{"scale": 1e308}, ErrInvalidParameter, `map.scale: must be a finite number of magnitude at most 1e+15, got 1e+308`},
		{"filter", map[string]any{"value_gt": math.Inf(1)}, ErrInvalidParameter, `filter.value_gt: must be a finite number of magnitude at most 1e+15, got +Inf`},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			op, err := New(tt.name, tt.params)
			require.Error(t, err)
			assert.Nil(t, op)
			assert.ErrorIs(t, err, tt.is)
			assert.Equal(t, tt.msg, err.Error())
		})
	}
}

func TestNewAcceptsYAMLTypes(t *testing.T) {
	_, err := New("filter", map[string]any{"value_gt": 1, "value_lt": 2.5})
	require.NoError(t, err)
	_, err = New("tumbling", map[string]any{"size": 250 * time.Millisecond})
	require.NoError(t, err, "a typed time.Duration is unambiguous")
	_, err = New("sliding", map[string]any{"size": "1s", "slide": "250ms", "agg": "max"})
	require.NoError(t, err)
}

func TestFilterMap(t *testing.T) {
	in := []ha.Tuple{src(0, 1, 1, -5, 0, 1), src(0, 2, 2, 0, 0, 2), src(1, 3, 3, 4.5, 0, 3), src(0, 4, 4, 10, 0, 4)}
	tests := []struct {
		name   string
		op     string
		params map[string]any
		want   []float64 // values of the emitted tuples
	}{
		{"gt", "filter", map[string]any{"value_gt": 0}, []float64{4.5, 10}},
		{"lt", "filter", map[string]any{"value_lt": 0}, []float64{-5}},
		{"between", "filter", map[string]any{"value_gt": -5, "value_lt": 10}, []float64{0, 4.5}},
		{"identity map", "map", nil, []float64{-5, 0, 4.5, 10}},
		{"scale and offset", "map", map[string]any{"scale": 2, "offset": 1.5}, []float64{-8.5, 1.5, 10.5, 21.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := feed(mustNew(t, tt.op, tt.params), in)
			var got []float64
			for _, o := range out {
				got = append(got, o.Value)
				// everything but the value is the input's
				var orig ha.Tuple
				for _, i := range in {
					if i.ID == o.ID {
						orig = i
					}
				}
				orig.Value = o.Value
				assert.Equal(t, orig, o)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestUnionFollowsArrival(t *testing.T) {
	in := []ha.Tuple{src(1, 1, 5, 1, 1, 1), src(0, 1, 1, 2, 0, 1), src(1, 2, 3, 3, 1, 2), src(0, 3, 9, 4, 0, 2)}
	out := feed(mustNew(t, "union", nil), in)
	require.Len(t, out, len(in))
	for i := range in {
		want := in[i]
		want.Stream = 0
		assert.Equal(t, want, out[i])
	}
}

func TestStatelessSnapshot(t *testing.T) {
	params := map[string]map[string]any{"filter": {"value_gt": 0}}
	for _, name := range []string{"filter", "map", "union"} {
		op := mustNew(t, name, params[name])
		b, err := op.Snapshot()
		require.NoError(t, err)
		assert.Empty(t, b)
		require.NoError(t, op.Restore(nil))
		require.NoError(t, op.Restore(b))
		assert.ErrorIs(t, op.Restore([]byte{1}), ErrCorruptState)
	}
}

func TestStatelessNoAlloc(t *testing.T) {
	tp := src(0, 1, 1, 5, 0, 1)
	n := 0
	emit := func(ha.Tuple) { n++ }
	for _, c := range []struct {
		name string
		p    map[string]any
	}{{"filter", map[string]any{"value_gt": 0}}, {"map", map[string]any{"scale": 2}}, {"union", nil}} {
		op := mustNew(t, c.name, c.p)
		allocs := testing.AllocsPerRun(1000, func() { op.Process(tp, emit) })
		assert.Zero(t, allocs, c.name)
	}
}
