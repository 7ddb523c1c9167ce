package labs_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
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

func verdict(t *testing.T, res *labs.Result, key string) labs.Verdict {
	t.Helper()
	for _, v := range res.Verdicts {
		if v.Key == key {
			return v
		}
	}
	t.Fatalf("no verdict for %s", key)
	return labs.Verdict{}
}

func opts() labs.Options { return labs.Options{BaseDir: "testdata", ClusterAvailable: true} }

func TestEveryLabHasHandoutFilesAndTemplate(t *testing.T) {
	all := labs.All()
	require.GreaterOrEqual(t, len(all), 7)
	for i, l := range all {
		t.Run(l.Dir, func(t *testing.T) {
			assert.Equal(t, i+1, l.N)
			h := l.Handout()
			for _, section := range []string{"## Goal", "## Background", "## Predict before you run", "## Steps", "## Questions", "## What to hand in"} {
				assert.Contains(t, h, section)
			}
			predict, _, _ := strings.Cut(h[strings.Index(h, "## Predict before you run"):], "## Steps")
			predicts := 0
			for _, q := range l.Questions {
				assert.Contains(t, h, "**"+q.Key+"**", "the handout asks every question")
				if q.Predict {
					predicts++
					assert.Contains(t, predict, "**"+q.Key+"** "+q.Text, "a prediction is asked before the steps")
				}
			}
			assert.Equal(t, 1, predicts, "every lab asks one prediction")
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
		assert.True(t, verdict(t, res, "q3").Right, "%s: %s", ans, verdict(t, res, "q3").Why)
	}
	a, _ := labs.ParseAnswers(l, []byte("q3: [4]\n"))
	res, err := l.Check(a, opts())
	require.NoError(t, err)
	assert.False(t, verdict(t, res, "q3").Right)
}

// TestLab2SourceIDWithOrWithoutStream reads a bare tuple number as the
// source id the explanations print (the source has one stream).
func TestLab2SourceIDWithOrWithoutStream(t *testing.T) {
	l, err := labs.Get(2)
	require.NoError(t, err)
	for ans, right := range map[string]bool{"s0:3098": true, "3098": true, " 3098 ": true, "3099": false, "s1:3098": false} {
		res, err := l.Check(labs.Answers{"q3": {ans}}, opts())
		require.NoError(t, err)
		assert.Equal(t, right, verdict(t, res, "q3").Right, "%q: %s", ans, verdict(t, res, "q3").Why)
	}
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
				assert.Empty(t, v.Expected, "nothing is revealed without Reveal")
			}
			assert.True(t, res.AllRight())
			assert.Len(t, res.Verdicts, len(l.Questions))

			bad, err := l.Check(answers(t, l, fmt.Sprintf("testdata/wrong/%d.yaml", l.N)), opts())
			require.NoError(t, err)
			assert.False(t, bad.AllRight())
			guide, err := l.TeacherGuide(opts())
			require.NoError(t, err)
			expected := guide.Expected()
			wrong := 0
			for _, v := range bad.Verdicts {
				if v.Right {
					continue
				}
				wrong++
				assert.NotEmpty(t, v.Why, "%s: a wrong verdict says why", v.Key)
				for _, secret := range secrets(expected[v.Key]) {
					assert.NotContains(t, v.Why, secret, "%s: a wrong verdict never gives the expected answer", v.Key)
					assert.NotContains(t, v.Look, secret, "%s: nor does its pointer", v.Key)
				}
			}
			assert.Positive(t, wrong)
			var out strings.Builder
			bad.Write(&out, false)
			assert.Contains(t, out.String(), "WRONG")
		})
	}
}

// secrets are the parts of an expected answer (as a teacher's guide
// writes it) that a student-facing text must not contain: quoted answers
// and numbers with a digit, beyond the vocabulary every handout uses.
func secrets(expected string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`"([^"]+)"|\[([^\]]+)\]|(^|\s)(\d[\d.]*)`).FindAllStringSubmatch(expected, -1) {
		for _, g := range []string{m[1], m[2], m[4]} {
			for _, part := range strings.Split(g, ", ") {
				if strings.ContainsAny(part, "0123456789") && len(part) >= 2 {
					out = append(out, part)
				}
			}
		}
	}
	return out
}

func TestWrongAnswersNameTheConfusion(t *testing.T) {
	tests := []struct {
		lab      int
		key, ans string
		want     string
		with     labs.Answers // other answers the question needs (lab 6's cluster result)
	}{
		{1, "q4", "k02|w=3s", "lost fewer source tuples than another", nil},
		{1, "q5", "556", "reach no output even without a failure", nil},
		{1, "q6", "224", "took over; detection comes before", nil},
		{1, "q6", "222", "the host that took over, declared B dead", nil},
		{2, "q4", "0", "the position the replay starts from", nil},
		{2, "q2", "287", "'and N more'", nil},
		{4, "q2", "5196", "'and N more'", nil},
		{7, "q4", "2815", "'and N more'", nil},
		{3, "q1", "3", "rounded to two decimals", nil},
		{3, "q3", "770.5", "mean recovery time", nil},
		{6, "q3", "612.3", "your cluster run's recovery", labs.Answers{"q1": {"cluster-result.json"}}},
		{6, "q5", "331.6", "the simulator's detection", labs.Answers{"q1": {"cluster-result.json"}}},
		{7, "q1", "75", "took over; detection comes before", nil},
		{7, "q1", "72.9", "the host that took over, declared B dead", nil},
		{7, "q5", "71", "superseded by a newer epoch", nil},
		{7, "q5", "72", "every line with", nil},
		{2, "q2", "546", "the whole replay", nil},
		{2, "q4", "293", "number of duplicates", nil},
		{1, "q5", "8", "counts damaged outputs", nil},
		{3, "q1", "1.034", "ratio cpu×", nil},
		{4, "q1", "convergent", "still differ when the run ends", nil},
		{4, "q2", "658", "the replay A.1 sent B", nil},
		{4, "q3", "k00#3216", "where A.1's chain first took another input", nil},
		{4, "q4", "k00#3426", "the first wrong delivery", nil},
		{4, "q6", "1.68", "without shipping", nil},
		{7, "q7", "3151", "longest silence", nil},
	}
	for _, tt := range tests {
		l, err := labs.Get(tt.lab)
		require.NoError(t, err)
		a := labs.Answers{tt.key: {tt.ans}}
		for k, v := range tt.with {
			a[k] = v
		}
		res, err := l.Check(a, opts())
		require.NoError(t, err)
		for _, v := range res.Verdicts {
			if v.Key == tt.key {
				assert.False(t, v.Right, "lab %d %s %s", tt.lab, tt.key, tt.ans)
				assert.Contains(t, v.Why, tt.want, "lab %d %s", tt.lab, tt.key)
				assert.Contains(t, v.Why, "Where to look")
			}
		}
	}
}

func TestVerboseExplainsRightAnswersWithAWhyPointer(t *testing.T) {
	l, err := labs.Get(1)
	require.NoError(t, err)
	res, err := l.Check(answers(t, l, "testdata/answers/1.yaml"), opts())
	require.NoError(t, err)
	var short, long strings.Builder
	res.Write(&short, false)
	res.Write(&long, true)
	assert.NotContains(t, short.String(), "streamha why")
	assert.Contains(t, long.String(), "see: streamha why 'k06|w=3s' --run lab1-out")
	assert.Contains(t, long.String(), "Sum of the per-output shortfalls")
}

func TestRevealAndTheGuideGiveTheExpectedAnswers(t *testing.T) {
	for _, l := range labs.All() {
		if l.N == 5 || l.N == 6 {
			continue // their answers depend on the student's own strategy or cluster run
		}
		t.Run(l.Dir, func(t *testing.T) {
			t.Parallel()
			g, err := l.TeacherGuide(opts())
			require.NoError(t, err)
			exp := g.Expected()
			require.Len(t, exp, len(l.Questions), "every question has an expected answer")
			// The guide's answers pass the check.
			a := labs.Answers{}
			for k, e := range exp {
				a[k] = guideAnswer(e)
			}
			res, err := l.Check(a, opts())
			require.NoError(t, err)
			for _, v := range res.Verdicts {
				assert.True(t, v.Right, "%s: the guide's answer %q: %s", v.Key, exp[v.Key], v.Why)
			}
			var out strings.Builder
			g.Write(&out)
			assert.Contains(t, out.String(), "## Notes")
			assert.Contains(t, out.String(), "teacher's guide")
		})
	}
}

// questionOf is lab l's question key.
func questionOf(l *labs.Lab, key string) labs.Question {
	for _, q := range l.Questions {
		if q.Key == key {
			return q
		}
	}
	return labs.Question{}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// guideAnswer turns a guide's expected answer back into an answer.
func guideAnswer(e string) []string {
	switch {
	case strings.HasPrefix(e, `"`):
		s, _, _ := strings.Cut(e[1:], `"`)
		return []string{s}
	case strings.HasPrefix(e, "["):
		return strings.Split(strings.Trim(e, "[]"), ", ")
	}
	n, _, _ := strings.Cut(e, " ")
	return []string{n}
}

func TestNoStudentFileHoldsAnExpectedAnswer(t *testing.T) {
	teaching, err := os.ReadFile("../docs/teaching.md")
	require.NoError(t, err)
	// Every other page a student reads may quote numbers, but no output
	// id that answers a lab question.
	pages := map[string]string{}
	for _, p := range append([]string{"../README.md"}, must(filepath.Glob("../docs/*.md"))...) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		pages[p] = string(b)
	}
	for _, l := range labs.All() {
		pages[l.Dir+"/README.md"] = l.Handout()
	}
	for _, l := range labs.All() {
		if l.N == 5 || l.N == 6 {
			continue
		}
		t.Run(l.Dir, func(t *testing.T) {
			t.Parallel()
			g, err := l.TeacherGuide(opts())
			require.NoError(t, err)
			texts := map[string]string{"README.md": l.Handout(), "answers.yaml": l.Template(), "docs/teaching.md": string(teaching)}
			// The guide's verdicts are those of blank answers: their hints
			// are what a student with a blank answers.yaml reads.
			for _, v := range g.Result.Verdicts {
				texts["the blank hint of "+v.Key] = v.Why + " " + v.Look
				q := questionOf(l, v.Key)
				if !q.Predict {
					continue
				}
				for _, a := range guideAnswer(v.Expected) {
					re := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(a) + `\b`)
					assert.False(t, re.MatchString(strings.TrimPrefix(v.Why, "No answer given.")), "the hint for a blank %s says its answer %q: %s", v.Key, a, v.Why)
				}
			}
			for k, e := range g.Expected() {
				for _, secret := range secrets(e) {
					if strings.ContainsAny(secret, "|#:") {
						for name, text := range pages {
							assert.NotContains(t, text, secret, "%s holds lab %d's %s answer", name, l.N, k)
						}
					}
					if l.N == 3 && slices.Contains(labs.Lab3Intervals, secret) {
						continue // q4 picks one of the intervals the sweep command lists
					}
					re := regexp.MustCompile(`(^|[^\w.#|:])` + regexp.QuoteMeta(secret) + `($|[^\w.]|\.\s|\.$)`)
					for name, text := range texts {
						assert.False(t, re.MatchString(text), "%s holds %s's expected answer %q", name, k, secret)
					}
				}
			}
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
		assert.Contains(t, v.Why, "No answer given")
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
	res, err := l.Check(labs.Answers{"q1": {"nowhere/result.json"}, "q3": {"331.6"}}, labs.Options{ClusterAvailable: false})
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
	assert.Contains(t, res.Failed[0], "cmd/streamha/lab_strategies.go")
}

// TestLab5EndToEnd copies the module, puts the pristine skeleton in place
// (whatever a student made of the working copy) and checks that `streamha
// lab check 5` fails with it, then completes it with the reference
// solution and checks that the lab is complete.
func TestLab5EndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the streamha binary twice: skipped with -short")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dst := t.TempDir()
	require.NoError(t, copyModule(root, dst))
	skeleton := filepath.Join(dst, "labs/05-own-strategy/mystrategy/mystrategy.go")
	build := func(source string) string {
		b, err := os.ReadFile(source)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(skeleton, b, 0o644))
		bin := filepath.Join(t.TempDir(), "streamha")
		cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/streamha")
		cmd.Dir = dst
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return bin
	}
	run := func(bin, answers string) (int, string) {
		cmd := exec.Command(bin, "lab", "check", "5", "--answers", answers)
		cmd.Dir = dst
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		require.NoError(t, err)
		return 0, string(out)
	}

	bin := build("testdata/lab5-skeleton/mystrategy.go")
	code, text := run(bin, "labs/testdata/answers/5.yaml")
	assert.Equal(t, 1, code, text)
	assert.Contains(t, text, "FAILED: the conformance suite failed")

	bin = build("testdata/lab5-solution/mystrategy.go")
	code, text = run(bin, "labs/testdata/answers/5.yaml")
	assert.Equal(t, 0, code, text)
	assert.Contains(t, text, "PASS")
	assert.Contains(t, text, "lab complete")
	code, text = run(bin, "labs/testdata/wrong/5.yaml")
	assert.Equal(t, 1, code, text)
	assert.Contains(t, text, "WRONG  q4")
	assert.NotContains(t, text, `"gap"`, "a wrong answer is not told the expected one")

	// The solution registers its capabilities in its own package alone
	// (the streamha command imports it): it is then soaked and modelled
	// like a built-in strategy.
	soak := exec.Command(bin, "soak", "--strategy", "my-strategy", "--runs", "30", "--no-progress", "--json",
		"--out", filepath.Join(t.TempDir(), "soak"))
	soak.Dir = dst
	out, err := soak.CombinedOutput()
	require.NoError(t, err, string(out))
	var sum struct {
		Strategies []struct {
			Strategy       string `json:"strategy"`
			PreciseChecked int    `json:"precise_checked"`
			Failures       int    `json:"failures"`
		} `json:"strategies"`
	}
	require.NoError(t, json.Unmarshal(out, &sum), string(out))
	require.Len(t, sum.Strategies, 1, string(out))
	assert.Positive(t, sum.Strategies[0].PreciseChecked, "the soak holds my-strategy to its precise promise")
	assert.Zero(t, sum.Strategies[0].Failures, string(out))

	runOut := filepath.Join(t.TempDir(), "run")
	sim := exec.Command(bin, "run", "--config", "labs/05-own-strategy/experiment.yaml", "--strategy", "my-strategy",
		"--out", runOut, "--quiet")
	sim.Dir = dst
	out, err = sim.CombinedOutput()
	require.NoError(t, err, string(out))
	b, err := os.ReadFile(filepath.Join(runOut, "result.json"))
	require.NoError(t, err)
	var res struct {
		Runs []struct {
			Model map[string]float64 `json:"model"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	require.Len(t, res.Runs, 1)
	assert.Positive(t, res.Runs[0].Model["replay_ms"], "the report models my-strategy's replay")

	// A student's code that does not compile breaks the streamha
	// command's build, which names the file, and nothing else: the
	// production registry and the packages built on it still build.
	b, err = os.ReadFile("testdata/lab5-skeleton/mystrategy.go")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(skeleton, append(b, "\nfunc broken() { undefinedByTheStudent() }\n"...), 0o644))
	goCmd := func(args ...string) (string, error) {
		cmd := exec.Command(goBin, args...)
		cmd.Dir = dst
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	text, err = goCmd("build", "-o", filepath.Join(t.TempDir(), "streamha"), "./cmd/streamha")
	require.Error(t, err, text)
	assert.Contains(t, text, "mystrategy.go")
	text, err = goCmd("build", "./strategies/all", "./sim", "./reports", "./strategies/conformance")
	require.NoError(t, err, text)
}

// TestShippedSkeletonIsThePristineCopy keeps labs/testdata/lab5-skeleton
// in step with the skeleton the repository ships. It compares only in CI,
// where the working copy is a fresh clone: a student's clone holds their
// own mystrategy.go.
func TestShippedSkeletonIsThePristineCopy(t *testing.T) {
	if os.Getenv("CI") == "" {
		t.Skip("compares the shipped skeleton only in CI (CI=true): a student's clone holds their own")
	}
	have, err := os.ReadFile("05-own-strategy/mystrategy/mystrategy.go")
	require.NoError(t, err)
	pristine, err := os.ReadFile("testdata/lab5-skeleton/mystrategy.go")
	require.NoError(t, err)
	assert.Equal(t, string(pristine), string(have), "update labs/testdata/lab5-skeleton/mystrategy.go with the skeleton")
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

// TestLab6RejectsFiguresTheDefinitionWouldNotProduce: a cluster result
// without fault episodes (an older streamha), with a simulated run's
// tolerance, or whose recovery_ms is not its worst episode's is refused.
func TestLab6RejectsFiguresTheDefinitionWouldNotProduce(t *testing.T) {
	l, err := labs.Get(6)
	require.NoError(t, err)
	good, err := os.ReadFile("testdata/cluster-result.json")
	require.NoError(t, err)
	tests := map[string]struct{ from, to, want string }{
		"no episodes":          {`"episode_count": 1`, `"episode_count": 0`, "no fault episodes"},
		"simulated tolerance":  {`"tolerance_ms": 8.1`, `"tolerance_ms": 1.2`, "tolerance"},
		"not the worst":        {`"recovery_ms": 612.3, "max_added`, `"recovery_ms": 4586.0, "max_added`, "not its worst episode's"},
		"before the detection": {`"recovery_ms": 612.3,`, `"recovery_ms": 300.0,`, "below the episode's detection"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			bad := strings.Replace(string(good), tc.from, tc.to, -1)
			require.NotEqual(t, string(good), bad)
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "r.json"), []byte(bad), 0o644))
			res, err := l.Check(labs.Answers{"q1": {"r.json"}, "q2": {"612.3"}}, labs.Options{BaseDir: dir, ClusterAvailable: true})
			require.NoError(t, err)
			for _, v := range res.Verdicts {
				if v.Key == "q1" || v.Key == "q2" {
					assert.False(t, v.Right, "%s: %s", v.Key, v.Why)
					assert.Contains(t, v.Why, tc.want)
				}
			}
		})
	}
}

// TestEveryDiscussionReturnsToThePrediction keeps the outcome a
// prediction asks for out of the Background: the handout discusses it
// after the questions, once the student has checked the answers.
func TestEveryDiscussionReturnsToThePrediction(t *testing.T) {
	for _, l := range labs.All() {
		h := l.Handout()
		_, after, ok := strings.Cut(h, "## Questions")
		require.True(t, ok, l.Dir)
		assert.Contains(t, strings.Join(strings.Fields(after), " "), "after you checked your answers: was your prediction (p1) right", l.Dir)
	}
}
