package inproc_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/inproc"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"

	_ "github.com/streamha/streamha/activestandby"
	_ "github.com/streamha/streamha/passivestandby"
	_ "github.com/streamha/streamha/upstreambackup"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The runs below go through synctest.Test: the runtime's goroutines,
// mailboxes and timers live in a bubble whose clock moves only when every
// goroutine waits, so a crash "at 120 ms" comes after exactly 120 ms of
// source output however loaded the machine is, and no assertion depends on
// how fast the host runs. What real cores cost is measured by
// BenchmarkRuntimeVsPeer (cmd/streamha) and `streamha bench`, not here.

// mapQuery is a repeatable query whose every source tuple reaches the sink,
// so what was delivered can be checked tuple by tuple.
const mapQuery = `name: inproc
seed: 3
duration: 300ms
drain: 1s
source: {rate: 4000, keys: 8, batch: 1ms}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{map: {scale: 1}}]}
`

func config(t *testing.T, yaml, strategy string) inproc.Config {
	t.Helper()
	e, err := experiment.Parse([]byte(yaml), "test")
	require.NoError(t, err)
	st, err := strategies.Build(strategy, nil)
	require.NoError(t, err)
	sc, err := sim.ConfigFor(e, st, true)
	require.NoError(t, err)
	build := func() (ha.Strategy, error) { return strategies.Build(strategy, nil) }
	return inproc.Config{Seed: sc.Seed, Topology: sc.Topology, NewStrategy: build, Source: sc.Source,
		End: sc.End, StopWhenDrained: true, DetectAfter: 50 * time.Millisecond}
}

// expected is the number of source tuples of mapQuery, from the simulator.
func expected(t *testing.T) int {
	t.Helper()
	e, err := experiment.Parse([]byte(mapQuery), "test")
	require.NoError(t, err)
	st, err := strategies.Build("none", nil)
	require.NoError(t, err)
	sc, err := sim.ConfigFor(e, st, true)
	require.NoError(t, err)
	out, err := sim.Run(sc)
	require.NoError(t, err)
	n, _ := sourceIDs(out.Trace)
	require.Greater(t, n, 1000)
	return n
}

// sourceIDs is the number of distinct source ids the sink received and the number of deliveries.
func sourceIDs(trace *ha.Trace) (distinct, deliveries int) {
	seen := map[int64]bool{}
	for _, d := range trace.Deliveries().All() {
		deliveries++
		seen[d.Tuple.ID.X] = true
	}
	return len(seen), deliveries
}

func TestRunDeliversEverySourceTupleOnce(t *testing.T) {
	for _, name := range []string{"none", "passive-standby", "active-standby", "upstream-backup"} {
		t.Run(name, func(t *testing.T) {
			want := expected(t)
			synctest.Test(t, func(t *testing.T) {
				cfg := config(t, mapQuery, name)
				out, err := inproc.Run(context.Background(), cfg)
				require.NoError(t, err)
				distinct, deliveries := sourceIDs(out.Trace)
				require.Equal(t, want, distinct, "every source tuple, as in the simulator")
				require.Equal(t, want, deliveries, "no duplicates reach the sink")
				require.Less(t, out.Wall, cfg.End, "the run stopped once drained, before its end")
				require.GreaterOrEqual(t, out.Wall, cfg.Source.Duration, "not before the sources were done")
				require.Positive(t, out.LastData)
				require.LessOrEqual(t, out.LastData, out.Wall)
				var stats int
				for _, e := range out.Trace.Events() {
					if e.Kind == ha.EvStats {
						stats++
					}
				}
				require.Equal(t, len(cfg.Topology.Hosts()), stats, "one stats event per host")
			})
		})
	}
}

func TestCrashAmnesiaLosesInputPassiveStandbyDoesNot(t *testing.T) {
	cases := []struct {
		strategy string
		lossy    bool
	}{
		{"amnesia", true},
		{"passive-standby", false},
	}
	for _, tc := range cases {
		t.Run(tc.strategy, func(t *testing.T) {
			want := expected(t)
			synctest.Test(t, func(t *testing.T) {
				const crashAt = 120 * time.Millisecond
				cfg := config(t, mapQuery, tc.strategy)
				cfg.Crashes = []inproc.Crash{{At: crashAt, Host: "A"}}
				out, err := inproc.Run(context.Background(), cfg)
				require.NoError(t, err)
				distinct, _ := sourceIDs(out.Trace)
				// The crash, then the detection, then the takeover, in that order.
				var crash, takeover []ha.Event
				for _, e := range out.Trace.Events() {
					switch e.Kind {
					case ha.EvCrash:
						crash = append(crash, e)
					case ha.EvTakeover:
						takeover = append(takeover, e)
					}
				}
				require.Len(t, crash, 1)
				require.Equal(t, "A", crash[0].Host)
				require.Equal(t, crashAt, crash[0].T, "the crash happens when it was scheduled")
				require.NotEmpty(t, takeover, "a replica took over")
				require.GreaterOrEqual(t, takeover[0].T, crashAt+cfg.DetectAfter, "no takeover before the crash is detected")
				if tc.lossy {
					require.Less(t, distinct, want, "amnesia restarts empty and loses what was in flight during detection")
				} else {
					require.Equal(t, want, distinct, "passive standby replays everything after its checkpoint")
				}
			})
		})
	}
}

func TestRunStopsAtEndAndOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config(t, mapQuery, "none")
		cfg.StopWhenDrained = false
		cfg.End = 100 * time.Millisecond
		out, err := inproc.Run(context.Background(), cfg)
		require.NoError(t, err)
		require.Equal(t, cfg.End, out.Wall, "the run stops at its end, not before the sources are done")
	})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := inproc.Run(ctx, config(t, mapQuery, "none"))
	require.ErrorIs(t, err, context.Canceled)
}

func TestRunRejectsBadConfig(t *testing.T) {
	good := config(t, mapQuery, "none")
	cases := []struct {
		name string
		edit func(*inproc.Config)
		want string
	}{
		{"no topology", func(c *inproc.Config) { c.Topology = nil }, "topology and strategy constructor are required"},
		{"no end", func(c *inproc.Config) { c.End = 0 }, "end must be positive"},
		{"negative detection", func(c *inproc.Config) { c.DetectAfter = -1 }, "detect_after must not be negative"},
		{"unknown crash host", func(c *inproc.Config) { c.Crashes = []inproc.Crash{{Host: "Z"}} }, `unknown host "Z"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			_, err := inproc.Run(context.Background(), c)
			require.ErrorIs(t, err, inproc.ErrConfig)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
