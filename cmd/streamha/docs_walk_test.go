package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docSkips are the documented commands the walk does not run, by
// subcommand, each with its reason.
var docSkips = map[string]string{
	"cluster":     "starts real processes for seconds to minutes; cluster and TestInterruptedClusterExits130 run it",
	"node":        "one host of a real cluster, waiting for its peers",
	"bench":       "benchmarks take minutes, --quick too; runtime_bench_test.go covers the runtime benchmark",
	"chain-sweep": "about 90 s of simulation; TestChainSweepRestartsEveryFragment runs a small one",
	"serve":       "serves until interrupted; TestServeListsOpensAndComparesRuns drives it",
}

// docCommandSkips are single documented commands the walk does not run.
var docCommandSkips = map[string]string{
	"streamha lab open lab4-guide.sealed --key course.key": "needs a guide sealed by a teacher build; TestSealedGuideForAssistants seals and opens one",
	"streamha why": "names the command in prose; it needs an output id",
	"streamha classify --expected e.jsonl --observed o.jsonl":       "e.jsonl and o.jsonl stand for the user's own output logs",
	"streamha report merge --out sweep sweep-shard-0 sweep-shard-1": "the shard directories stand for a sharded sweep's output; TestSweepAndReportCommands merges real shards",
}

// placeholder is a token that stands for a value (NAME, DIR, X.yaml,
// OUTPUT-ID): a command holding one is a syntax summary, not a command.
var placeholder = regexp.MustCompile(`^-*[A-Z][A-Z0-9_-]*(\.[a-z]+|=.*)?$|^-*[a-z-]+=[A-Z]+$`)

// docCommand is one streamha command a document shows, split into
// &&-joined steps (cd and mkdir steps included).
type docCommand struct {
	text  string
	steps [][]string
}

// shellWords splits a command line as a POSIX shell would for the
// commands the documents show: single and double quotes, no expansion.
// Everything from a pipe, a redirection or a comment on is dropped.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == '\'' || ch == '"':
			j := strings.IndexByte(line[i+1:], ch)
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case !inWord && (ch == '|' || ch == '>' || ch == '#'):
			return words
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// parseDocCommand reads one command line of a document; false when it
// holds no streamha command or is a syntax summary.
func parseDocCommand(line string) (docCommand, bool) {
	line = strings.Join(strings.Fields(strings.ReplaceAll(line, "\\\n", " ")), " ")
	if strings.ContainsAny(line, "[…") || strings.Contains(line, "...") || strings.Contains(line, `\|`) {
		return docCommand{}, false
	}
	c := docCommand{text: line}
	found := false
	for _, part := range strings.Split(line, "&&") {
		w := shellWords(part)
		if len(w) == 0 {
			continue
		}
		for _, x := range w {
			if placeholder.MatchString(x) {
				return docCommand{}, false
			}
		}
		switch w[0] {
		case "streamha":
			found = true
		case "cd", "mkdir":
		default:
			return docCommand{}, false
		}
		c.steps = append(c.steps, w)
	}
	return c, found
}

// inlineCommand is a streamha command quoted in Markdown text.
var inlineCommand = regexp.MustCompile("`(streamha [^`]+)`")

// markdownCommands lists the streamha commands a Markdown document shows,
// in order: the lines of its sh code blocks and its inline code spans.
func markdownCommands(doc string, isName func([]string) bool) []docCommand {
	var out []docCommand
	inFence := false
	var prose strings.Builder
	flush := func() {
		for _, m := range inlineCommand.FindAllStringSubmatch(prose.String(), -1) {
			if c, ok := parseDocCommand(m[1]); ok && !(len(c.steps) == 1 && isName(c.steps[0][1:])) {
				out = append(out, c)
			}
		}
		prose.Reset()
	}
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			if !inFence {
				flush()
			}
			inFence = !inFence
			continue
		}
		if inFence {
			if c, ok := parseDocCommand(strings.TrimSpace(line)); ok {
				out = append(out, c)
			}
			continue
		}
		prose.WriteString(line + "\n")
	}
	flush()
	return out
}

// helpExamples lists the commands of every --help example, the run
// command's first: later examples read the run it leaves in streamha-out.
func helpExamples(root *cobra.Command) []docCommand {
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	slices.SortStableFunc(cmds, func(a, b *cobra.Command) int {
		return bool2int(b.Name() == "run") - bool2int(a.Name() == "run")
	})
	var out []docCommand
	for _, c := range cmds {
		for _, line := range strings.Split(strings.ReplaceAll(c.Example, "\\\n", " "), "\n") {
			if dc, ok := parseDocCommand(strings.TrimSpace(line)); ok {
				out = append(out, dc)
			}
		}
		out = append(out, docCommand{text: "cd -"}) // each command's examples start from the same directory
	}
	return out
}

func bool2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

// shortened makes a documented command quick enough for the suite without
// changing what it exercises: one seed and one strategy for a sweep, three
// runs for a soak.
func shortened(args []string) []string {
	out := slices.Clone(args)
	set := func(flag, v string) {
		if i := slices.Index(out, flag); i >= 0 && i+1 < len(out) {
			out[i+1] = v
			return
		}
		out = append(out, flag, v)
	}
	switch out[0] {
	case "sweep":
		set("--seeds", "1")
		if !slices.Contains(out, "--strategy") {
			out = append(out, "--strategy", "passive-standby")
		}
		out = append(out, "--no-progress")
	case "soak":
		set("--runs", "3")
	}
	return out
}

// runDocCommands runs commands in a fresh directory tree from base, as a
// user with only the binary would: each step in the directory the earlier
// cd steps left, every streamha step with exit status 0 (1 is allowed for
// 'lab check' of blank answers).
func runDocCommands(t *testing.T, base, source string, cmds []docCommand, ran map[string]bool) {
	t.Helper()
	dir := base
	for _, c := range cmds {
		if c.text == "cd -" {
			dir = base
			continue
		}
		if reason, ok := docCommandSkips[c.text]; ok {
			t.Logf("%s: skipped %q: %s", source, c.text, reason)
			continue
		}
		for _, step := range c.steps {
			switch step[0] {
			case "mkdir":
				require.NoError(t, os.MkdirAll(filepath.Join(dir, step[len(step)-1]), 0o755), c.text)
				continue
			case "cd":
				dir = filepath.Join(dir, step[1])
				continue
			}
			args := step[1:]
			if len(args) > 0 {
				if reason, ok := docSkips[args[0]]; ok {
					t.Logf("%s: skipped %q: %s", source, c.text, reason)
					break
				}
			}
			key := dir + "\x00" + strings.Join(args, " ")
			if ran[key] && args[0] != "lab" {
				continue // the same command in the same directory: once is enough
			}
			ran[key] = true
			if len(args) == 0 {
				args = []string{"--help"}
			}
			start := time.Now()
			code, out, errOut := runBinary(t, dir, shortened(args)...)
			t.Logf("%s: %q took %s", source, strings.Join(shortened(args), " "), time.Since(start).Round(time.Millisecond))
			ok := code == 0 || (code == exitFailure && len(args) >= 2 && args[0] == "lab" && args[1] == "check")
			assert.True(t, ok, "%s: %q exited %d in %s\n%s%s", source, c.text, code, dir, out, errOut)
		}
	}
}

// TestEveryDocumentedCommandWorksFromTheBinaryAlone runs every streamha
// command the README and the --help examples show, in an empty directory
// with only the built binary, in the order they are shown: built-in
// examples stand in for files, and what one command writes the next one
// reads. Syntax summaries (with NAME, [...], …) are not commands; the
// skips above name their reasons; sweeps and soaks run with one seed,
// one strategy or three runs. The labs' handouts are walked by
// TestEveryLabWorksFromTheBinaryAlone.
func TestEveryDocumentedCommandWorksFromTheBinaryAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the streamha binary: skipped with -short")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	root := newRootWith(io.Discard, io.Discard, nil)
	// One directory for both, as for a user who reads on: a command
	// shown twice runs once.
	base, ran := t.TempDir(), map[string]bool{}
	for _, tt := range []struct {
		name string
		cmds []docCommand
	}{
		{"README", markdownCommands(string(readme), commandName(root))},
		{"help", helpExamples(root)},
	} {
		require.NotEmpty(t, tt.cmds, tt.name)
		runDocCommands(t, base, tt.name, tt.cmds, ran)
	}
}

// runsBare are the commands that do something useful with no argument
// or flag; prose that names another command alone ("`streamha sweep`
// shows …", "`streamha trace export` writes …") names it without the
// input it needs, and the walk does not run it.
var runsBare = []string{"run", "examples", "strategies", "operators", "docs", "version"}

// commandName says whether words are only the name of a command that
// needs arguments.
func commandName(root *cobra.Command) func([]string) bool {
	return func(words []string) bool {
		if len(words) == 0 {
			return false
		}
		c, rest, err := root.Find(words)
		return err == nil && c != root && len(rest) == 0 && !slices.Contains(runsBare, strings.Join(words, " "))
	}
}

// TestDocumentCommandParsing checks what the walk takes for a command.
func TestDocumentCommandParsing(t *testing.T) {
	tests := []struct {
		line  string
		ok    bool
		steps [][]string
	}{
		{"streamha why 'k00|w=10s' --run streamha-out/latest", true, [][]string{{"streamha", "why", "k00|w=10s", "--run", "streamha-out/latest"}}},
		{"mkdir lab1 && cd lab1 && streamha lab init 1", true, [][]string{{"mkdir", "lab1"}, {"cd", "lab1"}, {"streamha", "lab", "init", "1"}}},
		{"streamha docs global-checkpoint | less", true, [][]string{{"streamha", "docs", "global-checkpoint"}}},
		{"streamha soak --runs 1000   # a comment", true, [][]string{{"streamha", "soak", "--runs", "1000"}}},
		{"streamha run [--config X.yaml]", false, nil},
		{"streamha examples NAME", false, nil},
		{"streamha sweep --param NAME=V1,V2", false, nil},
		{"go run ./cmd/streamha run", false, nil},
		{"streamha lab list \\| init N", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			c, ok := parseDocCommand(tt.line)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.steps, c.steps)
		})
	}
	var buf bytes.Buffer
	buf.WriteString("```sh\nstreamha run\ngo test ./...\n```\nthen `streamha why --first-wrong --run\nstreamha-out/latest`, `streamha trace export` and `streamha examples NAME`.\n")
	cmds := markdownCommands(buf.String(), commandName(newRootWith(io.Discard, io.Discard, nil)))
	require.Len(t, cmds, 2)
	assert.Equal(t, "streamha run", cmds[0].text)
	assert.Equal(t, "streamha why --first-wrong --run streamha-out/latest", cmds[1].text)
}
