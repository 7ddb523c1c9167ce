package labs

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	// Predict marks a question to answer before running anything ("p1"):
	// it is checked like the others, against what the run then shows.
	Predict bool
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
	// Why explains the verdict: for a right answer the evidence the check
	// computed; for a wrong one the likely confusion and where to look,
	// never the expected value.
	Why string `json:"why"`
	// Look is a command that shows the evidence (often `streamha why`).
	Look string `json:"look,omitempty"`
	// Expected, Evidence and Confusions are set only with Options.Reveal
	// (a teacher's view): the expected answer, what the check computed
	// and the confusions it recognises.
	Expected   string   `json:"expected,omitempty"`
	Evidence   string   `json:"evidence,omitempty"`
	Confusions []string `json:"confusions,omitempty"`
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

// Write prints the result for a student: every verdict, with the
// explanation of wrong answers; verbose adds the evidence and the command
// that shows it for right answers too.
func (r *Result) Write(w io.Writer, verbose bool) {
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
		fmt.Fprintf(w, "\n%s  %s: %s\n    your answer: %s\n", mark, v.Key, v.Question, ans)
		if (!v.Right || verbose) && v.Why != "" {
			fmt.Fprintf(w, "    %s\n", v.Why)
		}
		if (!v.Right || verbose) && v.Look != "" {
			fmt.Fprintf(w, "    see: %s\n", v.Look)
		}
		if v.Expected != "" {
			fmt.Fprintf(w, "    expected (teacher): %s\n", v.Expected)
		}
		if v.Evidence != "" && !v.Right {
			fmt.Fprintf(w, "    evidence (teacher): %s\n", v.Evidence)
		}
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
	// Reveal adds the expected answers and the check's evidence to every
	// verdict: a teacher's view ('lab check --reveal', 'lab guide').
	Reveal bool
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
