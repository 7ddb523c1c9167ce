package cluster

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// nodeEnv makes the test binary act as `streamha node` when the
// launcher re-executes it.
const nodeEnv = "STREAMHA_CLUSTER_TEST_NODE"

func TestMain(m *testing.M) {
	if os.Getenv(nodeEnv) == "1" {
		os.Exit(NodeMain(os.Args[1:]))
	}
	if out := os.Getenv(netnsCoordEnv); out != "" {
		os.Exit(netnsCoordinatorMain(out))
	}
	goleak.VerifyTestMain(m)
}
