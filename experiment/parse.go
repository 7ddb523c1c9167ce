package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ReadFile reads an experiment (or sweep) file of at most the size the
// options allow; a larger one, or one that never ends, is an error
// after one byte more than the bound is read.
func ReadFile(path string, o ParseOptions) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	defer f.Close()
	max := o.limits().MaxFileSize
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, path, err)
	}
	if len(b) > max {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes%s", ErrConfig, path, max, largeHint(o))
	}
	return b, nil
}

// Load reads and validates an experiment file.
func Load(path string) (*Experiment, error) { return LoadWith(path, ParseOptions{}) }

// LoadWith is Load with options.
func LoadWith(path string, o ParseOptions) (*Experiment, error) {
	b, err := ReadFile(path, o)
	if err != nil {
		return nil, err
	}
	return ParseWith(b, path, o)
}

// Parse decodes and validates an experiment; name is used in errors.
// Missing fields take the defaults of the built-in experiment's models;
// unknown fields are errors.
func Parse(b []byte, name string) (*Experiment, error) { return ParseWith(b, name, ParseOptions{}) }

// ParseWith is Parse with options. Errors name the file, the line and
// the field: "FILE:LINE: FIELD: problem".
func ParseWith(b []byte, name string, o ParseOptions) (*Experiment, error) {
	if max := o.limits().MaxFileSize; len(b) > max {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes%s", ErrConfig, name, max, largeHint(o))
	}
	var root yaml.Node
	docs := yaml.NewDecoder(bytes.NewReader(b))
	if err := docs.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s: empty file", ErrConfig, name)
		}
		return nil, fmt.Errorf("%w: %w", ErrConfig, explainYAMLError(name, err, b, !o.NoLines))
	}
	var second yaml.Node
	if err := docs.Decode(&second); err == nil {
		return nil, fmt.Errorf("%w: %s:%d: a second YAML document: an experiment file holds one", ErrConfig, name, second.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s: after the first document: %w", ErrConfig, name, err)
	}
	fl := indexLines(&root)
	fl.hide = o.NoLines
	e := &Experiment{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(e); err != nil {
		if ve := (*valueError)(nil); errors.As(err, &ve) {
			return nil, fl.decodeError(name, err)
		}
		// Unknown fields and wrong types: the YAML's own words, never a
		// Go type name.
		return nil, fmt.Errorf("%w: %w", ErrConfig, explainYAMLError(name, err, b, !o.NoLines))
	}
	e.opts = o
	e.fillDefaults()
	if err := e.Validate(); err != nil {
		return nil, fl.located(name, err)
	}
	return e, nil
}

// decodeError names the field of a decoding error.
func (fl fieldLines) decodeError(name string, err error) error {
	var ve *valueError
	if errors.As(err, &ve) {
		p, ok := fl.at[[2]int{ve.line, ve.col}]
		switch {
		case ok && fl.hide:
			return fmt.Errorf("%w: %s: %s: %s", ErrConfig, name, p, ve.msg)
		case ok:
			return fmt.Errorf("%w: %s:%d: %s: %s", ErrConfig, name, ve.line, p, ve.msg)
		}
		return fmt.Errorf("%w: %s:%d: %s", ErrConfig, name, ve.line, ve.msg)
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, 0, len(te.Errors))
		for _, m := range te.Errors {
			msgs = append(msgs, fl.nameLine(m))
		}
		return fmt.Errorf("%w: %s: %s", ErrConfig, name, strings.Join(msgs, "; "))
	}
	return fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
}

// nameLine adds the field to one of yaml's "line N: problem" messages:
// the field on that line whose value the message quotes, else the first.
func (fl fieldLines) nameLine(m string) string {
	var line int
	if _, err := fmt.Sscanf(m, "line %d:", &line); err != nil {
		return m
	}
	var paths []string
	for pos, p := range fl.at {
		if pos[0] == line {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return m
	}
	slices.Sort(paths)
	pick := paths[0]
	for _, p := range paths {
		if strings.Contains(m, "field "+p[strings.LastIndexAny(p, ".]")+1:]+" ") {
			pick = p
		}
	}
	if i := strings.Index(m, "`"); i >= 0 {
		if j := strings.Index(m[i+1:], "`"); j >= 0 {
			quoted := m[i+1 : i+1+j]
			for pos, p := range fl.at {
				if pos[0] == line && fl.valueAt(pos) == quoted {
					pick = p
				}
			}
		}
	}
	return fmt.Sprintf("%s (field %s)", m, pick)
}
