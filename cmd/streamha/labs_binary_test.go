package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/labs"
)

// handoutFile is a file of a lab's run directory a handout names
// (lab1-out/result.json).
var handoutFile = regexp.MustCompile("`(lab\\d-[a-z]+/[^`\\s]+)`")

// handoutEvidence are, per lab, the files of its runs and the fields or
// events in them its handout points the student to.
var handoutEvidence = map[int][]struct {
	file   string
	fields []string
}{
	1: {{"lab1-out/result.json", []string{`"explanations"`}}, {"lab1-out/trace-amnesia.jsonl", []string{`"crash"`, `"detect"`, `"takeover"`}}},
	2: {{"lab2-out/trace-upstream-backup.jsonl", []string{`"replay_start"`, `"trim"`}}},
	3: {{"lab3-sweep/points.csv", []string{"checkpoint_interval", "cpu_ratio", "max_added_latency_ms"}},
		{"lab3-sweep/overhead-vs-checkpoint_interval.png", nil}, {"lab3-sweep/recovery-vs-checkpoint_interval.png", nil}},
	4: {{"lab4-out/result.json", []string{`"explanations"`}}},
	7: {{"lab7-fenced/trace-amnesia.jsonl", []string{`"pause"`, `"detect"`, `"takeover"`, `"resume"`, `"fenced"`, `"fenced_dropped"`}},
		{"lab7-nofence/trace-amnesia.jsonl", []string{`"input_gap"`, `"dup_dropped"`, `"input_gaps"`}}},
}

// handoutCommand is a streamha command quoted in a handout.
var handoutCommand = regexp.MustCompile("`(streamha [^`]+)`")

// TestEveryLabWorksFromTheBinaryAlone does, for every lab, in an empty
// directory with only the built binary, what the handout says: lab init N,
// every streamha command of its Steps in order, and the check. A blank
// answers file checks with status 1 and a hint per question; the right
// answers (labs/testdata) check with status 0, except lab 5's, which
// need the student's strategy compiled in. 'streamha cluster' (lab 6) is
// left out: it is tested with the cluster, and the check reads a cluster
// result from labs/testdata instead.
func TestEveryLabWorksFromTheBinaryAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the streamha binary: skipped with -short")
	}
	for _, l := range labs.All() {
		t.Run(l.Dir, func(t *testing.T) {
			dir := t.TempDir()
			code, out, errOut := runBinary(t, dir, "lab", "init", fmt.Sprint(l.N))
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, "wrote answers.yaml")
			h, err := os.ReadFile(filepath.Join(dir, "README.md"))
			require.NoError(t, err)
			steps := string(h)
			steps = steps[strings.Index(steps, "## Steps"):strings.Index(steps, "## Questions")]
			checked := false
			for _, m := range handoutCommand.FindAllStringSubmatch(steps, -1) {
				args := strings.Fields(m[1])[1:]
				if args[0] == "cluster" {
					continue
				}
				code, out, errOut := runBinary(t, dir, args...)
				if args[0] == "lab" && args[1] == "check" {
					checked = true
					assert.Equal(t, exitFailure, code, "%s\n%s%s", m[1], out, errOut)
					assert.Contains(t, out, "No answer given", "a blank answers file gets hints")
					continue
				}
				assert.Equal(t, 0, code, "%s\n%s%s", m[1], out, errOut)
				for _, f := range args {
					if strings.HasSuffix(f, ".yaml") {
						assert.FileExists(t, filepath.Join(dir, f), "%s names a file lab init wrote", m[1])
					}
				}
			}
			require.True(t, checked, "the handout's steps end with the check")
			// The commands the rest of the handout shows (Background,
			// Discuss) work too; those the steps ran are not run again.
			hs := string(h)
			rest := hs[:strings.Index(hs, "## Steps")] + hs[strings.Index(hs, "## Questions"):]
			var others []docCommand
			for _, c := range markdownCommands(rest, commandName(newRootWith(io.Discard, io.Discard, nil))) {
				if !strings.Contains(steps, c.text) {
					others = append(others, c)
				}
			}
			runDocCommands(t, dir, l.Dir, others, map[string]bool{})
			// Every file of a run directory the handout points to exists,
			// and holds the fields the handout names.
			for _, m := range handoutFile.FindAllStringSubmatch(string(h), -1) {
				if l.N == 6 {
					break // lab 6's files come from a cluster run, which this test does not start
				}
				assert.FileExists(t, filepath.Join(dir, m[1]), "the handout points to %s", m[1])
			}
			for _, ev := range handoutEvidence[l.N] {
				b, err := os.ReadFile(filepath.Join(dir, ev.file))
				require.NoError(t, err, "lab %d points to %s", l.N, ev.file)
				for _, field := range ev.fields {
					assert.Contains(t, string(b), field, "lab %d: %s holds %s as the handout says", l.N, ev.file, field)
					assert.Contains(t, string(h), strings.Trim(field, `"`), "lab %d: the handout names %s", l.N, field)
				}
			}
			if l.N == 5 {
				return
			}
			right, err := os.ReadFile(filepath.Join("..", "..", "labs", "testdata", "answers", fmt.Sprintf("%d.yaml", l.N)))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "answers.yaml"), right, 0o644))
			if l.N == 6 {
				res, err := os.ReadFile(filepath.Join("..", "..", "labs", "testdata", "cluster-result.json"))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, "cluster-result.json"), res, 0o644))
			}
			code, out, errOut = runBinary(t, dir, "lab", "check", fmt.Sprint(l.N))
			assert.Equal(t, 0, code, out+errOut)
			assert.Contains(t, out, "lab complete")
		})
	}
}

// TestStudentBinaryHoldsNoTeacherMaterial checks that the binary students
// install (built without -tags teacher) holds none of the solution notes
// and no code that prints the teacher's guide: the linker leaves them out.
func TestStudentBinaryHoldsNoTeacherMaterial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the streamha binary: skipped with -short")
	}
	bin, err := os.ReadFile(streamhaBinary(t))
	require.NoError(t, err)
	notes, err := filepath.Glob(filepath.Join("..", "..", "labs", "teacher", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, notes)
	for _, p := range notes {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		line, _, _ := strings.Cut(string(b), "\n")
		require.Greater(t, len(line), 30, "%s starts with a line long enough to be distinctive", p)
		assert.False(t, bytes.Contains(bin, []byte(line)), "the binary holds %s", p)
	}
	assert.False(t, bytes.Contains(bin, []byte("teacher's guide as Markdown")), "the binary holds 'lab guide'")
}
