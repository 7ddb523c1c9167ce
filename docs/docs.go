// Package docs holds streamha's documentation pages, embedded in the binary
// so that 'streamha docs TOPIC' shows them to a user who has only the
// binary.
package docs

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed *.md strategies/*.md
var files embed.FS

// Topic is one documentation page.
type Topic struct {
	// Name is what 'streamha docs NAME' takes: "semantics",
	// "strategies/global-checkpoint".
	Name string
	// Title is the page's first heading.
	Title string
}

// Topics lists every page, top-level pages first, by name.
func Topics() []Topic {
	var out []Topic
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".md" {
			return err
		}
		b, _ := fs.ReadFile(files, p)
		out = append(out, Topic{Name: strings.TrimSuffix(p, ".md"), Title: title(b)})
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		di, dj := strings.Contains(out[i].Name, "/"), strings.Contains(out[j].Name, "/")
		if di != dj {
			return !di
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// title is a page's first Markdown heading, without the leading #.
func title(b []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if t, ok := strings.CutPrefix(sc.Text(), "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// Page returns the page a topic names: its name as Topics lists it, with or
// without a "docs/" prefix and ".md" suffix, or the last part of a
// strategy page's name ("global-checkpoint").
func Page(topic string) (string, error) {
	name := strings.TrimSuffix(strings.TrimPrefix(topic, "docs/"), ".md")
	name = strings.TrimSuffix(name, "/")
	candidates := []string{name + ".md", "strategies/" + name + ".md"}
	for _, c := range candidates {
		if b, err := fs.ReadFile(files, c); err == nil {
			return string(b), nil
		}
	}
	var names []string
	for _, t := range Topics() {
		names = append(names, t.Name)
	}
	return "", fmt.Errorf("no documentation page %q (pages: %s)", topic, strings.Join(names, ", "))
}
