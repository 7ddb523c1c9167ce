package ha_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streamha/streamha/ha"
)

func TestScratchUB(t *testing.T) {
	chains := map[string]string{
		"tumble": `duration: 4s
drain: 2s
source: {rate: 2000, keys: 16}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 200ms, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
spares: 2
network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
detector: {heartbeat: 50ms, timeout: 200ms}
`,
		"slide": `duration: 4s
drain: 2s
source: {rate: 2000, keys: 16}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}]}
  - {name: B, ops: [{sliding: {size: 1s, slide: 250ms, agg: avg}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
spares: 2
network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
detector: {heartbeat: 50ms, timeout: 200ms}
`,
	}
	hosts := []string{"src", "A", "A.1", "A.2", "B", "B.1", "B.2", "C", "C.1", "C.2", "sink"}
	others := func(h string) string {
		var o []string
		for _, x := range hosts {
			if x != h {
				o = append(o, x)
			}
		}
		return strings.Join(o, ", ")
	}
	_ = others
	var faults []string
	for _, at := range []string{"1.5s", "2.05s", "3.9s"} {
		for _, d := range []string{"150ms", "260ms", "600ms"} {
			for _, g := range []string{"[[A, C], [src, A.1, A.2, B, B.1, B.2, C.1, C.2, sink]]",
				"[[src, A, A.1, A.2], [B, B.1, B.2, C, C.1, C.2, sink]]",
				"[[src, A, A.1, A.2, B, B.1, B.2], [C, C.1, C.2, sink]]",
				"[[B, B.1], [src, A, A.1, A.2, B.2, C, C.1, C.2, sink]]",
				"[[A, B.1], [src, A.1, A.2, B, B.2, C, C.1, C.2, sink]]",
				"[[B, C.1], [src, A, A.1, A.2, B.1, B.2, C, C.2, sink]]",
				"[[C, sink], [src, A, A.1, A.2, B, B.1, B.2, C.1, C.2]]",
				"[[src, A], [A.1, A.2, B, B.1, B.2, C, C.1, C.2, sink]]"} {
				faults = append(faults, fmt.Sprintf("{at: %s, for: %s, partition: %s}", at, d, g))
			}
			faults = append(faults, fmt.Sprintf("{at: %s, for: %s, loss: {p: 0.3}}", at, d))
		}
		faults = append(faults, fmt.Sprintf("{at: %s, crash: A}, {at: %s, crash: C}", at, at))
		faults = append(faults, fmt.Sprintf("{at: %s, crash: B}, {at: 2.8s, crash: B.1}", at))
	}
	for name, ch := range chains {
		for _, f := range faults {
			for seed := 1; seed <= 2; seed++ {
				for _, strat := range []string{"upstream-backup"} {
					y := ch + "faults: [" + f + "]\n"
					r := runPlanted(t, y, seed, strat, ha.PlantNone)
					if r.rec.Missing > 0 || r.rec.LostInputs > 0 {
						t.Logf("LOSS %s %s %d %s: %s miss=%d dup=%d wrong=%d lost=%d", name, f, seed, strat, r.rec.Type, r.rec.Missing, r.rec.Duplicates, r.rec.Wrong, r.rec.LostInputs)
					}
				}
			}
		}
	}
}
