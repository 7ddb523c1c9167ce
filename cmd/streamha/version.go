package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildVersion describes this binary from the module's build info: the
// module version ("(devel)" for a build from a working copy), the VCS
// commit and whether the tree had local changes, and the Go version.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "streamha (no build info: built without module support)"
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var commit, when string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "streamha %s\n", version)
	switch {
	case commit == "":
		b.WriteString("commit:  unknown (built without VCS information, e.g. go run or -buildvcs=false)\n")
	case modified:
		fmt.Fprintf(&b, "commit:  %s (with local changes)\n", commit)
	default:
		fmt.Fprintf(&b, "commit:  %s\n", commit)
	}
	if when != "" {
		fmt.Fprintf(&b, "date:    %s\n", when)
	}
	fmt.Fprintf(&b, "go:      %s\n", bi.GoVersion)
	return b.String()
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version this binary was built from",
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprint(cmd.OutOrStdout(), buildVersion())
			return nil
		},
	}
}
