// Package labs holds streamha's teaching labs — one directory per lab with
// a handout (README.md), the experiment files it uses and a blank answers
// template — and the machinery behind `streamha lab list|show|check`.
//
// A check reruns, in the simulator and deterministically (the lab's own
// embedded experiment files and seeds), whatever the lab's questions are
// about, and says per question whether the student's answer is right and
// why, with the evidence it computed. Answers files are YAML with one key
// per question (q1: k03|w=10s); a list is accepted where a question asks
// for several items.
package labs

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed 0*/README.md 0*/*.yaml
var files embed.FS

// ErrExists marks a lab file that Init would overwrite with different
// content (a student's answers, say); it wraps ErrUsage.
var ErrExists = fmt.Errorf("%w: file exists", ErrUsage)

// ErrUsage marks errors the CLI reports with exit status 2: an unknown lab,
// an unreadable answers file or an unknown question key.
var ErrUsage = errors.New("lab usage")

// Question is one question of a lab.
type Question struct {
	Key  string
	Text string
}

// Lab is one lab.
type Lab struct {
	N       int
	Dir     string // directory under labs/, e.g. "01-gap-recovery"
	Title   string
	Summary string
	// Questions are in handout order.
	Questions []Question
	// check computes the verdicts for the given answers.
	check func(c *ctx) error
}

// Verdict is the outcome for one question.
type Verdict struct {
	Key      string `json:"key"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
	Right    bool   `json:"right"`
	// Why explains the verdict with the evidence computed by the check.
	Why string `json:"why"`
}

// Result is the outcome of a check.
type Result struct {
	Lab      int       `json:"lab"`
	Title    string    `json:"title"`
	Verdicts []Verdict `json:"verdicts"`
	// Notes are lab-level findings printed before the verdicts (the
	// conformance report of lab 5, for example).
	Notes []string `json:"notes,omitempty"`
	// Failed lists lab-level requirements that did not hold (besides the
	// answers), such as a failing conformance suite.
	Failed []string `json:"failed,omitempty"`
}

// AllRight reports whether every answer was right and every requirement held.
func (r *Result) AllRight() bool {
	if len(r.Failed) > 0 {
		return false
	}
	for _, v := range r.Verdicts {
		if !v.Right {
			return false
		}
	}
	return true
}

// Write prints the result for a student.
func (r *Result) Write(w io.Writer) {
	fmt.Fprintf(w, "lab %d: %s\n", r.Lab, r.Title)
	for _, n := range r.Notes {
		fmt.Fprintln(w, n)
	}
	right := 0
	for _, v := range r.Verdicts {
		mark := "WRONG"
		if v.Right {
			mark, right = "right", right+1
		}
		ans := v.Answer
		if ans == "" {
			ans = "(no answer)"
		}
		fmt.Fprintf(w, "\n%s  %s: %s\n    your answer: %s\n    %s\n", mark, v.Key, v.Question, ans, v.Why)
	}
	for _, f := range r.Failed {
		fmt.Fprintf(w, "\nFAILED: %s\n", f)
	}
	fmt.Fprintf(w, "\n%d of %d answers right", right, len(r.Verdicts))
	if r.AllRight() {
		fmt.Fprintln(w, ": lab complete.")
	} else {
		fmt.Fprintln(w, ".")
	}
}

// Options tune a check.
type Options struct {
	// ClusterAvailable says whether this build has `streamha cluster` (lab 6).
	ClusterAvailable bool
	// BaseDir resolves relative paths given in answers (lab 6's result
	// files); "" means the working directory.
	BaseDir string
}

// All returns the labs in order.
func All() []*Lab {
	return []*Lab{lab1(), lab2(), lab3(), lab4(), lab5(), lab6(), lab7(), lab8()}
}

// Get returns lab n.
func Get(n int) (*Lab, error) {
	for _, l := range All() {
		if l.N == n {
			return l, nil
		}
	}
	return nil, fmt.Errorf("%w: unknown lab %d (labs 1–%d; see 'streamha lab list')", ErrUsage, n, len(All()))
}

// Lookup parses a lab argument ("3", "03" or the directory name).
func Lookup(arg string) (*Lab, error) {
	for _, l := range All() {
		if arg == l.Dir {
			return l, nil
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(arg))
	if err != nil {
		return nil, fmt.Errorf("%w: unknown lab %q (give its number; see 'streamha lab list')", ErrUsage, arg)
	}
	return Get(n)
}

// Handout returns the lab's README.md.
func (l *Lab) Handout() string {
	b, err := fs.ReadFile(files, l.Dir+"/README.md")
	if err != nil {
		panic("labs: handout missing from the embedded files: " + err.Error())
	}
	return string(b)
}

// File returns one of the lab's embedded files (an experiment YAML).
func (l *Lab) File(name string) ([]byte, error) {
	b, err := fs.ReadFile(files, l.Dir+"/"+name)
	if err != nil {
		return nil, fmt.Errorf("lab %d: %w", l.N, err)
	}
	return b, nil
}

// Files lists the lab's files (handout, experiment files, blank answers)
// as slash-separated paths relative to the lab's directory, in lexical
// order.
func (l *Lab) Files() []string {
	var names []string
	err := fs.WalkDir(files, l.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			names = append(names, strings.TrimPrefix(p, l.Dir+"/"))
		}
		return nil
	})
	if err != nil {
		panic("labs: embedded files of " + l.Dir + ": " + err.Error())
	}
	return names
}

// Init writes the lab's files into dir (created if needed), keeping
// their relative paths, and returns the paths written. A file that exists
// with the same content is left alone; one with different content (a
// student's answers, say) is an ErrExists error unless overwrite is set,
// and then nothing at all is written.
func (l *Lab) Init(dir string, overwrite bool) ([]string, error) {
	names := l.Files()
	var write []string
	for _, n := range names {
		want, err := l.File(n)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, filepath.FromSlash(n))
		have, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("lab %d: %w", l.N, err)
		case bytes.Equal(have, want):
			continue
		case !overwrite:
			return nil, fmt.Errorf("%w: %s differs from lab %d's %s; move it away or pass --force to replace it", ErrExists, p, l.N, n)
		}
		write = append(write, n)
	}
	var written []string
	for _, n := range write {
		b, _ := l.File(n)
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, fmt.Errorf("lab %d: %w", l.N, err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return written, fmt.Errorf("lab %d: %w", l.N, err)
		}
		written = append(written, p)
	}
	return written, nil
}

// Template returns the blank answers template.
func (l *Lab) Template() string {
	b, _ := l.File("answers.yaml")
	return string(b)
}

// Answers are a student's answers: question key → items (one for a
// scalar, several for a list; none when left blank).
type Answers map[string][]string

// ParseAnswers reads an answers file for lab l: every key must be one of
// its questions.
func ParseAnswers(l *Lab, b []byte) (Answers, error) {
	var raw map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: answers: %w", ErrUsage, err)
	}
	a := Answers{}
	var keys []string
	for _, q := range l.Questions {
		keys = append(keys, q.Key)
	}
	for k, v := range raw {
		if !slices.Contains(keys, k) {
			return nil, fmt.Errorf("%w: answers: unknown question key %q for lab %d (keys: %s)", ErrUsage, k, l.N, strings.Join(keys, ", "))
		}
		switch x := v.(type) {
		case nil:
		case []any:
			for _, it := range x {
				if s := strings.TrimSpace(fmt.Sprint(it)); s != "" {
					a[k] = append(a[k], s)
				}
			}
		default:
			if s := strings.TrimSpace(fmt.Sprint(x)); s != "" {
				a[k] = []string{s}
			}
		}
	}
	return a, nil
}

// ReadAnswers reads and parses an answers file.
func ReadAnswers(l *Lab, path string) (Answers, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return ParseAnswers(l, b)
}

// Check reruns what lab l needs and grades the answers.
func (l *Lab) Check(a Answers, o Options) (*Result, error) {
	c := &ctx{lab: l, answers: a, opts: o, res: &Result{Lab: l.N, Title: l.Title}}
	if err := l.check(c); err != nil {
		return nil, fmt.Errorf("lab %d check: %w", l.N, err)
	}
	// Keep handout order.
	order := map[string]int{}
	for i, q := range l.Questions {
		order[q.Key] = i
	}
	slices.SortStableFunc(c.res.Verdicts, func(x, y Verdict) int { return order[x.Key] - order[y.Key] })
	return c.res, nil
}

// ctx is one check in progress.
type ctx struct {
	lab     *Lab
	answers Answers
	opts    Options
	res     *Result
}

func (c *ctx) question(key string) string {
	for _, q := range c.lab.Questions {
		if q.Key == key {
			return q.Text
		}
	}
	panic("labs: lab " + strconv.Itoa(c.lab.N) + " grades unknown question " + key)
}

func (c *ctx) add(key string, right bool, why string) {
	c.res.Verdicts = append(c.res.Verdicts, Verdict{
		Key: key, Question: c.question(key), Answer: strings.Join(c.answers[key], ", "), Right: right, Why: why,
	})
}

// unanswered records a blank answer; it gives a hint, not the answer.
func (c *ctx) unanswered(key, hint string) bool {
	if len(c.answers[key]) > 0 {
		return false
	}
	c.add(key, false, "no answer given. Hint: "+hint)
	return true
}

// number grades a numeric answer against the computed value within a
// relative tolerance (and an absolute one for values near zero).
func (c *ctx) number(key string, want, relTol, absTol float64, unit, evidence, hint string) {
	if c.unanswered(key, hint) {
		return
	}
	s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(c.answers[key][0], unit), "%"))
	got, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		c.add(key, false, fmt.Sprintf("want a number (in %s), got %q. %s", unitName(unit), c.answers[key][0], evidence))
		return
	}
	tol := max(absTol, math.Abs(want)*relTol)
	if unit != "" {
		unit = " " + unit
	}
	if math.Abs(got-want) <= tol {
		c.add(key, true, fmt.Sprintf("the check computed %s%s (tolerance ±%s). %s", fmtNum(want), unit, fmtNum(tol), evidence))
		return
	}
	c.add(key, false, fmt.Sprintf("the check computed %s%s, you gave %s (tolerance ±%s). %s", fmtNum(want), unit, fmtNum(got), fmtNum(tol), evidence))
}

// choice grades an answer that must be one of the accepted texts (case-insensitive).
func (c *ctx) choice(key string, accepted []string, evidence, hint string) {
	if c.unanswered(key, hint) {
		return
	}
	got := normalize(c.answers[key][0])
	for _, a := range accepted {
		if got == normalize(a) {
			c.add(key, true, evidence)
			return
		}
	}
	c.add(key, false, fmt.Sprintf("expected %s. %s", strings.Join(quoteAll(accepted), " or "), evidence))
}

// set grades a list answer that must equal the computed set (order ignored).
func (c *ctx) set(key string, want []string, evidence, hint string) {
	if c.unanswered(key, hint) {
		return
	}
	got := map[string]bool{}
	for _, a := range c.answers[key] {
		got[normalize(a)] = true
	}
	var missing, extra []string
	wantSet := map[string]bool{}
	for _, w := range want {
		wantSet[normalize(w)] = true
		if !got[normalize(w)] {
			missing = append(missing, w)
		}
	}
	for _, a := range c.answers[key] {
		if !wantSet[normalize(a)] {
			extra = append(extra, a)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		c.add(key, true, evidence)
		return
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing from your answer: "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "not in the computed set: "+strings.Join(extra, ", "))
	}
	c.add(key, false, strings.Join(parts, "; ")+". "+evidence)
}

func normalize(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Quote(x)
	}
	return out
}

func unitName(u string) string {
	if u == "" {
		return "plain units"
	}
	return u
}

func fmtNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e12 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// recoveryAnswers lists the accepted spellings of a recovery: "gap",
// "rollback/repeating", "repeating" (the subtype alone) and "rollback".
func recoveryAnswers(typ, sub string) []string {
	if sub == "" {
		return []string{typ}
	}
	return []string{typ + "/" + sub, sub, typ + " " + sub}
}
