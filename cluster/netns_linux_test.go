//go:build linux

package cluster

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// requireNetns skips a test that needs network namespaces where they
// cannot be made (not root, no ip command).
func requireNetns(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs real processes in network namespaces")
	}
	if err := NetnsSupported(); err != nil {
		t.Skipf("skipped: %v", err)
	}
}

// withNetns is the launchTest option of a --netns run.
func withNetns(c *LaunchConfig) { c.Netns = true }

// requireNetnsGone checks that nothing a run's netns.json names is left:
// no namespace, link or bridge, and no state file.
func requireNetnsGone(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(NetnsFile(dir))
	require.NoError(t, err, "a --netns run describes its network")
	var st netnsState
	require.NoError(t, json.Unmarshal(b, &st))
	require.NotEmpty(t, st.Namespaces)
	left, err := netnsNames()
	require.NoError(t, err)
	for _, name := range slices.Concat(st.Namespaces, st.Links, []string{st.Bridge}) {
		assert.NotContains(t, left, name, "run %s left %s behind", st.ID, name)
	}
	assert.NoFileExists(t, filepath.Join(netnsStateDir, st.ID+".json"))
}

// readyFiles reads the ready files of a run's directory.
func readyFiles(t *testing.T, dir string) []Ready {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.ready.json"))
	out := make([]Ready, 0, len(files))
	for _, f := range files {
		var rd Ready
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &rd))
		out = append(out, rd)
	}
	return out
}

// processGone reports whether pid has exited (a zombie not yet reaped by
// init counts as gone).
func processGone(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && strings.HasPrefix(strings.TrimSpace(string(b[i+1:])), "Z")
}

// TestNetnsClusterEndToEnd is TestClusterEndToEnd with every host in its
// own network namespace: the nodes find each other through --join and
// --advertise across distinct addresses, B is SIGKILLed, amnesia ends in a
// gap and active standby precise, and neither a process nor a namespace,
// link or bridge is left.
func TestNetnsClusterEndToEnd(t *testing.T) {
	requireNetns(t)
	names := []string{"amnesia"}
	if _, err := strategies.Lookup("active-standby"); err == nil {
		names = append(names, "active-standby")
	}
	cmp := launchTest(t, e2eYAML, names, "an end-to-end cluster secret", withNetns)
	r := cmp.Result
	assert.Contains(t, r.Note, "network namespace")
	assert.Equal(t, []string{"crash B at 2s [signal]"}, r.Faults)
	require.Len(t, r.Runs, len(names))
	for i, run := range r.Runs {
		rec := run.Recovery
		t.Logf("%s: %s/%s missing %d dup %d wrong %d lost %d detect %v recovery %v",
			run.Strategy, rec.Type, rec.Subtype, rec.Missing, rec.Duplicates, rec.Wrong, rec.LostInputs, deref(rec.DetectionMs), deref(rec.RecoveryMs))
		require.NotNil(t, rec.DetectionMs, "%s: the crash must be detected", run.Strategy)
		switch run.Strategy {
		case "amnesia":
			assert.Equal(t, "gap", rec.Type)
			assert.Positive(t, rec.LostInputs)
		case "active-standby":
			assert.Equal(t, "precise", rec.Type)
			assert.Zero(t, rec.Missing)
			assert.Zero(t, rec.Duplicates)
			assert.Zero(t, rec.Wrong)
		}
		// Every node published the data address derived from its own
		// advertised address, and was joined through the sink's.
		var st netnsState
		b, err := os.ReadFile(NetnsFile(cmp.Runs[i].Dir))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &st))
		ready := readyFiles(t, cmp.Runs[i].Dir)
		require.Len(t, ready, len(st.Addrs))
		for _, rd := range ready {
			assert.Equal(t, st.Addrs[rd.Host]+":7946", rd.Gossip, "%s gossips at its own address", rd.Host)
		}
		requireNetnsGone(t, cmp.Runs[i].Dir)
		// --collect finds the coordinator's trace of the SIGKILL in the run's
		// directory and measures from it as the launcher did.
		e, err := experiment.Parse([]byte(e2eYAML), "test")
		require.NoError(t, err)
		col, err := Collect(e, run.Strategy, cmp.Runs[i].Dir, sim.ReferenceTrace)
		require.NoError(t, err)
		crec := col.Result.Runs[0].Recovery
		assert.Equal(t, rec.Type, crec.Type, "%s: --collect classifies as the launcher did", run.Strategy)
		require.NotNil(t, crec.DetectionMs, "%s: --collect measures the detection", run.Strategy)
		assert.InDelta(t, *rec.DetectionMs, *crec.DetectionMs, 1e-6)
		assert.Contains(t, col.Result.Note, "coordinator's trace")
		if t.Failed() {
			logTraceSummary(t, run.Strategy, cmp.Runs[i].Trace)
		}
	}
}

// TestNetnsPartitionDetectedByMemberlist cuts B off from every other host
// in the network for longer than the detector needs: memberlist on the
// other side declares B dead, and B declares them dead, with no node's
// transport dropping anything. A short delay before it is the transport
// layer's, labelled as such.
func TestNetnsPartitionDetectedByMemberlist(t *testing.T) {
	requireNetns(t)
	const yml = `name: netns-partition
seed: 7
duration: 6s
drain: 1s
source: {rate: 500, keys: 4, value: {dist: uniform, min: 0, max: 1}}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 1s, agg: sum}}]}
spares: 1
faults:
  - {at: 1500ms, partition: [[B], [src, A, A.1, B.1, sink]], for: 3500ms}
  - {at: 500ms, delay: {from: A, to: B, extra: 2ms}, for: 500ms}
`
	cmp := launchTest(t, yml, []string{"amnesia"}, "", withNetns)
	run := cmp.Result.Runs[0]
	require.Len(t, cmp.Result.Faults, 2)
	assert.Contains(t, cmp.Result.Faults[0], "[network: ")
	assert.Contains(t, cmp.Result.Faults[1], "[transport layer", "without netem a delay falls back to the transport, and says so")
	assert.Zero(t, run.Extra["fault_dropped"], "no node's transport dropped anything for a fault")
	var cut, heal time.Duration = -1, -1
	var othersSawB, bSawOthers bool
	for _, ev := range cmp.Runs[0].Trace.Events() {
		switch {
		case ev.Kind == ha.EvPartition:
			cut = ev.T
		case ev.Kind == ha.EvHeal:
			heal = ev.T
		case ev.Kind == ha.EvDetect && cut >= 0 && heal < 0:
			othersSawB = othersSawB || (ev.Peer == "B" && ev.Host != "B")
			bSawOthers = bSawOthers || (ev.Host == "B" && ev.Peer != "B")
		}
	}
	require.Positive(t, cut, "the coordinator traced the cut")
	require.Greater(t, heal, cut, "and the heal")
	assert.True(t, othersSawB, "memberlist on the majority side declared B dead during the partition")
	assert.True(t, bSawOthers, "B's memberlist declared the others dead during the partition")
	require.NotNil(t, run.Recovery.DetectionMs, "the partition's detection is measured")
	requireNetnsGone(t, cmp.Runs[0].Dir)
	if t.Failed() {
		logTraceSummary(t, run.Strategy, cmp.Runs[0].Trace)
	}
}

// netnsCoordEnv makes the test binary act as a --netns coordinator that
// runs a long experiment into the directory $netnsCoordEnv names (see
// TestMain), for TestNetnsCleanupAfterCoordinatorKilled to kill.
const netnsCoordEnv = "STREAMHA_NETNS_TEST_COORDINATOR"

// netnsLongYAML runs long enough (60 s) to be stopped midway: 4 hosts
// under amnesia (src, A, A.1, sink).
const netnsLongYAML = `name: netns-long
seed: 1
duration: 60s
drain: 1s
source: {rate: 100, keys: 2}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
spares: 1
`

func netnsCoordinatorMain(out string) int {
	e, err := experiment.Parse([]byte(netnsLongYAML), "test")
	if err != nil {
		log.Print(err)
		return 1
	}
	_, err = Launch(context.Background(), LaunchConfig{
		Experiment: e, Reference: sim.ReferenceTrace, Strategies: []string{"amnesia"}, Exe: os.Args[0], Env: []string{nodeEnv + "=1"},
		Out: out, Profile: ProfileSteady, Netns: true, Log: log.New(os.Stderr, "", 0),
	})
	if err != nil {
		log.Print(err)
		return 1
	}
	return 0
}

// TestNetnsCleanupAfterCoordinatorKilled SIGKILLs a --netns coordinator
// while its nodes run: what it leaves (namespaces, links, bridge, state
// file) is found and removed by the sweep every later --netns start does,
// and no node process survives.
func TestNetnsCleanupAfterCoordinatorKilled(t *testing.T) {
	requireNetns(t)
	out := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), netnsCoordEnv+"="+out)
	cmd.Stderr = testWriter{t}
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Wait until every node of the run is ready (4 hosts: src, A, A.1, sink).
	run := filepath.Join(out, "amnesia")
	deadline := time.After(90 * time.Second)
	for {
		ready, _ := filepath.Glob(filepath.Join(run, "*.ready.json"))
		if len(ready) == 4 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the coordinator exited before its nodes were ready: %v", err)
		case <-deadline:
			_ = cmd.Process.Kill()
			<-done
			t.Fatal("the nodes were not ready within 90 s")
		case <-time.After(50 * time.Millisecond):
		}
	}
	var st netnsState
	b, err := os.ReadFile(NetnsFile(run))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &st))
	ready := readyFiles(t, run)

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	<-done
	left, err := netnsNames()
	require.NoError(t, err)
	assert.Contains(t, left, st.Bridge, "the killed coordinator left its bridge")
	assert.Contains(t, left, st.Namespaces[0], "and its namespaces")
	require.FileExists(t, filepath.Join(netnsStateDir, st.ID+".json"), "and its state file")

	removed, err := SweepStaleNetns()
	require.NoError(t, err)
	assert.Contains(t, removed, "run "+st.ID)
	requireNetnsGone(t, run)
	for _, rd := range ready {
		assert.True(t, processGone(rd.PID), "node %s (pid %d) is gone", rd.Host, rd.PID)
	}
}

// TestNetnsRulesAndBandwidth builds a network without processes: every
// host's egress is limited by tbf at the experiment's bandwidth, a cut
// installs one drop rule per receiving host and sending peer, looked up
// before the local table, and the heal removes exactly those.
func TestNetnsRulesAndBandwidth(t *testing.T) {
	requireNetns(t)
	n, err := openNetns([]string{"src", "A", "B", "sink"}, 1e8, log.New(testWriter{t}, "", 0))
	require.NoError(t, err)
	defer func() { require.NoError(t, n.close()) }()
	rules := func(host string) string {
		out, err := runIP("ip", "", "-n", n.layout.Namespace(host), "rule", "show")
		require.NoError(t, err)
		return out
	}
	qdisc, err := runIP("tc", "", "-n", n.layout.Namespace("A"), "qdisc", "show", "dev", "eth0")
	require.NoError(t, err)
	assert.Contains(t, qdisc, "tbf")
	assert.Contains(t, qdisc, "rate 100Mbit")
	assert.Contains(t, rules("A"), "30000:\tfrom all lookup local")
	assert.NotRegexp(t, `(?m)^0:\s+from all lookup local`, rules("A"), "the partition rules come before the local table")

	require.NoError(t, n.cut(3, [][]string{{"B"}, {"src", "A", "sink"}}))
	a, _ := n.layout.HostAddr("A")
	b, _ := n.layout.HostAddr("B")
	assert.Contains(t, rules("B"), "1003:\tfrom "+a.String()+" blackhole")
	assert.Contains(t, rules("A"), "1003:\tfrom "+b.String()+" blackhole")
	assert.Equal(t, 3, strings.Count(rules("B"), "blackhole"), "B drops what the three others send")
	assert.Equal(t, 1, strings.Count(rules("sink"), "blackhole"), "the sink drops only what B sends")

	require.NoError(t, n.cut(4, [][]string{{"A"}, {"sink"}}))
	require.NoError(t, n.heal(3))
	assert.NotContains(t, rules("B"), "blackhole")
	assert.Equal(t, 1, strings.Count(rules("A"), "blackhole"), "the other partition stays")
	require.NoError(t, n.heal(4))
	for _, h := range []string{"src", "A", "B", "sink"} {
		assert.NotContains(t, rules(h), "blackhole", h)
	}
}

// TestNetnsCleanupOnCancel stops a --netns launch once its nodes are
// ready, as Ctrl-C does: the launch returns context.Canceled and leaves
// no process, namespace, link or bridge.
func TestNetnsCleanupOnCancel(t *testing.T) {
	requireNetns(t)
	e, err := experiment.Parse([]byte(netnsLongYAML), "test")
	require.NoError(t, err)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Launch(ctx, LaunchConfig{
			Experiment: e, Reference: sim.ReferenceTrace, Strategies: []string{"amnesia"}, Exe: os.Args[0], Env: []string{nodeEnv + "=1"},
			Out: out, Profile: ProfileSteady, Netns: true, Log: log.New(testWriter{t}, "", 0),
		})
		done <- err
	}()
	run := filepath.Join(out, "amnesia")
	var ready []string
	for len(ready) < 4 {
		select {
		case err := <-done:
			t.Fatalf("the launch ended before its nodes were ready: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		ready, _ = filepath.Glob(filepath.Join(run, "*.ready.json"))
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	requireNetnsGone(t, run)
	for _, rd := range readyFiles(t, run) {
		assert.True(t, processGone(rd.PID), "node %s (pid %d) is gone", rd.Host, rd.PID)
	}
}
