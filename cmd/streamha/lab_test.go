package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLabCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"list", []string{"lab", "list"}, 0, "Split brain"},
		{"show", []string{"lab", "show", "1"}, 0, "## Questions"},
		{"check right", []string{"lab", "check", "7", "--answers", "../../labs/testdata/answers/7.yaml"}, 0, "lab complete"},
		{"check wrong", []string{"lab", "check", "7", "--answers", "../../labs/testdata/wrong/7.yaml"}, 1, "WRONG"},
		{"unknown lab", []string{"lab", "check", "9", "--answers", "../../labs/testdata/answers/7.yaml"}, 2, "unknown lab 9"},
		{"unreadable answers", []string{"lab", "check", "7", "--answers", "nowhere.yaml"}, 2, "nowhere.yaml"},
		{"show unknown", []string{"lab", "show", "x"}, 2, "unknown lab"},
		{"check verbose", []string{"lab", "check", "7", "--verbose", "--answers", "../../labs/testdata/answers/7.yaml"}, 0, "see: streamha why --missing --run lab7-nofence"},
		{"no reveal for students", []string{"lab", "check", "7", "--reveal", "--answers", "../../labs/testdata/wrong/7.yaml"}, 2, "unknown flag: --reveal"},
		{"no guide for students", []string{"lab", "guide", "7"}, 2, `unknown command "guide"`},
		{"help points teachers to the docs", []string{"lab", "--help"}, 0, "'streamha docs teaching'"},
	}
	tests = append(tests, struct {
		name string
		args []string
		code int
		want string
	}{"unknown key", []string{"lab", "check", "1", "--answers", writeFile(t, "a.yaml", "q1: gap\nq9: 1\n")}, 2, `unknown question key "q9"`})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			assert.Equal(t, tt.code, code, out+errOut)
			assert.Contains(t, out+errOut, tt.want)
		})
	}
}

// runTeacherCLI runs the command tree of a teacher build (-tags teacher).
func runTeacherCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := executeRoot(context.Background(), newRootWith(&out, &errb, addTeacherCommands), args, &errb)
	return code, out.String(), errb.String()
}

// TestTeacherBuildRevealsTheAnswers checks the commands a teacher build
// adds; the student build has none of them (TestLabCommand).
func TestTeacherBuildRevealsTheAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"check reveal", []string{"lab", "check", "7", "--reveal", "--answers", "../../labs/testdata/wrong/7.yaml"}, 1, "expected (teacher): 70 messages"},
		{"guide needs --teacher", []string{"lab", "guide", "7"}, 2, "pass --teacher"},
		{"guide", []string{"lab", "guide", "7", "--teacher"}, 0, "- expected: 70 messages"},
		{"help says it is a teacher build", []string{"lab", "--help"}, 0, "This is a teacher build"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runTeacherCLI(tt.args...)
			assert.Equal(t, tt.code, code, out+errOut)
			assert.Contains(t, out+errOut, tt.want)
		})
	}
}

// TestSealedGuideForAssistants seals a teacher build's guide with a course
// key and opens it with the ordinary binary's 'lab open'.
func TestSealedGuideForAssistants(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "course.key")
	code, out, errOut := runCLI(t, "lab", "teacher-key", "--out", key)
	require.Equal(t, 0, code, out+errOut)
	code, _, errOut = runCLI(t, "lab", "teacher-key", "--out", key)
	assert.Equal(t, 2, code, "a course key is never replaced")
	assert.Contains(t, errOut, "exists")
	code, sealed, errOut := runTeacherCLI("lab", "guide", "7", "--teacher", "--seal", key)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, sealed, "70 messages")
	guide := filepath.Join(dir, "lab7.sealed")
	require.NoError(t, os.WriteFile(guide, []byte(sealed), 0o644))
	code, out, errOut = runCLI(t, "lab", "open", guide, "--key", key)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "- expected: 70 messages")
	other := filepath.Join(dir, "other.key")
	require.Equal(t, 0, first(runCLI(t, "lab", "teacher-key", "--out", other)))
	code, _, errOut = runCLI(t, "lab", "open", guide, "--key", other)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "sealed with another key")
	code, _, errOut = runCLI(t, "lab", "open", guide)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--key")
	_, help, _ := runCLI(t, "lab", "--help")
	assert.NotContains(t, help, "teacher-key", "the student's help lists no teacher command")
}

func first(code int, _, _ string) int { return code }
