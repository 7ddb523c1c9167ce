package hatest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Arg is one argument of a script command: a bare word (Key only), or
// key=value, or key=(v1,v2,...).
type Arg struct {
	Key  string
	Vals []string
}

// Cmd is one command of a script: its line, the input lines between the
// line and the "----" separator, and the output the file expects.
type Cmd struct {
	// Pos is "file:line" of the command line.
	Pos string
	// Name is the command's first word.
	Name string
	Args []Arg
	// Input is the text between the command line and "----" (an
	// experiment for setup), without its final newline.
	Input string
	// Expected is the output the script holds, without its final newline.
	Expected string

	// lead is the comments and blank lines before the command, kept for
	// a rewrite; line is the command line as written.
	lead []string
	line string
}

// Arg returns the values of argument key and whether it was given.
func (c *Cmd) Arg(key string) ([]string, bool) {
	for _, a := range c.Args {
		if a.Key == key {
			return a.Vals, true
		}
	}
	return nil, false
}

// Script is a parsed script file.
type Script struct {
	Path string
	Cmds []*Cmd
	// tail is the comments and blank lines after the last command.
	tail []string
}

// ParseScript reads a script: commands separated from their expected
// output by a line "----", the output ending at the next blank line (or
// the end of the file); lines starting with '#' and blank lines between
// commands are comments.
func ParseScript(path string, data []byte) (*Script, error) {
	s := &Script{Path: path}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var lead []string
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			lead = append(lead, l)
			i++
			continue
		}
		c := &Cmd{Pos: fmt.Sprintf("%s:%d", path, i+1), line: l, lead: lead}
		lead = nil
		var err error
		if c.Name, c.Args, err = parseLine(l); err != nil {
			return nil, fmt.Errorf("%s: %w", c.Pos, err)
		}
		i++
		var in []string
		for i < len(lines) && lines[i] != "----" {
			in = append(in, lines[i])
			i++
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s: command %q has no \"----\" line", c.Pos, c.Name)
		}
		c.Input = strings.Join(in, "\n")
		i++
		var out []string
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
			out = append(out, lines[i])
			i++
		}
		c.Expected = strings.Join(out, "\n")
		s.Cmds = append(s.Cmds, c)
	}
	s.tail = lead
	return s, nil
}

// parseLine splits a command line into its name and arguments.
func parseLine(l string) (string, []Arg, error) {
	var words []string
	for w := range strings.FieldsSeq(l) {
		// a parenthesised list may not contain spaces: "key=(a, b)" is
		// joined back into one word
		if n := len(words); n > 0 && strings.Count(words[n-1], "(") > strings.Count(words[n-1], ")") {
			words[n-1] += w
			continue
		}
		words = append(words, w)
	}
	name, rest := words[0], words[1:]
	args := make([]Arg, 0, len(rest))
	for _, w := range rest {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			args = append(args, Arg{Key: w})
			continue
		}
		if k == "" {
			return "", nil, fmt.Errorf("argument %q has no key", w)
		}
		if strings.HasPrefix(v, "(") {
			if !strings.HasSuffix(v, ")") {
				return "", nil, fmt.Errorf("argument %q: unclosed list", w)
			}
			v = strings.TrimSuffix(strings.TrimPrefix(v, "("), ")")
			var vals []string
			for x := range strings.SplitSeq(v, ",") {
				if x = strings.TrimSpace(x); x != "" {
					vals = append(vals, x)
				}
			}
			args = append(args, Arg{Key: k, Vals: vals})
			continue
		}
		args = append(args, Arg{Key: k, Vals: []string{v}})
	}
	return name, args, nil
}

// Format writes the script back with outputs[i] as the output of its i-th
// command (a rewrite keeps comments, commands and inputs as they are).
func (s *Script) Format(outputs []string) []byte {
	var b bytes.Buffer
	for i, c := range s.Cmds {
		for _, l := range c.lead {
			b.WriteString(l + "\n")
		}
		b.WriteString(c.line + "\n")
		if c.Input != "" {
			b.WriteString(c.Input + "\n")
		}
		b.WriteString("----\n")
		b.WriteString(outputs[i] + "\n")
		if i < len(s.Cmds)-1 && (len(s.Cmds[i+1].lead) == 0 || strings.TrimSpace(s.Cmds[i+1].lead[0]) != "") {
			b.WriteString("\n") // a blank line ends the output
		}
	}
	for _, l := range s.tail {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

// Files lists the scripts (*.txt) under dir, sorted.
func Files(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".txt") {
			files = append(files, p)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

// clean turns a command's output into what a script can hold: no blank
// lines (a blank line ends an output), no trailing spaces, "ok" for none.
func clean(out string) string {
	var keep []string
	for l := range strings.SplitSeq(out, "\n") {
		l = strings.TrimRight(l, " \t")
		if l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return "ok"
	}
	return strings.Join(keep, "\n")
}
