package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/streamha/streamha/ha"
)

// InvDeterminism: a run rerun from its experiment gives the same trace,
// event for event (streamha soak --check-determinism).
const InvDeterminism = "determinism"

// TraceHash is the SHA-256 of every event of a trace, deliveries included,
// in order.
func TraceHash(t *ha.Trace) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for ev := range t.All() {
		if err := enc.Encode(ev); err != nil {
			return "", fmt.Errorf("hash trace: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CheckDeterminism reruns a checked case's faulty run and compares its
// trace hash with the first run's (res.TraceHash, set when the case had
// HashTrace on); a mismatch is the determinism violation.
func CheckDeterminism(res *SoakResult) {
	c := res.Case
	if res.TraceHash == "" {
		return
	}
	again := &SoakResult{Case: c}
	again.check(SoakEventFactor, soakEventSlack)
	switch {
	case again.TraceHash == "":
		res.violate(InvDeterminism, "the rerun did not finish: %v", again.Violations)
	case again.TraceHash != res.TraceHash:
		res.violate(InvDeterminism, "the rerun's trace differs: sha256 %s, first run %s", again.TraceHash, res.TraceHash)
	}
}
