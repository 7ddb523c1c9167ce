package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/strategies"

	// Strategy packages register themselves.
	_ "github.com/streamha/streamha/strategies"
)

// usageErr marks errors that exit with status 2 (bad flags, bad config, unreadable input).
type usageErr struct{ err error }

func (u usageErr) Error() string { return u.err.Error() }
func (u usageErr) Unwrap() error { return u.err }

func usage(format string, a ...any) error { return usageErr{fmt.Errorf(format, a...)} }

// errInterrupted marks a command stopped by Ctrl-C (SIGINT) or SIGTERM
// after it kept what it had finished; the message names where.
var errInterrupted = errors.New("interrupted")

// Exit statuses; exitCodes documents them in 'streamha --help'.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130 // 128 + SIGINT, as a shell reports a process killed by Ctrl-C
)

// exitCodes is the table of exit statuses printed by 'streamha --help'
// and in README.md.
const exitCodes = `Exit status:
  0    success (for 'classify': whatever the recovery type)
  1    a check failed or a run could not finish: wrong lab answers, a chaos or soak invariant
       broken, a process or file error during the run
  2    usage or configuration error: unknown command, flag, strategy, host or lab; a malformed or
       invalid experiment file (the message names the field and line); unreadable input; an output
       directory holding a different run (without --force)
  130  interrupted (Ctrl-C or SIGTERM): what finished is kept, and the message names the directory`

func main() {
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the CLI and returns the exit status.
func execute(args []string, stdout, stderr io.Writer) int {
	return executeContext(context.Background(), args, stdout, stderr)
}

// executeContext is execute with a context the commands that handle
// interrupts (sweep, cluster) derive theirs from.
func executeContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return executeRoot(ctx, newRoot(stdout, stderr), args, stderr)
}

// executeRoot runs a command tree and returns the exit status.
func executeRoot(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "streamha:", err)
	return exitCode(err)
}

// exitCode maps an error to the exit status documented in exitCodes.
func exitCode(err error) int {
	var u usageErr
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case errors.As(err, &u) || errors.Is(err, experiment.ErrConfig) || errors.Is(err, strategies.ErrUnknown):
		return exitUsage
	}
	return exitFailure
}

// extraCommands are added by command files from their init functions, so a
// new subcommand needs no edit here.
var extraCommands []func() *cobra.Command

// newRoot builds the command tree of this build.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	return newRootWith(stdout, stderr, teacherCommands)
}

// newRootWith builds the command tree; teacher, when not nil, adds the
// teacher's lab commands (teacherCommands: only with -tags teacher).
func newRootWith(stdout, stderr io.Writer, teacher teacherFunc) *cobra.Command {
	root := &cobra.Command{
		Use:   "streamha",
		Short: "Compare high-availability strategies for distributed stream processing",
		Long: "streamha runs a stream query under every HA strategy (" + strings.Join(strategies.Names(false), ", ") + "),\n" +
			"injects faults, and reports the recovery each strategy really achieved (precise, rollback or gap),\n" +
			"its duplicate/missing/wrong output, recovery latency and runtime cost. The documentation is built in:\n" +
			"'streamha docs' lists its pages, 'streamha docs semantics' defines every verdict and metric.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion(),
	}
	root.Long += "\n\n" + exitCodes
	root.SetVersionTemplate("{{.Version}}")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(newRunCmd(), newClassifyCmd(), newStrategiesCmd())
	root.AddCommand(newSweepCmd(), newReportCmd())
	root.AddCommand(newLabCmd(teacher), newExamplesCmd(), newTraceCmd(), newServeCmd(), newVersionCmd())
	for _, c := range extraCommands {
		root.AddCommand(c())
	}
	for _, c := range root.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	refuseUnknownSubcommands(root)
	addCompletions(root)
	return root
}

// refuseUnknownSubcommands makes every command that only groups
// subcommands (the root, lab, report …) answer an unknown subcommand with a
// usage error (exit status 2) and suggestions, and print its help when
// called alone. Left to cobra, the root reports an unknown command as a
// plain error and a group prints its help with status 0.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if c.Runnable() || !c.HasSubCommands() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, ", "))
		}
		return usage("%s; see '%s --help'", msg, cmd.CommandPath())
	}
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
