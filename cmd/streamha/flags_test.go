package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"

	"github.com/streamha/streamha/internal/cliflag"
	"github.com/streamha/streamha/strategies"
)

// TestCommonFlagsAreShared walks every command and checks that each
// common flag it has comes from its one definition in internal/cliflag:
// the type that validates it and the frame of its help text (`streamha
// node`'s come from cluster.BindNodeFlags, which uses the same ones).
func TestCommonFlagsAreShared(t *testing.T) {
	root := newRoot(io.Discard, io.Discard)
	uses := map[string]int{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			where := c.CommandPath() + " --" + f.Name
			switch f.Name {
			case "config":
				assert.True(t, strings.HasPrefix(f.Usage, cliflag.ConfigUsage+" (default: "), where)
			case "strategy":
				switch f.Value.(type) {
				case cliflag.StrategyList:
					assert.Contains(t, f.Usage, strings.Join(strategies.Names(false), ", "), "%s lists the registry", where)
				case cliflag.OneStrategy:
				default:
					assert.Fail(t, "not the shared --strategy", where)
				}
			case "seed":
				assert.IsType(t, &cliflag.Seed{}, f.Value, where)
			case "out":
				assert.IsType(t, cliflag.OutPath{}, f.Value, where)
			case "json":
				assert.True(t, strings.HasPrefix(f.Usage, cliflag.JSONUsage) && strings.HasSuffix(f.Usage, cliflag.JSONUsageEnd), where)
			case "force":
				assert.True(t, strings.HasPrefix(f.Usage, cliflag.ForceUsage), where)
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
		{[]string{"node", "--seed", "-3"}, `"--seed" flag: want a whole number`},
		{[]string{"node", "--strategy", "paxos"}, `"--strategy" flag: unknown strategy "paxos"`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			assert.Equal(t, exitUsage, code, errOut)
			assert.Contains(t, errOut, tc.want)
		})
	}
}
