package why_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/why"

	_ "github.com/streamha/streamha/activestandby"
	_ "github.com/streamha/streamha/upstreambackup"
)

func rerun(t *testing.T, file, strategy string) *why.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	require.NoError(t, err)
	e, err := experiment.Parse(b, file)
	require.NoError(t, err)
	r, err := why.Rerun(e, strategy)
	require.NoError(t, err)
	return r
}

// story tells the story of id (or of the first anomaly pick chooses) and
// checks that the terminal and JSON forms say the same.
func story(t *testing.T, r *why.Run, id string) (*why.Story, string) {
	t.Helper()
	st, err := r.Story(id)
	require.NoError(t, err)
	var out bytes.Buffer
	st.Write(&out)
	b, err := json.Marshal(st)
	require.NoError(t, err)
	var back why.Story
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, st.Verdict, back.Verdict)
	assert.Equal(t, st.Summary, back.Summary)
	assert.Len(t, back.Hops, len(st.Hops))
	assert.Contains(t, out.String(), st.Summary)
	return st, out.String()
}

func TestWrongOutputLacksTheTuplesTheCrashedNodeHeld(t *testing.T) {
	r := rerun(t, "gap.yaml", "amnesia")
	id, err := r.FirstWrong()
	require.NoError(t, err)
	assert.Equal(t, "k00|w=3s", id)
	st, text := story(t, r, id)
	assert.Equal(t, "wrong", st.Verdict)
	require.NotNil(t, st.Lineage)
	require.NotNil(t, st.RefLineage)
	// The restarted B.1 saw only the window's tail: a contiguous run of
	// the failure-free lineage that ends where it ends.
	assert.Less(t, st.Lineage.Count, st.RefLineage.Count)
	assert.Equal(t, st.RefLineage.Last, st.Lineage.Last)
	assert.Greater(t, st.Lineage.FromMs, 3400.0, "every tuple it holds arrived after the crash at 3.4 s")
	assert.Equal(t, "B.1", st.Lineage.MadeBy)
	assert.Equal(t, "B", st.RefLineage.MadeBy)
	assert.Contains(t, text, "lacks 66 source tuples of the failure-free lineage")
	assert.Contains(t, text, "crash of B")
	assert.Contains(t, text, "B.1 took over fragment B from B at epoch 1")
	assert.Contains(t, st.Summary, "made by B.1")
	require.Len(t, st.Hops, 2)
	assert.Equal(t, uint64(1), st.Hops[0].Epoch)
	assert.Equal(t, "accepted by C", st.Hops[0].Fate)
}

func TestDuplicateNamesTheReplayThatMadeTheSecondCopy(t *testing.T) {
	r := rerun(t, "repeating.yaml", "upstream-backup")
	id, err := r.FirstDuplicate()
	require.NoError(t, err)
	st, text := story(t, r, id)
	assert.Equal(t, "duplicate", st.Verdict)
	require.Len(t, st.Delivered, 2)
	assert.Equal(t, []string{"correct", "duplicate"}, []string{st.Delivered[0].Status, st.Delivered[1].Status})
	assert.Len(t, st.Expected, 1)
	assert.Contains(t, st.Summary, "emitted again by B.1")
	assert.Contains(t, st.Summary, `after "A replays to B.1 from seq 0"`)
	assert.Contains(t, text, "delivered 2 times (failure-free: 1)")
	assert.Equal(t, st.RefLineage.First, st.Lineage.First, "both copies reflect the same source tuple")
}

func TestMissingOutputWasDroppedAsADuplicateSeq(t *testing.T) {
	r := rerun(t, "nofence.yaml", "amnesia")
	id, err := r.FirstMissing()
	require.NoError(t, err)
	st, text := story(t, r, id)
	assert.Equal(t, "missing", st.Verdict)
	assert.Empty(t, st.Delivered)
	assert.Len(t, st.Expected, 1)
	assert.Contains(t, st.Summary, "dropped by C as a duplicate seq")
	assert.Contains(t, st.Summary, "(dup_dropped)")
	assert.Contains(t, text, "B resumed")
	assert.Contains(t, text, "C dup_dropped")
	var b1 *why.Hop
	for i := range st.Hops {
		if st.Hops[i].Host == "B.1" {
			b1 = &st.Hops[i]
		}
	}
	require.NotNil(t, b1, "the new primary emitted it")
	assert.Equal(t, uint64(1), b1.Epoch)
}

func TestCorrectOutputHasNoDifferenceButItsMaker(t *testing.T) {
	r := rerun(t, "gap.yaml", "amnesia")
	st, text := story(t, r, "k03|w=4s")
	assert.Equal(t, "correct", st.Verdict)
	assert.Equal(t, []string{"made by B.1 (failure-free: B)"}, st.Differences)
	assert.Equal(t, st.RefLineage.First, st.Lineage.First)
	assert.Equal(t, st.RefLineage.Count, st.Lineage.Count)
	assert.Contains(t, text, "delivered (failure-free run)")
}

func TestUnknownIDAndNoAnomalyAreUsageErrors(t *testing.T) {
	r := rerun(t, "gap.yaml", "amnesia")
	_, err := r.Story("k99|w=1s")
	require.ErrorIs(t, err, why.ErrUsage)
	assert.Contains(t, err.Error(), "k99|w=1s")
	_, err = r.FirstDuplicate()
	require.ErrorIs(t, err, why.ErrUsage)
	assert.Contains(t, err.Error(), "no duplicate output")
}

func TestLoadChecksTheRunDirectory(t *testing.T) {
	b, err := os.ReadFile("testdata/gap.yaml")
	require.NoError(t, err)
	e, err := experiment.Parse(b, "gap.yaml")
	require.NoError(t, err)
	cmp, err := sim.Compare(e, []string{"amnesia"})
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(v any) {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "result.json"), b, 0o644))
	}
	write(cmp.Result)
	r, err := why.Load(dir, "")
	require.NoError(t, err)
	assert.Equal(t, "amnesia", r.Strategy)

	_, err = why.Load(dir, "passive-standby")
	require.ErrorIs(t, err, why.ErrUsage)
	assert.Contains(t, err.Error(), "holds runs of amnesia only")

	// A result that the rerun does not reproduce is refused.
	cmp.Result.Runs[0].Recovery.Wrong++
	write(cmp.Result)
	_, err = why.Load(dir, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "differs from")

	cmp.Result.Mode = "cluster"
	write(cmp.Result)
	_, err = why.Load(dir, "")
	require.ErrorIs(t, err, why.ErrUsage)
	assert.Contains(t, err.Error(), "simulated runs only")

	_, err = why.Load(filepath.Join(dir, "nowhere"), "")
	require.ErrorIs(t, err, why.ErrUsage)
}

// TestWrongOutputOfAChainNamesWhereTheOrderChanged: a copy with the same
// source tuples as the failure-free one but another value is traced back
// to the first step at which the host that made it took the key's inputs
// in another order.
func TestWrongOutputOfAChainNamesWhereTheOrderChanged(t *testing.T) {
	r := rerun(t, "reorder.yaml", "active-standby")
	id, err := r.FirstWrong()
	require.NoError(t, err)
	st, text := story(t, r, id)
	assert.Equal(t, "wrong", st.Verdict)
	require.NotNil(t, st.Lineage)
	require.NotNil(t, st.RefLineage)
	assert.Equal(t, st.RefLineage.Count, st.Lineage.Count, "no input lost")
	require.NotNil(t, st.Reordered)
	ro := st.Reordered
	assert.Equal(t, "A.1", ro.Host)
	assert.NotEqual(t, ro.RefNewest, ro.Newest)
	assert.NotEqual(t, id, ro.ID, "the order changed at an earlier step")
	assert.Regexp(t, `^k0\d#\d+$`, ro.ID)
	assert.GreaterOrEqual(t, ro.TMs, 1200.0, "not before the delay began")
	assert.Less(t, ro.TMs, 1400.0, "before the crash")
	assert.Contains(t, st.Differences[0], "A.1 added the key's inputs in another order from "+ro.ID)
	assert.Contains(t, st.Summary, ro.ID)
	assert.Contains(t, text, "made by A.1 (failure-free: A)")

	// A correct output of the same key before the delay has no reorder.
	ok, _ := story(t, r, id[:4]+"1")
	assert.Equal(t, "correct", ok.Verdict)
	assert.Nil(t, ok.Reordered)
}
