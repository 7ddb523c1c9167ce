package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/streamha/streamha/strategies"
)

// TestDocsAndExamplesNeedNoClone checks what a user with only the binary
// reaches: the documentation pages, the built-in examples by name wherever
// a file is taken, and an error for a missing file that points to them.
func TestDocsAndExamplesNeedNoClone(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"docs lists pages", []string{"docs"}, 0, "strategies/global-checkpoint"},
		{"docs prints a page", []string{"docs", "semantics"}, 0, "# Recovery semantics and metrics"},
		{"docs by strategy name", []string{"docs", "global-checkpoint"}, 0, "# Global checkpoint"},
		{"docs with a path", []string{"docs", "docs/teaching.md"}, 0, "# Teaching with streamha"},
		{"unknown page", []string{"docs", "nope"}, 2, "pages: architecture"},
		{"run an example by name", []string{"run", "--config", "union", "--strategy", "amnesia", "--no-out", "--quiet"}, 0, "experiment union"},
		{"run an example by its repository path", []string{"run", "--config", "examples/union.yaml", "--strategy", "amnesia", "--no-out", "--quiet"}, 0, "experiment union"},
		{"missing file", []string{"run", "--config", "nowhere.yaml"}, 2, "'streamha examples' lists them"},
		{"missing spec", []string{"sweep", "--spec", "nowhere.yaml"}, 2, "'streamha examples' lists them"},
		{"missing experiment of a sweep", []string{"sweep", "--config", "nowhere.yaml", "--param", "source.rate=100"}, 2, "no built-in example of that name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			assert.Equal(t, tt.code, code, out+errOut)
			assert.Contains(t, out+errOut, tt.want)
		})
	}
}

// TestRootHelpNamesEveryStrategy checks the root help names the
// registry's strategies, so a new one needs no edit of the text.
func TestRootHelpNamesEveryStrategy(t *testing.T) {
	_, out, _ := runCLI(t, "--help")
	for _, n := range strategies.Names(false) {
		assert.Contains(t, out, n)
	}
}

// TestCompletionOffersNames checks shell completion of strategies, labs,
// examples and documentation pages.
func TestCompletionOffersNames(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--strategy", ""}, []string{"all", "global-checkpoint", "upstream-backup"}},
		{[]string{"sweep", "--strategy", "amnesia,"}, []string{"amnesia,passive-standby"}},
		{[]string{"lab", "check", ""}, []string{"1\tGap recovery", "8\t"}},
		{[]string{"examples", ""}, []string{"union", "sweep-checkpoint", "all"}},
		{[]string{"sweep", "--spec", ""}, []string{"sweep-checkpoint"}},
		{[]string{"docs", ""}, []string{"semantics\t"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"__complete"}, tt.args...)...)
			assert.Equal(t, 0, code, errOut)
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
		})
	}
}
