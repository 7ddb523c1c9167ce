package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/internal/cliflag"
	"github.com/streamha/streamha/labs"
)

// teacherFunc adds the teacher's commands and flags to 'lab' and its
// 'check' subcommand, whose --reveal it binds to reveal.
type teacherFunc func(lab, check *cobra.Command, reveal *bool)

func newLabCmd(teacher teacherFunc) *cobra.Command {
	c := &cobra.Command{
		Use:   "lab",
		Short: "Teaching labs: list them, show a handout, check your answers",
		Long: "lab lists the teaching labs, writes a lab's files (handout, experiment files, blank answers), prints\n" +
			"a handout, and checks a lab's answers: the check reruns the lab's experiments in the simulator\n" +
			"(deterministically, with the lab's own built-in files and seeds) and says per question whether the\n" +
			"answer is right and why, with the evidence it computed. The binary holds every lab's files (lab 5 also\n" +
			"needs a clone of the repository: the student edits streamha's source).\n" +
			"A wrong answer gets the likely confusion and where to look, never the expected value; --verbose\n" +
			"explains right answers too, with the command that shows the evidence ('streamha why …').\n" +
			"Exit status of check: 0 all right, 1 some wrong, 2 usage errors. See 'streamha docs teaching'\n" +
			"(teachers too).",
		Example: "  streamha lab list\n  mkdir lab1 && cd lab1 && streamha lab init 1\n" +
			"  streamha run --config experiment.yaml --out lab1-out\n  streamha lab check 1",
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the labs",
		Args:  wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			for _, l := range labs.All() {
				fmt.Fprintf(tw, "%d\t%s\t%s\n", l.N, l.Title, l.Summary)
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use:   "show N",
		Short: "Print lab N's handout",
		Args:  wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := labs.Lookup(args[0])
			if err != nil {
				return usageErr{err}
			}
			fmt.Fprint(cmd.OutOrStdout(), l.Handout())
			return nil
		},
	}
	var force bool
	initCmd := &cobra.Command{
		Use:   "init N [DIR]",
		Short: "Write lab N's handout (README.md), experiment files and blank answers.yaml into DIR (default .)",
		Args:  wrapArgs(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := labs.Lookup(args[0])
			if err != nil {
				return usageErr{err}
			}
			dir := "."
			if len(args) == 2 {
				dir = args[1]
			}
			written, err := l.Init(dir, force)
			if err != nil {
				if errors.Is(err, labs.ErrUsage) {
					return usageErr{err}
				}
				return err
			}
			out := cmd.OutOrStdout()
			for _, p := range written {
				fmt.Fprintf(out, "wrote %s\n", p)
			}
			if len(written) == 0 {
				fmt.Fprintf(out, "lab %d's files are already in %s\n", l.N, dir)
			}
			next := "read README.md, then follow its steps"
			if dir != "." {
				next = fmt.Sprintf("cd %s, read README.md, then follow its steps", dir)
			}
			fmt.Fprintf(out, "lab %d: %s — %s; check with: streamha lab check %d\n", l.N, l.Title, next, l.N)
			return nil
		},
	}
	cliflag.AddForce(initCmd.Flags(), &force, "files that differ from the lab's (your answers.yaml too)")
	var (
		answers         string
		verbose, reveal bool
	)
	check := &cobra.Command{
		Use:   "check N [--answers FILE]",
		Short: "Check lab N's answers (default FILE: answers.yaml in the current directory)",
		Args:  wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := labs.Lookup(args[0])
			if err != nil {
				return usageErr{err}
			}
			path := answers
			if path == "" {
				path = "answers.yaml"
				if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
					return usage("no answers.yaml in this directory: write the lab's files here with 'streamha lab init %d', or give --answers FILE", l.N)
				}
			}
			if n, ok := answersLab(path); ok && n != l.N {
				return usage("%s holds the answers of lab %d: check it with 'streamha lab check %d', or write lab %d's files into another directory with 'streamha lab init %d DIR'", path, n, n, l.N, l.N)
			}
			a, err := labs.ReadAnswers(l, path)
			if err != nil {
				return usageErr{err}
			}
			res, err := l.Check(a, labs.Options{ClusterAvailable: clusterAvailable(cmd), Reveal: reveal})
			if err != nil {
				if errors.Is(err, labs.ErrUsage) {
					return usageErr{err}
				}
				return err
			}
			res.Write(cmd.OutOrStdout(), verbose)
			if !res.AllRight() {
				return errLabWrong
			}
			return nil
		},
	}
	check.Flags().StringVar(&answers, "answers", "", "answers YAML file, one key per question (q1: ..., q2: ...) (default answers.yaml)")
	check.Flags().BoolVarP(&verbose, "verbose", "v", false, "explain right answers too, with the command that shows the evidence")
	c.AddCommand(list, initCmd, show, check)
	c.AddCommand(sealCommands(teacher != nil)...)
	if teacher != nil {
		teacher(c, check, &reveal)
	}
	return c
}

// addTeacherCommands adds 'lab guide N' and 'lab check --reveal' in a
// teacher build (teacherCommands, -tags teacher). In the binary students
// install nothing refers to it: the linker leaves out this function, the
// guide and the solution notes it embeds, so no flag of that binary prints
// an expected answer.
func addTeacherCommands(c, check *cobra.Command, reveal *bool) {
	check.Flags().BoolVar(reveal, "reveal", false, "show the expected answer and the check's evidence for every question")
	var (
		teacher bool
		sealKey string
	)
	guide := &cobra.Command{
		Use:   "guide N --teacher",
		Short: "Print lab N's expected answers, the confusions the check recognises and the solution notes",
		Long: "guide prints lab N's teacher's guide as Markdown: for every question the expected answer and the\n" +
			"evidence the check computes — from the current strategies, so the numbers never go stale —, the\n" +
			"confusions it recognises in wrong answers and the lab's solution notes. It is not for students: pass\n" +
			"--teacher to confirm.",
		Example: "  streamha lab guide 4 --teacher > lab4-guide.md\n  streamha lab guide 4 --teacher --seal course.key > lab4-guide.sealed",
		Args:    wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := labs.Lookup(args[0])
			if err != nil {
				return usageErr{err}
			}
			if !teacher {
				return usage("the guide holds the expected answers: it is for teachers; pass --teacher")
			}
			g, err := l.TeacherGuide(labs.Options{ClusterAvailable: clusterAvailable(cmd)})
			if err != nil {
				return err
			}
			if sealKey == "" {
				g.Write(cmd.OutOrStdout())
				return nil
			}
			k, err := labs.ReadCourseKey(sealKey)
			if err != nil {
				return usageErr{err}
			}
			var plain bytes.Buffer
			g.Write(&plain)
			sealed, err := labs.Seal(k, plain.Bytes())
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(sealed)
			return err
		},
	}
	guide.Flags().BoolVar(&teacher, "teacher", false, "confirm you are a teacher: the guide holds the expected answers")
	guide.Flags().StringVar(&sealKey, "seal", "", "seal the guide with this course key ('lab teacher-key'); 'lab open' prints it")
	c.AddCommand(guide)
	c.Long += "\nThis is a teacher build: 'lab guide N --teacher' prints the expected answers and solution notes\n" +
		"(--seal KEY seals them for 'lab open'), 'lab check N --reveal' adds the expected answers to a check."
}

// clusterAvailable says whether this build has `streamha cluster`.
func clusterAvailable(cmd *cobra.Command) bool {
	for _, sub := range cmd.Root().Commands() {
		if sub.Name() == "cluster" {
			return true
		}
	}
	return false
}

// errLabWrong makes `lab check` exit 1 after printing its verdicts.
var errLabWrong = errors.New("some answers are wrong or a requirement failed (see above)")

// answersHeader is the first line of every lab's blank answers file.
var answersHeader = regexp.MustCompile(`^# Answers for lab (\d+)\.`)

// answersLab reads which lab an answers file was written for, from the
// header 'lab init' wrote (false when there is none).
func answersLab(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	m := answersHeader.FindSubmatch(b)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(string(m[1]))
	return n, err == nil
}
