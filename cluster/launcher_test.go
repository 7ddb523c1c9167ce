package cluster

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// TestScheduleNetworkFaults checks how the launcher turns partition, delay
// and loss faults into per-node rules on the control endpoints, with the
// rules of overlapping faults merged and the secret's bearer token sent.
func TestScheduleNetworkFaults(t *testing.T) {
	const secret = "schedule secret"
	var mu sync.Mutex
	posted := map[string][]FaultRules{}
	ps := map[string]*proc{}
	auth := newControlAuth(DeriveKeys([]byte(secret)), time.Now)
	for _, h := range []string{"A", "B", "C"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if auth.check(r) != nil {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			var fr FaultRules
			require.NoError(t, json.NewDecoder(r.Body).Decode(&fr))
			mu.Lock()
			posted[h] = append(posted[h], fr)
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		defer srv.Close()
		ps[h] = &proc{host: h, ready: Ready{Host: h, Metrics: strings.TrimPrefix(srv.URL, "http://")}}
	}
	l := &launcher{cfg: LaunchConfig{Secret: []byte(secret)}}
	var events []ha.Event
	acts := l.schedule([]experiment.Fault{
		{At: 1 * time.Second, Kind: experiment.FaultPartition, Groups: [][]string{{"A"}, {"B", "C"}}, For: 2 * time.Second},
		{At: 2 * time.Second, Kind: experiment.FaultDelay, From: "A", To: "B", Delay: 30 * time.Millisecond, For: 2 * time.Second},
		{At: 5 * time.Second, Kind: experiment.FaultLoss, To: "C", Loss: 0.5, For: time.Second},
	}, ps, func(e ha.Event) { events = append(events, e) }, false)
	var ats []time.Duration
	for _, a := range acts {
		ats = append(ats, a.at)
		require.NoError(t, a.do())
	}
	assert.Equal(t, []time.Duration{1e9, 2e9, 3e9, 4e9, 5e9, 6e9}, ats, "actions in time order")

	delay := LinkDelay{To: "B", Extra: 30 * time.Millisecond}
	assert.Equal(t, []FaultRules{
		{Block: []string{"B", "C"}},                            // partition starts
		{Block: []string{"B", "C"}, Delay: []LinkDelay{delay}}, // delay added, merged
		{Delay: []LinkDelay{delay}},                            // partition heals
		{},                                                     // delay ends
		{Loss: []LinkLoss{{To: "C", P: 0.5}}},                  // loss from every host
		{},
	}, posted["A"])
	assert.Equal(t, []FaultRules{{Block: []string{"A"}}, {}, {Loss: []LinkLoss{{To: "C", P: 0.5}}}, {}}, posted["B"])
	require.Len(t, events, 2)
	assert.Equal(t, ha.EvPartition, events[0].Kind)
	assert.Equal(t, ha.EvHeal, events[1].Kind)
	assert.Equal(t, "[[A] [B C]]", events[0].Note, "the same note as the simulator's")
}

func TestReadTraceTolerant(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/x.trace.jsonl"
	good := `{"t":1,"kind":"deliver"}` + "\n" + `{"t":2,"kind":"stats"}` + "\n"
	for _, tc := range []struct {
		name    string
		content string
		n       int
		err     bool
	}{
		{"complete", good, 2, false},
		{"partial last line (SIGKILL)", good + `{"t":3,"ki`, 2, false},
		{"corrupt middle line", `{"t":1,"kind":"deliver"}` + "\n" + "garbage\n" + good, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, writeFile(path, tc.content))
			tr, err := ReadTraceTolerant(path)
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, tr, tc.n)
		})
	}
	// Deliveries as a node writes them are read back whole, each with its
	// own tuple.
	var b []byte
	for i := range 3 {
		e := ha.Event{T: time.Duration(i), Kind: ha.EvDeliver, Host: "sink",
			Tuple: &ha.Tuple{Seq: uint64(i), Value: float64(i) / 3, ID: ha.OutputID{X: int64(i)}, Lineage: ha.Lineage{N: 1, Hash: 7}}}
		var ok bool
		b, ok = ha.AppendDeliveryJSON(b, &e)
		require.True(t, ok)
	}
	require.NoError(t, writeFile(path, string(b)))
	dels, err := ReadTraceTolerant(path)
	require.NoError(t, err)
	require.Len(t, dels, 3)
	for i, e := range dels {
		assert.Equal(t, "sink", e.Host)
		assert.Equal(t, ha.Tuple{Seq: uint64(i), Value: float64(i) / 3, ID: ha.OutputID{X: int64(i)}, Lineage: ha.Lineage{N: 1, Hash: 7}}, *e.Tuple)
	}

	tr, err := ReadTraceTolerant(dir + "/missing.jsonl")
	assert.NoError(t, err)
	assert.Nil(t, tr)
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
