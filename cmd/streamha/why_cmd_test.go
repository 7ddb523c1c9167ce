package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWhyCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errOut := runCLI(t, "run", "--config", "../../why/testdata/gap.yaml", "--out", dir)
	require.Equal(t, 0, code, out+errOut)
	// Every anomaly is in the file result.json names.
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	require.NoError(t, err)
	var res struct {
		Runs []struct {
			Anomalies string
			Recovery  struct{ Wrong, Missing, Duplicates int }
		}
	}
	require.NoError(t, json.Unmarshal(b, &res))
	require.Len(t, res.Runs, 1)
	assert.Equal(t, "anomalies-amnesia.jsonl", res.Runs[0].Anomalies)
	lines, err := os.ReadFile(filepath.Join(dir, res.Runs[0].Anomalies))
	require.NoError(t, err)
	rec := res.Runs[0].Recovery
	assert.Equal(t, rec.Wrong+rec.Missing+rec.Duplicates, strings.Count(string(lines), "\n"))
	assert.Contains(t, string(lines), `{"id":"k00|w=3s","status":"wrong"`)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an id", []string{"k03|w=4s"}, 0, "k03|w=4s under amnesia is correct"},
		{"first wrong", []string{"--first-wrong"}, 0, "k00|w=3s under amnesia is wrong"},
		{"no missing output", []string{"--missing"}, 2, "no missing output"},
		{"id and a flag", []string{"k03|w=4s", "--missing"}, 2, "not both"},
		{"nothing to explain", nil, 2, "give an OUTPUT-ID"},
		{"unknown id", []string{"k42|w=1s"}, 2, `no output "k42|w=1s"`},
		{"another strategy", []string{"--first-wrong", "--strategy", "passive-standby"}, 2, "holds runs of amnesia only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"why", "--run", dir}, tt.args...)...)
			assert.Equal(t, tt.code, code, out+errOut)
			assert.Contains(t, out+errOut, tt.want)
		})
	}
	code, out, errOut = runCLI(t, "why", "--first-wrong", "--json", "--run", dir)
	require.Equal(t, 0, code, errOut)
	var st struct {
		ID, Verdict string
		Hops        []struct{ Host, Fate string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	assert.Equal(t, "k00|w=3s", st.ID)
	assert.Equal(t, "wrong", st.Verdict)
	assert.NotEmpty(t, st.Hops)
	code, _, errOut = runCLI(t, "why", "x", "--run", filepath.Join(dir, "nowhere"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--run")
}

// TestWhyPicksTheOneStrategyThatDidNotRecoverPrecisely runs why without
// --strategy on runs of several strategies: with one anomalous strategy
// it explains that one and says so; otherwise it asks for --strategy and
// names the verdicts.
func TestWhyPicksTheOneStrategyThatDidNotRecoverPrecisely(t *testing.T) {
	tests := []struct {
		name, strategies string
		code             int
		want             string
	}{
		{"one anomalous", "amnesia,active-standby", 0, "explaining amnesia (gap), the only strategy"},
		{"all precise", "active-standby,passive-standby", 2, "all precise: choose one with --strategy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			code, out, errOut := runCLI(t, "run", "--config", "../../why/testdata/gap.yaml", "--strategy", tt.strategies, "--out", dir)
			require.Equal(t, 0, code, out+errOut)
			code, out, errOut = runCLI(t, "why", "k00|w=3s", "--run", dir)
			assert.Equal(t, tt.code, code, out+errOut)
			assert.Contains(t, errOut, tt.want)
		})
	}
}
