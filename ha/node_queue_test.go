package ha_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// TestOutputQueueGrowthAndTrimPatterns drives a retaining source through
// trim patterns that exercise each path of the output queue (new blocks,
// blocks taken back from the free list, trims inside a block, across
// blocks and down to empty) and checks that it always holds exactly the
// untrimmed outputs, in order.
func TestOutputQueueGrowthAndTrimPatterns(t *testing.T) {
	tests := []struct {
		name string
		// keep returns how many of the newest outputs survive the trim at
		// ms, or -1 for no trim then.
		keep func(ms int) int
	}{
		{"never trimmed", func(int) int { return -1 }},
		{"whole window once a second", func(ms int) int {
			if ms%100 == 0 {
				return 20
			}
			return -1
		}},
		{"everything every millisecond", func(int) int { return 0 }},
		{"half the queue every 7 ms", func(ms int) int {
			if ms%7 == 0 {
				return -2
			}
			return -1
		}},
		{"all but one tuple every millisecond", func(int) int { return 1 }},
		{"all but the last 300 every 10 ms (an ack interval)", func(ms int) int {
			if ms%10 == 0 {
				return 300
			}
			return -1
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := &fakeEnv{}
			src := newSource(t, env, 100_000)
			src.Start()
			var trimmed uint64
			var log []ha.Tuple // reused: a fresh copy of the queue every millisecond was most of the test's time
			for ms := 1; ms <= 300; ms++ {
				env.now = time.Duration(ms) * time.Millisecond
				src.Fire("ha.gen")
				switch k := tc.keep(ms); {
				case k == -2:
					trimmed += (src.OutputSeq() - trimmed) / 2
					src.TrimOutput(trimmed)
				case k >= 0:
					trimmed = src.OutputSeq() - uint64(k)
					src.TrimOutput(trimmed)
				}
				log = src.AppendOutput(log[:0], 0, src.OutputLen())
				require.Len(t, log, int(src.OutputSeq()-trimmed), "at %d ms", ms)
				bad := -1 // the first out-of-place seq (a plain loop: require per tuple is slow)
				for i := range log {
					if log[i].Seq != trimmed+uint64(i)+1 {
						bad = i
						break
					}
				}
				require.Equal(t, -1, bad, "at %d ms: retained outputs are contiguous and untrimmed", ms)
			}
			require.EqualValues(t, 30_000, src.OutputSeq())
			// What was sent is what the node emitted: the queue's block
			// reuse never reaches a sent batch (Send lends, fakeEnv copies).
			got := env.dataTo("A")
			require.Len(t, got, 30_000)
			bad := -1
			for i, s := range got {
				if s != uint64(i)+1 {
					bad = i
					break
				}
			}
			require.Equal(t, -1, bad, "what was sent is still what was sent")
		})
	}
}
