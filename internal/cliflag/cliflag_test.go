package cliflag_test

import (
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/internal/cliflag"
	_ "github.com/streamha/streamha/strategies/all"
)

func TestSeedTakesEveryExperimentSeed(t *testing.T) {
	var s cliflag.Seed
	assert.Nil(t, s.Value(), "unset: the experiment's seed")
	assert.Empty(t, s.String())
	require.NoError(t, s.Set("18446744073709551615"))
	require.NotNil(t, s.Value())
	assert.Equal(t, uint64(1<<64-1), *s.Value())
	require.NoError(t, s.Set(" 0 "))
	assert.Equal(t, uint64(0), *s.Value())
	assert.Equal(t, "0", s.String())
	for _, bad := range []string{"-1", "x", "18446744073709551616", ""} {
		assert.Error(t, s.Set(bad), bad)
	}
	d := cliflag.SeedOf(1)
	assert.Equal(t, uint64(1), *d.Value())
}

func TestStrategiesKeepTheListAsGiven(t *testing.T) {
	var v string
	fl := pflag.NewFlagSet("t", pflag.ContinueOnError)
	cliflag.AddStrategies(fl, &v, "all")
	require.NoError(t, fl.Parse([]string{"--strategy", " all "}))
	assert.Equal(t, "all", v)
	require.NoError(t, fl.Parse([]string{"--strategy", "passive-standby,amnesia,passive-standby"}))
	ns, err := cliflag.SplitStrategies(v)
	require.NoError(t, err)
	assert.Equal(t, []string{"passive-standby", "amnesia"}, ns)
	require.ErrorContains(t, fl.Parse([]string{"--strategy", "paxos"}), `unknown strategy "paxos"`)
	assert.Equal(t, "passive-standby,amnesia,passive-standby", v, "a refused value changes nothing")
	assert.Contains(t, fl.Lookup("strategy").Usage, "global-checkpoint", "the help lists the registry")
}

func TestOutRefusesTheWrongKindOfPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	var out string
	fl := pflag.NewFlagSet("t", pflag.ContinueOnError)
	cliflag.AddOut(fl, &out, cliflag.OutDir, "", "where")
	require.NoError(t, fl.Parse([]string{"--out", filepath.Join(dir, "new")}), "a directory not yet there")
	require.NoError(t, fl.Parse([]string{"--out", dir}))
	require.ErrorContains(t, fl.Parse([]string{"--out", ""}), "empty path")

	var f string
	fl = pflag.NewFlagSet("t", pflag.ContinueOnError)
	cliflag.AddOut(fl, &f, cliflag.OutFile, "o", "where")
	require.NoError(t, fl.Parse([]string{"-o", file}))
	require.ErrorContains(t, fl.Parse([]string{"-o", dir}), "is a directory, not a file")
}
