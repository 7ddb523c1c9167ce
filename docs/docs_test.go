package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/docs"
)

func TestEveryPageHasATitleAndOpens(t *testing.T) {
	topics := docs.Topics()
	require.NotEmpty(t, topics)
	pages, err := filepath.Glob("*.md")
	require.NoError(t, err)
	sub, err := filepath.Glob("strategies/*.md")
	require.NoError(t, err)
	assert.Len(t, topics, len(pages)+len(sub), "every page of docs/ is built in")
	for _, tp := range topics {
		assert.NotEmpty(t, tp.Title, tp.Name)
		p, err := docs.Page(tp.Name)
		require.NoError(t, err, tp.Name)
		assert.Contains(t, p, "# "+tp.Title)
	}
	for _, alias := range []string{"docs/semantics.md", "semantics.md", "global-checkpoint", "strategies/"} {
		_, err := docs.Page(alias)
		assert.NoError(t, err, alias)
	}
	_, err = docs.Page("nope")
	assert.ErrorContains(t, err, "pages: architecture")
}

// TestEveryDocsPointerOpens checks that every 'streamha docs TOPIC' the
// help texts, reports, handouts and pages name is a page the binary has.
func TestEveryDocsPointerOpens(t *testing.T) {
	pointer := regexp.MustCompile(`streamha docs ([a-z][a-z/-]*[a-z])`)
	var files []string
	for _, g := range []string{"../cmd/streamha/*.go", "../reports/*.go", "../labs/*.go", "../labs/0*/README.md", "../README.md", "*.md", "strategies/*.md", "../sim/*.go"} {
		m, err := filepath.Glob(g)
		require.NoError(t, err)
		files = append(files, m...)
	}
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range pointer.FindAllStringSubmatch(string(b), -1) {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			found++
			_, err := docs.Page(m[1])
			assert.NoError(t, err, "%s names 'streamha docs %s'", f, m[1])
		}
	}
	assert.Greater(t, found, 10)
}
