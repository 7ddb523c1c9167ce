package hatest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScriptRoundTrip: a rewrite keeps comments, commands and inputs and
// replaces only the outputs.
func TestScriptRoundTrip(t *testing.T) {
	src := "# a comment\nsetup strategy=x\nname: e\n----\nold output\n\n# between\ndeliver from=A to=(B, C) id=#3 quiet\n----\nok\n\n# tail\n"
	s, err := ParseScript("t.txt", []byte(src))
	require.NoError(t, err)
	require.Len(t, s.Cmds, 2)
	c := s.Cmds[1]
	assert.Equal(t, "deliver", c.Name)
	assert.Equal(t, []Arg{{"from", []string{"A"}}, {"to", []string{"B", "C"}}, {"id", []string{"#3"}}, {"quiet", nil}}, c.Args)
	assert.Equal(t, "t.txt:8", c.Pos)
	assert.Equal(t, "name: e", s.Cmds[0].Input)
	assert.Equal(t, "old output", s.Cmds[0].Expected)
	assert.Equal(t, src, string(s.Format([]string{"old output", "ok"})))
	assert.Equal(t, "# a comment\nsetup strategy=x\nname: e\n----\nnew\n\n# between\ndeliver from=A to=(B, C) id=#3 quiet\n----\nok\n\n# tail\n",
		string(s.Format([]string{"new", "ok"})))
}

func TestScriptErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"start\n", `command "start" has no "----" line`},
		{"deliver =A\n----\n", `argument "=A" has no key`},
		{"deliver to=(A,B\n----\n", "unclosed list"},
	} {
		_, err := ParseScript("t.txt", []byte(tc.src))
		assert.ErrorContains(t, err, tc.want, tc.src)
	}
}

// TestCommandErrors: a bad command is an error in the transcript, never a
// panic.
func TestCommandErrors(t *testing.T) {
	e := NewInteractionEnv()
	for _, tc := range []struct{ line, want string }{
		{"start", "run setup first"},
		{"setup", "strategy= is required"},
		{"frobnicate", `unknown command "frobnicate"`},
		{"sink from=x", "from=x: want a non-negative integer"},
	} {
		s, err := ParseScript("t.txt", []byte(tc.line+"\n----\n"))
		require.NoError(t, err)
		_, err = e.Handle(s.Cmds[0])
		assert.ErrorContains(t, err, tc.want)
	}
}

func TestRanges(t *testing.T) {
	assert.Equal(t, "1..4,7,9..10,3", ranges([]uint64{1, 2, 3, 4, 7, 9, 10, 3}))
	assert.Equal(t, "", ranges(nil))
	assert.Equal(t, "1..5,7", joinRanges([]string{"1..3", "4..5,7"}))
}
