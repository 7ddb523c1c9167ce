package ha_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// mixedEvents is a trace with deliveries from two sinks interleaved with
// other events, long enough to span several delivery chunks.
func mixedEvents(n int) []ha.Event {
	var evs []ha.Event
	for i := range n {
		at := time.Duration(i) * time.Millisecond
		switch {
		case i%1000 == 7:
			evs = append(evs, ha.Event{T: at, Kind: ha.EvDetect, Host: "A.1", Peer: "A", Note: "n"})
		case i%2500 == 3:
			evs = append(evs, ha.Event{T: at, Kind: ha.EvStats, Host: "B", Stats: &ha.NodeStats{Tuples: int64(i)}})
		default:
			sink := "sink"
			if i > n/2 {
				sink = "sink2"
			}
			evs = append(evs, ha.Event{T: at, Kind: ha.EvDeliver, Host: sink, Tuple: &ha.Tuple{
				Seq: uint64(i), Key: uint32(i % 7), Value: float64(i) / 3, Emit: int64(at) - 1000,
				ID: ha.OutputID{Kind: ha.IDSource, X: int64(i)}, Lineage: ha.SourceLineage(0, int64(i)),
			}})
		}
	}
	return evs
}

// TestTraceKeepsOrderAndContent: a trace gives back every event as it was
// added, deliveries interleaved with the rest in their original places,
// and its views agree with it.
func TestTraceKeepsOrderAndContent(t *testing.T) {
	evs := mixedEvents(10_000) // > 2 chunks of deliveries
	tr := ha.NewTrace(evs...)
	require.Equal(t, len(evs), tr.Len())
	assert.Equal(t, evs, tr.Slice())

	var others, dels int
	for _, e := range evs {
		if e.Kind == ha.EvDeliver {
			d := tr.Deliveries().At(dels)
			assert.Equal(t, e.T, d.T)
			assert.Equal(t, *e.Tuple, d.Tuple)
			dels++
		} else {
			assert.Equal(t, e, tr.Events()[others])
			others++
		}
	}
	assert.Equal(t, dels, tr.Deliveries().Len())
	assert.Len(t, tr.Events(), others)
	last, ok := tr.Deliveries().Last()
	require.True(t, ok)
	assert.Equal(t, evs[len(evs)-1].T, last.T)
	assert.Equal(t, time.Duration(1000), tr.Deliveries().At(5).Latency())

	// Stopping an iteration early is honoured.
	n := 0
	for range tr.All() {
		if n++; n == 3 {
			break
		}
	}
	assert.Equal(t, 3, n)
}

// TestTraceCopiesDeliveredTuples: a delivery's tuple is copied when added,
// so an Env may lend the node's scratch tuple (ha.Env's contract).
func TestTraceCopiesDeliveredTuples(t *testing.T) {
	var tr ha.Trace
	scratch := ha.Tuple{Value: 1, ID: ha.OutputID{X: 1}}
	tr.Add(ha.Event{Kind: ha.EvDeliver, Host: "sink", Tuple: &scratch})
	scratch = ha.Tuple{Value: 2, ID: ha.OutputID{X: 2}}
	tr.Add(ha.Event{Kind: ha.EvDeliver, Host: "sink", Tuple: &scratch})
	ds := tr.Deliveries().Slice()
	require.Len(t, ds, 2)
	assert.Equal(t, 1.0, ds[0].Tuple.Value)
	assert.Equal(t, 2.0, ds[1].Tuple.Value)
}

// TestTraceJSONRoundTrip: a trace marshals as the array of its events and
// reads back identical.
func TestTraceJSONRoundTrip(t *testing.T) {
	evs := mixedEvents(300)
	b, err := json.Marshal(ha.NewTrace(evs...))
	require.NoError(t, err)
	plain, err := json.Marshal(evs)
	require.NoError(t, err)
	assert.JSONEq(t, string(plain), string(b))
	var back ha.Trace
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, evs, back.Slice())
	require.Error(t, json.Unmarshal([]byte(`{"kind":"deliver"}`), &back), "not an array")
}

// TestNilTraceIsEmpty: code reading an absent trace sees no events.
func TestNilTraceIsEmpty(t *testing.T) {
	var tr *ha.Trace
	assert.Zero(t, tr.Len())
	assert.Empty(t, tr.Events())
	assert.Zero(t, tr.Deliveries().Len())
	_, ok := tr.Deliveries().Last()
	assert.False(t, ok)
	assert.Empty(t, tr.Slice())
}

// TestLatencyTraceKeepsLatenciesOnly: a latencies-only trace gives the
// same latencies, in order, as a full trace of the same events, keeps every
// other event, and holds no delivery.
func TestLatencyTraceKeepsLatenciesOnly(t *testing.T) {
	evs := mixedEvents(10_000)
	for i, e := range evs {
		if e.Tuple != nil {
			e.Tuple.Emit = int64(e.T) - int64(i%13)*1000
		}
	}
	full, lat := ha.NewTrace(evs...), ha.NewLatencyTrace()
	for _, e := range evs {
		lat.Add(e)
	}
	want := full.Latencies()
	require.Len(t, want, full.Deliveries().Len())
	assert.Equal(t, want, lat.Latencies())
	assert.Equal(t, full.Events(), lat.Events())
	assert.Zero(t, lat.Deliveries().Len())
	assert.Equal(t, len(full.Events()), lat.Len(), "Len counts what All yields")
	n := 0
	for e := range lat.All() {
		assert.NotEqual(t, ha.EvDeliver, e.Kind)
		n++
	}
	assert.Equal(t, lat.Len(), n)

	// Latencies is a copy: sorting it leaves the trace's order alone.
	got := lat.Latencies()
	slices.Sort(got)
	require.NotEqual(t, want, got)
	assert.Equal(t, want, lat.Latencies())
}
