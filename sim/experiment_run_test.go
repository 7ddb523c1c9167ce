package sim_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/sim"
)

func TestMemberlistDetectorModelIsSlower(t *testing.T) {
	detect := func(model string) float64 {
		y := strings.Replace(mapQuery, "detector: {heartbeat: 50ms, timeout: 200ms}", "detector: {model: "+model+", heartbeat: 100ms, timeout: 100ms}", 1)
		e, err := experiment.Parse([]byte(y+"faults: [{at: 2s, crash: A}]\n"), "t")
		require.NoError(t, err)
		cmp, err := sim.Compare(e, []string{"amnesia"})
		require.NoError(t, err)
		require.NotNil(t, cmp.Result.Runs[0].Recovery.DetectionMs)
		return *cmp.Result.Runs[0].Recovery.DetectionMs
	}
	plain, swim := detect("timeout"), detect("memberlist")
	require.InDelta(t, 150, plain, 50, "timeout + a phase in [0, heartbeat)")
	// 100 ms probe timeout + 4 × log10(6 hosts → 1) × 100 ms suspicion + phase
	require.InDelta(t, 550, swim, 50)
}
