package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/strategies"
)

// TestCommonFlagsAreShared walks every command and checks that each
// common flag it has comes from its one definition in flags.go: the type
// that validates it and the frame of its help text. `streamha node` is the
// exception: its flags are the node process's own (cluster.BindNodeFlags,
// which the launcher's processes parse without this command).
func TestCommonFlagsAreShared(t *testing.T) {
	root := newRoot(io.Discard, io.Discard)
	uses := map[string]int{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Name() == "node" {
			return
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			where := c.CommandPath() + " --" + f.Name
			switch f.Name {
			case "config":
				assert.True(t, strings.HasPrefix(f.Usage, "experiment YAML file or built-in example name (default: "), where)
			case "strategy":
				switch f.Value.(type) {
				case strategyList:
					assert.Contains(t, f.Usage, strings.Join(strategies.Names(false), ", "), "%s lists the registry", where)
				case oneStrategy:
				default:
					assert.Fail(t, "not the shared --strategy", where)
				}
			case "seed":
				assert.IsType(t, &seedFlag{}, f.Value, where)
			case "out":
				assert.IsType(t, outPath{}, f.Value, where)
			case "json":
				assert.True(t, strings.HasPrefix(f.Usage, "print ") && strings.HasSuffix(f.Usage, " as JSON on stdout instead of the text"), where)
			case "force":
				assert.True(t, strings.HasPrefix(f.Usage, "replace "), where)
			default:
				return
			}
			uses[f.Name]++
		})
	}
	walk(root)
	for _, name := range []string{"config", "strategy", "seed", "out", "json", "force"} {
		assert.GreaterOrEqual(t, uses[name], 2, "--%s is common to several commands", name)
	}
}

// TestCommonFlagValues: each shared flag refuses a bad value while the
// flags are parsed, as a usage error naming the flag, in every command.
func TestCommonFlagValues(t *testing.T) {
	file := writeFile(t, "a-file", "x\n")
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--seed", "-1", "--no-out"}, `invalid argument "-1" for "--seed" flag: want a whole number from 0 to 18446744073709551615`},
		{[]string{"sweep", "--seed", "x"}, `"--seed" flag: want a whole number`},
		{[]string{"soak", "--seed", "18446744073709551616"}, `"--seed" flag: want a whole number`},
		{[]string{"cluster", "--strategy", "paxos"}, `"--strategy" flag: unknown strategy "paxos"`},
		{[]string{"soak", "--strategy", "amnesia,paxos"}, `"--strategy" flag: unknown strategy "paxos"`},
		{[]string{"sweep", "--strategy", ","}, `"--strategy" flag: no strategy named`},
		{[]string{"why", "--strategy", "paxos"}, `"--strategy" flag: unknown strategy "paxos"`},
		{[]string{"run", "--out", file}, `"--out" flag: ` + file + ` is a file, not a directory`},
		{[]string{"chain-sweep", "--out", ""}, `"--out" flag: empty path`},
		{[]string{"trace", "export", "x", "-o", dir}, `is a directory, not a file`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			assert.Equal(t, exitUsage, code, errOut)
			assert.Contains(t, errOut, tc.want)
		})
	}
}

func TestSeedFlagTakesEveryExperimentSeed(t *testing.T) {
	var s seedFlag
	assert.Nil(t, s.value(), "unset: the experiment's seed")
	assert.Empty(t, s.String())
	require.NoError(t, s.Set("18446744073709551615"))
	require.NotNil(t, s.value())
	assert.Equal(t, uint64(1<<64-1), *s.value())
	require.NoError(t, s.Set(" 0 "))
	assert.Equal(t, uint64(0), *s.value())
	assert.Equal(t, "0", s.String())
}

func TestStrategyFlagKeepsTheListAsGiven(t *testing.T) {
	var v string
	l := strategyList{&v}
	require.NoError(t, l.Set(" all "))
	assert.Equal(t, "all", v)
	require.NoError(t, l.Set("passive-standby,amnesia"))
	ns, err := parseStrategyList(v)
	require.NoError(t, err)
	assert.Equal(t, []string{"passive-standby", "amnesia"}, ns)
	require.Error(t, l.Set("paxos"))
	assert.Equal(t, "passive-standby,amnesia", v, "a refused value changes nothing")

	var out string
	require.NoError(t, outPath{&out, outDir}.Set(filepath.Join(t.TempDir(), "new")), "a directory not yet there")
}
