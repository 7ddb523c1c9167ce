package experiment

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file rewrites the YAML decoder's errors about an experiment in the
// file's own terms, "FILE:LINE: FIELD: problem": the line counted from 1,
// as an editor does, the field's path (source.rate, nodes[1].ops[0]), and
// never a Go type.

// yamlParserProblems are the messages of go.yaml.in/yaml/v3's parser
// (as opposed to its scanner). The decoder reports their line 0-based
// (the line where the unfinished construct began, minus one) and leaves
// it out when that is 0; the scanner's lines are right.
var yamlParserProblems = []string{
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected key",
	"did not find expected '-' indicator",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found undefined tag handle",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
	"found unknown directive name",
}

var (
	yamlSyntax   = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)
	yamlLine     = regexp.MustCompile(`^line (\d+): (.*)$`)
	yamlNotFound = regexp.MustCompile("^field (\\S+) not found in type \\S+$")
	yamlBadValue = regexp.MustCompile("^cannot unmarshal (!!\\w+)(?: `(.*)`)? into \\S+$")
	yamlGot      = regexp.MustCompile(`got ("(?:[^"\\]|\\.)*")`)
)

// explainYAMLError rewrites err, an error of decoding src (named name)
// into an Experiment. With lines false (YAML generated from the user's, as
// for a sweep point) line numbers are left out: they would point into a
// text the user never saw.
func explainYAMLError(name string, err error, src []byte, lines bool) error {
	var root yaml.Node
	_ = yaml.Unmarshal(src, &root) // a syntax error leaves no tree: messages keep their lines only
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = explainProblem(name, m, &root, lines)
		}
		if len(msgs) == 1 {
			return errors.New(msgs[0])
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	msg := err.Error()
	if m := yamlSyntax.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if slices.Contains(yamlParserProblems, m[2]) {
			line++
		}
		problem := "YAML syntax: " + m[2]
		if line > 0 && lines {
			return fmt.Errorf("%s:%d: %s", name, line, problem)
		}
		return fmt.Errorf("%s: %s", name, problem)
	}
	return errors.New(explainProblem(name, msg, &root, lines))
}

// explainProblem rewrites one "line N: problem" message.
func explainProblem(name, msg string, root *yaml.Node, lines bool) string {
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return name + ": " + msg
	}
	line, _ := strconv.Atoi(m[1])
	problem := m[2]
	where := func(path string) string {
		w := name
		if lines {
			w += ":" + m[1]
		}
		if path != "" {
			w += ": " + path
		}
		return w + ": "
	}
	if f := yamlNotFound.FindStringSubmatch(problem); f != nil {
		path, parent := findKey(root, line, f[1])
		text := "unknown field"
		if known := fieldsAt(parent); len(known) > 0 {
			in := parent
			if in == "" {
				in = "the experiment"
			}
			text += fmt.Sprintf(" (%s has: %s)", in, strings.Join(known, ", "))
		}
		if path == "" {
			path = f[1]
		}
		return where(path) + text
	}
	if f := yamlBadValue.FindStringSubmatch(problem); f != nil {
		path, got := findValue(root, line, f[1], f[2])
		want := "another kind of value"
		if t, ok := typeAt(path); ok {
			want = describeType(t)
		}
		return where(path) + "want " + want + ", got " + got
	}
	// The experiment's own unmarshalers write "line N: want …, got "x"".
	var path string
	if g := yamlGot.FindStringSubmatch(problem); g != nil {
		if v, err := strconv.Unquote(g[1]); err == nil {
			path, _ = findValue(root, line, "!!str", v)
		}
	}
	return where(path) + problem
}

// walkYAML calls fn for every node below n with its path.
func walkYAML(n *yaml.Node, path string, fn func(key, val *yaml.Node, path string)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkYAML(c, path, fn)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			fn(k, v, p)
			walkYAML(v, p, fn)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			fn(nil, c, p)
			walkYAML(c, p, fn)
		}
	}
}

// findKey returns the path of the mapping key name on line, and the path
// of the mapping holding it.
func findKey(root *yaml.Node, line int, name string) (path, parent string) {
	found := false
	walkYAML(root, "", func(k, _ *yaml.Node, p string) {
		if !found && k != nil && k.Line == line && k.Value == name {
			found, path = true, p
			parent = strings.TrimSuffix(strings.TrimSuffix(p, name), ".")
		}
	})
	return path, parent
}

// findValue returns the path of the value on line with the given tag and
// text (text "" for a mapping or list), and how to quote it.
func findValue(root *yaml.Node, line int, tag, text string) (path, got string) {
	got = map[string]string{"!!map": "a mapping", "!!seq": "a list"}[tag]
	if got == "" {
		got = strconv.Quote(text)
	}
	found := false
	walkYAML(root, "", func(_, v *yaml.Node, p string) {
		if found || v.Line != line || v.ShortTag() != tag {
			return
		}
		if (tag == "!!map" || tag == "!!seq") || v.Value == text {
			found, path = true, p
		}
	})
	return path, got
}

var experimentType = reflect.TypeFor[Experiment]()

// typeAt resolves a path (source.rate, nodes[1].name) to the Go type that
// holds it, by the yaml tags of Experiment.
func typeAt(path string) (reflect.Type, bool) {
	t := experimentType
	if path == "" {
		return t, true
	}
	for _, part := range strings.Split(path, ".") {
		name, _, _ := strings.Cut(part, "[")
		if name != "" {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			switch t.Kind() {
			case reflect.Struct:
				f, ok := fieldByTag(t, name)
				if !ok {
					return nil, false
				}
				t = f.Type
			case reflect.Map:
				t = t.Elem()
			default:
				return nil, false
			}
		}
		for range strings.Count(part, "[") {
			if t.Kind() != reflect.Slice {
				return nil, false
			}
			t = t.Elem()
		}
	}
	return t, true
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// fieldsAt lists the field names a mapping at path accepts ("" when it is
// not a fixed set).
func fieldsAt(path string) []string {
	t, ok := typeAt(path)
	if !ok {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			names = append(names, tag)
		}
	}
	return names
}

// describeType says what kind of YAML value a Go type takes.
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[Duration]():
		return "a duration such as 200ms"
	case reflect.TypeFor[Bandwidth]():
		return "a bit rate such as 1Gbps"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number ≥ 0"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return "another kind of value"
}
