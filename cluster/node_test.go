package cluster

import (
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

func TestInbox(t *testing.T) {
	b := newInbox(2)
	b.push(ha.Input{Kind: ha.InputMessage, Msg: &ha.Message{Seq: 1}})
	b.push(ha.Input{Kind: ha.InputPeerDown, Name: "B"})
	b.push(ha.Input{Kind: ha.InputTimer, Name: "t"})
	b.push(ha.Input{Kind: ha.InputMessage, Msg: &ha.Message{Seq: 2}})
	b.push(ha.Input{Kind: ha.InputPeerUp, Name: "B"})
	b.dropMembership()
	got := b.take(nil)
	require.Len(t, got, 3)
	assert.Equal(t, uint64(1), got[0].Msg.Seq)
	assert.Equal(t, ha.InputTimer, got[1].Kind)
	assert.Equal(t, uint64(2), got[2].Msg.Seq)

	// Data beyond the bound blocks its producer until the loop takes; timers never block.
	synctest.Test(t, func(t *testing.T) {
		b := newInbox(2)
		b.push(ha.Input{Kind: ha.InputMessage, Msg: &ha.Message{Seq: 3}})
		b.push(ha.Input{Kind: ha.InputMessage, Msg: &ha.Message{Seq: 4}})
		b.push(ha.Input{Kind: ha.InputTimer, Name: "never blocks"})
		pushed := make(chan struct{})
		go func() {
			b.push(ha.Input{Kind: ha.InputMessage, Msg: &ha.Message{Seq: 5}})
			close(pushed)
		}()
		synctest.Wait()
		select {
		case <-pushed:
			t.Fatal("a data push beyond the bound must wait")
		default:
		}
		assert.Len(t, b.take(nil), 3)
		<-pushed
		assert.Len(t, b.take(nil), 1)
	})

	// Closing releases blocked producers and drops later pushes.
	b.push(ha.Input{Kind: ha.InputMessage})
	b.push(ha.Input{Kind: ha.InputMessage})
	done := make(chan struct{})
	go func() {
		b.push(ha.Input{Kind: ha.InputMessage})
		close(done)
	}()
	b.close()
	<-done
	assert.Zero(t, b.len())
}

func TestHostByOrdinal(t *testing.T) {
	topo := &ha.Topology{Sources: []string{"src"}, Frags: []ha.Fragment{{Name: "B", Hosts: []string{"B", "B.1"}}}, Sink: "sink"}
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"streamha-0", "src", true}, {"streamha-2", "B.1", true}, {"streamha-3", "sink", true},
		{"streamha-4", "", false}, {"streamha", "", false}, {"pod-x", "", false},
	} {
		h, err := hostByOrdinal(topo, tc.name)
		if !tc.ok {
			assert.Error(t, err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, h)
	}
}

func TestCheckOutputFile(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path, err string
	}{
		{"none", "", ""},
		{"new file", filepath.Join(dir, "a.pprof"), ""},
		{"a directory", dir, "is a directory"},
		{"missing directory", filepath.Join(dir, "no", "a.pprof"), "no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkOutputFile(tc.path)
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.err)
		})
	}
}

func TestNodeMainRejectsABadCPUProfilePath(t *testing.T) {
	code := NodeMain([]string{"--host", "A", "--strategy", "none", "--insecure", "--cpuprofile", filepath.Join(t.TempDir(), "no", "a.pprof")})
	assert.Equal(t, 2, code)
}

// TestNodeRefusesToStartWithoutSecret checks that a node without a
// cluster secret does not start unless --insecure is given, and that the
// refusal says what running without one exposes.
func TestNodeRefusesToStartWithoutSecret(t *testing.T) {
	t.Setenv(SecretEnv, "")
	assert.Equal(t, 2, NodeMain([]string{"--host", "A", "--strategy", "none", "--out", t.TempDir()}))
	_, err := newRunner(NodeOptions{Host: "A", Strategy: "none", Out: t.TempDir()})
	require.ErrorIs(t, err, ErrNoSecret)
	assert.Contains(t, err.Error(), "--insecure")
	assert.Contains(t, err.Error(), "forge", "the refusal says what an insecure cluster exposes")
	assert.NoError(t, CheckSecret(nil, true))
	assert.NoError(t, CheckSecret([]byte("a secret of ours"), false))
}
