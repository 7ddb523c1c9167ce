package hatest_test

import (
	"testing"

	"github.com/streamha/streamha/ha/hatest"
	_ "github.com/streamha/streamha/strategies/all"
)

// TestInteraction runs every script under testdata. If it fails, run
// `go test ./ha/hatest -run TestInteraction -rewrite` and read the diff;
// commit the new transcript only if you understand the change and want it.
func TestInteraction(t *testing.T) {
	hatest.Walk(t, "testdata")
}

// TestInteractionFixes runs each script that names a fix ("# fix: name")
// with that bug planted: its transcript must change.
func TestInteractionFixes(t *testing.T) {
	if n := hatest.WalkFixes(t, "testdata"); n == 0 {
		t.Fatal("no script names a fix")
	}
}
