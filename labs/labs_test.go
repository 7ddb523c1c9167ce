package labs_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/labs"

	_ "github.com/streamha/streamha/activestandby"
	_ "github.com/streamha/streamha/globalcheckpoint"
	_ "github.com/streamha/streamha/passivestandby"
	_ "github.com/streamha/streamha/upstreambackup"
)

func answers(t *testing.T, l *labs.Lab, path string) labs.Answers {
	t.Helper()
	a, err := labs.ReadAnswers(l, path)
	require.NoError(t, err)
	return a
}

func opts() labs.Options { return labs.Options{BaseDir: "testdata", ClusterAvailable: true} }

func TestEveryLabHasHandoutFilesAndTemplate(t *testing.T) {
	all := labs.All()
	require.GreaterOrEqual(t, len(all), 7)
	for i, l := range all {
		t.Run(l.Dir, func(t *testing.T) {
			assert.Equal(t, i+1, l.N)
			h := l.Handout()
			for _, section := range []string{"## Goal", "## Background", "## Steps", "## Questions", "## What to hand in"} {
				assert.Contains(t, h, section)
			}
			for _, q := range l.Questions {
				assert.Contains(t, h, "**"+q.Key+"**", "the handout asks every question")
			}
			tmpl, err := labs.ParseAnswers(l, []byte(l.Template()))
			require.NoError(t, err, "the blank template parses")
			assert.Empty(t, tmpl, "the template is blank")
			assert.Contains(t, l.Template(), "q1:")
			// Every file a handout command names is one 'streamha lab init'
			// writes (or, in lab 5, one of the repository clone).
			files := l.Files()
			assert.Contains(t, files, "README.md")
			assert.Contains(t, files, "answers.yaml")
			for _, line := range strings.Split(h, "\n") {
				for _, f := range strings.Fields(strings.Trim(line, "`")) {
					f = strings.Trim(f, "`.,:")
					switch {
					case strings.HasPrefix(f, "labs/"):
						assert.FileExists(t, filepath.Join("..", f), "handout line %q", line)
					case strings.HasSuffix(f, ".yaml") && !strings.Contains(f, "/"):
						assert.Contains(t, files, f, "handout line %q", line)
					}
				}
			}
			assert.NotContains(t, h, "--answers", "the check finds answers.yaml by itself")
		})
	}
}

func TestInitWritesTheFilesAndKeepsAnswers(t *testing.T) {
	l, err := labs.Get(2)
	require.NoError(t, err)
	dir := t.TempDir()
	written, err := l.Init(dir, false)
	require.NoError(t, err)
	assert.Len(t, written, len(l.Files()))
	for _, f := range []string{"README.md", "answers.yaml", "experiment.yaml", "experiment-dedup.yaml"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	// A second init over the same files writes nothing.
	written, err = l.Init(dir, false)
	require.NoError(t, err)
	assert.Empty(t, written)
	// A student's answers are never replaced without overwrite.
	answers := filepath.Join(dir, "answers.yaml")
	require.NoError(t, os.WriteFile(answers, []byte("q1: gap\n"), 0o644))
	_, err = l.Init(dir, false)
	require.ErrorIs(t, err, labs.ErrExists)
	require.ErrorIs(t, err, labs.ErrUsage)
	assert.Contains(t, err.Error(), "answers.yaml")
	b, _ := os.ReadFile(answers)
	assert.Equal(t, "q1: gap\n", string(b))
	written, err = l.Init(dir, true)
	require.NoError(t, err)
	assert.Equal(t, []string{answers}, written)
	b, _ = os.ReadFile(answers)
	assert.Equal(t, l.Template(), string(b))
}

func TestLab1WindowStartWithOrWithoutUnit(t *testing.T) {
	l, err := labs.Get(1)
	require.NoError(t, err)
	for _, ans := range []string{"[3s]", "[3]", "3"} {
		a, err := labs.ParseAnswers(l, []byte("q3: "+ans+"\n"))
		require.NoError(t, err)
		res, err := l.Check(a, opts())
		require.NoError(t, err)
		assert.True(t, res.Verdicts[2].Right, "%s: %s", ans, res.Verdicts[2].Why)
	}
	a, _ := labs.ParseAnswers(l, []byte("q3: [4]\n"))
	res, err := l.Check(a, opts())
	require.NoError(t, err)
	assert.False(t, res.Verdicts[2].Right)
}

func TestCheckCorrectAndWrongAnswers(t *testing.T) {
	for _, l := range labs.All() {
		if l.N == 5 {
			continue // needs the student's strategy: TestLab5* below
		}
		t.Run(l.Dir, func(t *testing.T) {
			t.Parallel() // each lab's check runs its own simulations
			res, err := l.Check(answers(t, l, fmt.Sprintf("testdata/answers/%d.yaml", l.N)), opts())
			require.NoError(t, err)
			for _, v := range res.Verdicts {
				assert.True(t, v.Right, "%s: %s", v.Key, v.Why)
			}
			assert.True(t, res.AllRight())
			assert.Len(t, res.Verdicts, len(l.Questions))

			bad, err := l.Check(answers(t, l, fmt.Sprintf("testdata/wrong/%d.yaml", l.N)), opts())
			require.NoError(t, err)
			assert.False(t, bad.AllRight())
			wrong := 0
			for _, v := range bad.Verdicts {
				if !v.Right {
					wrong++
					assert.Regexp(t, `\d|expected|missing`, v.Why, "a wrong verdict shows evidence")
					assert.NotEqual(t, "fail", strings.ToLower(v.Why))
				}
			}
			assert.Positive(t, wrong)
			var out strings.Builder
			bad.Write(&out)
			assert.Contains(t, out.String(), "WRONG")
		})
	}
}

func TestBlankAnswersGiveHintsNotAnswers(t *testing.T) {
	l, err := labs.Get(1)
	require.NoError(t, err)
	res, err := l.Check(labs.Answers{}, opts())
	require.NoError(t, err)
	for _, v := range res.Verdicts {
		assert.False(t, v.Right)
		assert.Contains(t, v.Why, "no answer given")
		assert.NotContains(t, v.Why, "558", "the hint does not reveal the answer")
	}
}

func TestParseAnswersErrors(t *testing.T) {
	l, err := labs.Get(1)
	require.NoError(t, err)
	tests := []struct {
		name, text, want string
	}{
		{"unknown key", "q1: gap\nq9: 3\n", `unknown question key "q9"`},
		{"bad yaml", "q1: [gap\n", "answers"},
		{"not a mapping", "- gap\n", "answers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := labs.ParseAnswers(l, []byte(tt.text))
			require.ErrorIs(t, err, labs.ErrUsage)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err = labs.ReadAnswers(l, "testdata/does-not-exist.yaml")
	require.ErrorIs(t, err, labs.ErrUsage)
	a, err := labs.ParseAnswers(l, []byte("q1: gap\nq3: [2s, 3s]\nq2:\n"))
	require.NoError(t, err)
	assert.Equal(t, labs.Answers{"q1": {"gap"}, "q3": {"2s", "3s"}}, a)
}

func TestLookup(t *testing.T) {
	for _, arg := range []string{"3", "03", "03-checkpoint-interval"} {
		l, err := labs.Lookup(arg)
		require.NoError(t, err, arg)
		assert.Equal(t, 3, l.N)
	}
	for _, arg := range []string{"0", "9", "x"} {
		_, err := labs.Lookup(arg)
		require.ErrorIs(t, err, labs.ErrUsage, arg)
	}
}

func TestLab6WithoutClusterSaysSo(t *testing.T) {
	l, err := labs.Get(6)
	require.NoError(t, err)
	res, err := l.Check(labs.Answers{"q1": {"nowhere/result.json"}, "q3": {"415.5"}}, labs.Options{ClusterAvailable: false})
	require.NoError(t, err)
	for _, v := range res.Verdicts {
		if v.Key == "q3" {
			assert.True(t, v.Right, v.Why)
			continue
		}
		assert.False(t, v.Right)
		assert.Contains(t, v.Why, "no 'cluster' command")
	}
	// A simulated result is not accepted as a cluster one.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "r.json"), []byte(`{"mode":"sim","runs":[]}`), 0o644))
	res, err = l.Check(labs.Answers{"q1": {"r.json"}}, labs.Options{BaseDir: dir, ClusterAvailable: true})
	require.NoError(t, err)
	assert.Contains(t, res.Verdicts[0].Why, "not a cluster one")
}

func TestLab5WithoutStrategyRegistered(t *testing.T) {
	l, err := labs.Get(5)
	require.NoError(t, err)
	res, err := l.Check(answers(t, l, "testdata/answers/5.yaml"), opts())
	require.NoError(t, err)
	assert.False(t, res.AllRight())
	require.NotEmpty(t, res.Failed)
	assert.Contains(t, res.Failed[0], "import_lab5.go")
}

// TestLab5ReferenceSolutionEndToEnd copies the module, completes the
// skeleton with the reference solution and runs `streamha lab check 5`.
func TestLab5ReferenceSolutionEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the streamha binary: skipped with -short")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dst := t.TempDir()
	require.NoError(t, copyModule(root, dst))
	sol, err := os.ReadFile("testdata/lab5-solution/mystrategy.go")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dst, "labs/05-own-strategy/mystrategy/mystrategy.go"), sol, 0o644))
	bin := filepath.Join(t.TempDir(), "streamha")
	build := exec.Command(goBin, "build", "-o", bin, "./cmd/streamha")
	build.Dir = dst
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	run := func(answers string) (int, string) {
		cmd := exec.Command(bin, "lab", "check", "5", "--answers", answers)
		cmd.Dir = dst
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		require.NoError(t, err)
		return 0, string(out)
	}
	code, text := run("labs/testdata/answers/5.yaml")
	assert.Equal(t, 0, code, text)
	assert.Contains(t, text, "PASS")
	assert.Contains(t, text, "lab complete")
	code, text = run("labs/testdata/wrong/5.yaml")
	assert.Equal(t, 1, code, text)
	assert.Contains(t, text, "expected \"gap\"")
}

// copyModule copies the module's Go sources, go.mod/go.sum and the lab
// files (no output directories, no .git).
func copyModule(src, dst string) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			if rel != "." && (strings.HasPrefix(info.Name(), ".") || strings.HasPrefix(info.Name(), "streamha-out")) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		ext := filepath.Ext(p)
		if ext != ".go" && ext != ".yaml" && ext != ".md" && ext != ".json" && info.Name() != "go.mod" && info.Name() != "go.sum" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}
