package cluster

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
)

func TestFaultLayerRules(t *testing.T) {
	tests := []struct {
		name                           string
		rules                          FaultRules
		drop, blocked, stalled, gossip bool
		extra                          time.Duration
	}{
		{name: "no rules"},
		{name: "blocked", rules: FaultRules{Block: []string{"B"}}, drop: true, blocked: true, gossip: true},
		{name: "another host blocked", rules: FaultRules{Block: []string{"C"}}},
		{name: "stalled", rules: FaultRules{Stall: []string{"B"}}, stalled: true, gossip: true},
		{name: "certain loss", rules: FaultRules{Loss: []LinkLoss{{To: "B", P: 1}}}, drop: true},
		{name: "delays add up", rules: FaultRules{Delay: []LinkDelay{{Extra: time.Millisecond}, {To: "B", Extra: 2 * time.Millisecond}, {To: "C", Extra: time.Second}}},
			extra: 3 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultLayer()
			_, changed := f.stalled("B")
			f.set(tc.rules)
			select {
			case <-changed:
			default:
				t.Fatal("set did not signal the change")
			}
			drop, extra := f.outbound("B")
			assert.Equal(t, tc.drop, drop, "outbound drop")
			assert.Equal(t, tc.extra, extra, "outbound extra delay")
			assert.Equal(t, tc.blocked, f.blocked("B"), "blocked")
			on, _ := f.stalled("B")
			assert.Equal(t, tc.stalled, on, "stalled")
			assert.Equal(t, tc.gossip, f.gossipCut("B"), "gossip cut")
			assert.Equal(t, tc.rules, f.get())
		})
	}
}

func TestProfilerEndpointsNeedTheControlToken(t *testing.T) {
	r := &runner{log: log.New(io.Discard, "", 0), met: &nodeMetrics{reg: prometheus.NewRegistry()}}
	k := DeriveKeys([]byte("a cluster secret"))
	tests := []struct {
		name string
		keys Keys
		sign bool
		want int
	}{
		{name: "no secret", want: http.StatusOK},
		{name: "secret, no token", keys: k, want: http.StatusUnauthorized},
		{name: "secret and token", keys: k, sign: true, want: http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/debug/pprof/cmdline", nil)
			if tc.sign {
				signRequest(req, tc.keys, nil, time.Now())
			}
			w := httptest.NewRecorder()
			r.handler(tc.keys).ServeHTTP(w, req)
			assert.Equal(t, tc.want, w.Code)
		})
	}
}
