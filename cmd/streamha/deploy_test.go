package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// nodeArgs walks a decoded YAML document and collects every argument list
// that starts with the node subcommand (compose "command") or belongs to a
// container running streamha node (Kubernetes "args").
func nodeArgs(v any, out *[][]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if (k == "command" || k == "args") && isNodeArgs(c) {
				*out = append(*out, toStrings(c))
				continue
			}
			nodeArgs(c, out)
		}
	case []any:
		for _, c := range x {
			nodeArgs(c, out)
		}
	}
}

func isNodeArgs(v any) bool {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return false
	}
	s, _ := l[0].(string)
	return s == "node"
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestDeployFilesUseRealNodeFlags keeps the docker-compose file and the
// Kubernetes manifest (which cannot run here: no Docker engine) honest:
// they parse, and every flag they pass to 'streamha node' exists.
func TestDeployFilesUseRealNodeFlags(t *testing.T) {
	files := []string{
		filepath.Join("..", "..", "deploy", "docker-compose.yml"),
		filepath.Join("..", "..", "deploy", "k8s", "streamha.yaml"),
	}
	flags := newNodeCmd().Flags()
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			dec := yaml.NewDecoder(bytes.NewReader(b))
			var lists [][]string
			for {
				var doc any
				err := dec.Decode(&doc)
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err, "%s parses as YAML", f)
				nodeArgs(doc, &lists)
			}
			require.NotEmpty(t, lists, "%s runs streamha node", f)
			for _, args := range lists {
				for _, a := range args[1:] {
					name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
					require.True(t, strings.HasPrefix(a, "--"), "%s: %q is a flag", f, a)
					require.NotNil(t, flags.Lookup(name), "%s: streamha node has no flag --%s", f, name)
				}
			}
		})
	}
}
