package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/internal/cliflag"
	"github.com/streamha/streamha/labs"
)

// sealCommands are 'lab teacher-key' and 'lab open': they are in every
// build (an assistant opens a sealed guide with the ordinary binary), but
// listed in 'lab --help' only in a teacher build.
func sealCommands(teacher bool) []*cobra.Command {
	var out string
	key := &cobra.Command{
		Use:   "teacher-key --out FILE",
		Short: "Write a new course key: it seals the teacher's guides for the course's assistants",
		Long: "teacher-key writes a new random course key (256 bits, mode 600) into FILE. A teacher build seals a\n" +
			"guide with it ('lab guide N --teacher --seal FILE'); whoever holds the key opens the sealed guide with\n" +
			"any streamha binary ('lab open GUIDE --key FILE'). Keep it from students: see 'streamha docs teaching'.",
		Example: "  streamha lab teacher-key --out course.key",
		Hidden:  !teacher,
		Args:    wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usage("--out FILE: where to write the key")
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				return usage("--out %s exists: a course key is never replaced (remove it first if you mean to)", out)
			}
			k, err := labs.NewCourseKey()
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, k, 0o600); err != nil {
				return fmt.Errorf("write %s: %w", out, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote the course key %s: give it to the course's assistants only\n", out)
			return nil
		},
	}
	cliflag.AddOut(key.Flags(), &out, cliflag.OutFile, "", "the key file to write (refused if it exists)")
	var keyFile string
	open := &cobra.Command{
		Use:     "open FILE --key KEYFILE",
		Short:   "Print a guide a teacher sealed with the course key",
		Example: "  streamha lab open lab4-guide.sealed --key course.key",
		Hidden:  !teacher,
		Args:    wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if keyFile == "" {
				return usage("--key KEYFILE: the course key the guide was sealed with")
			}
			k, err := labs.ReadCourseKey(keyFile)
			if err != nil {
				return usageErr{err}
			}
			sealed, err := os.ReadFile(args[0])
			if err != nil {
				return usage("%w", err)
			}
			plain, err := labs.Open(k, sealed)
			if err != nil {
				if errors.Is(err, labs.ErrUsage) {
					return usageErr{err}
				}
				return fmt.Errorf("%s: %w", args[0], err)
			}
			_, err = cmd.OutOrStdout().Write(plain)
			return err
		},
	}
	open.Flags().StringVar(&keyFile, "key", "", "the course key file ('lab teacher-key' wrote it)")
	return []*cobra.Command{key, open}
}
