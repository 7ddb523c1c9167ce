package reports

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGlossaryExplainsEveryColumn: each column of the terminal table but
// the strategy name has a glossary entry.
func TestGlossaryExplainsEveryColumn(t *testing.T) {
	var names []string
	for _, g := range Glossary {
		names = append(names, strings.Split(g.Name, ", ")...)
	}
	for _, c := range runColumns {
		if c.fileOnly || c.head == "strategy" || c.head == "recovery" {
			continue
		}
		assert.Contains(t, names, c.head, "column %q has no glossary entry", c.head)
	}
	for _, v := range []string{"precise", "gap", "rollback/repeating", "rollback/convergent", "rollback/divergent"} {
		assert.Contains(t, names, v)
	}
}
