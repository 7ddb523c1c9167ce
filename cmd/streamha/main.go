// Command streamha compares high-availability strategies for distributed
// stream processing. See README.md and docs/ for every subcommand.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"

	// Strategy packages register themselves.
	_ "github.com/streamha/streamha/strategies"
)

// usageErr marks errors that exit with status 2 (bad flags, bad config, unreadable input).
type usageErr struct{ err error }

func (u usageErr) Error() string { return u.err.Error() }
func (u usageErr) Unwrap() error { return u.err }

func usage(format string, a ...any) error { return usageErr{fmt.Errorf(format, a...)} }

func main() {
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the CLI and returns the exit status.
func execute(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "streamha:", err)
	var u usageErr
	if errors.As(err, &u) || errors.Is(err, sim.ErrConfig) || errors.Is(err, strategies.ErrUnknown) {
		return 2
	}
	return 1
}

// extraCommands are added by command files from their init functions, so a
// new subcommand needs no edit here.
var extraCommands []func() *cobra.Command

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "streamha",
		Short: "Compare high-availability strategies for distributed stream processing",
		Long: "streamha runs a stream query under HA strategies (amnesia, passive standby, active standby,\n" +
			"upstream backup), injects faults, and reports the recovery each strategy really achieved\n" +
			"(precise, rollback or gap), its duplicate/missing/wrong output, recovery latency and runtime cost.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(newRunCmd(), newClassifyCmd(), newStrategiesCmd())
	root.AddCommand(newSweepCmd(), newReportCmd())
	root.AddCommand(newLabCmd())
	for _, c := range extraCommands {
		root.AddCommand(c())
	}
	for _, c := range root.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return root
}

func wrapArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	if v == nil {
		v = cobra.NoArgs
	}
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return usageErr{err}
		}
		return nil
	}
}
