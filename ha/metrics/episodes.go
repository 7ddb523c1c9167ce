package metrics

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

// Episode is one fault episode's figures: faults that overlap or follow
// one another within the episode window form one episode, and each
// episode is timed from its own start (docs/semantics.md, "Fault
// episodes").
type Episode struct {
	// StartMs is when the episode's first fault began, EndMs when its last
	// fault ended (a crash ends when it happens; a pause, partition or
	// link fault when it heals), both from the start of the run.
	StartMs float64 `json:"start_ms"`
	EndMs   float64 `json:"end_ms"`
	// Faults names the episode's faults in order ("crash B at 10.4s").
	Faults []string `json:"faults"`
	// DetectionMs is episode start → the first node declaring a host of
	// the episode dead (any host, for a partition or link fault); nil when
	// no node did before the next episode.
	DetectionMs *float64 `json:"detection_ms"`
	// RecoveryMs is episode start → the recovery point; nil when the
	// episode did not recover before the run ended (NotRecovered).
	RecoveryMs   *float64 `json:"recovery_ms"`
	NotRecovered bool     `json:"not_recovered"`
	// ObservedMs is, for an episode that did not recover, episode start →
	// the end of the run.
	ObservedMs *float64 `json:"observed_ms,omitempty"`
	// Late counts the episode's expected outputs delivered after their
	// due time; Missing those never delivered.
	Late    int `json:"late"`
	Missing int `json:"missing"`
	// MaxAddedLatencyMs is the largest delay of an output of the episode
	// against the same output in the strategy's own failure-free run.
	MaxAddedLatencyMs float64 `json:"max_added_latency_ms"`
	// UnavailableMs is the longest interval without output from the
	// episode start until the next episode (or the last due output),
	// minus the own failure-free run's longest inter-output gap.
	UnavailableMs float64 `json:"unavailable_ms"`
}

// Text is the episode's recovery as the table prints it: "221.0", or
// "not recovered (> 9.7 s)".
func (e Episode) Text() string {
	return recoveryText(e.RecoveryMs, e.NotRecovered, e.ObservedMs)
}

// DefaultEpisodeWindow is the episode window used when neither the caller
// nor the trace gives one (no node detected anything): the default
// detector's timeout plus its heartbeat.
const DefaultEpisodeWindow = 250 * time.Millisecond

// faultSpan is one fault as the trace records it.
type faultSpan struct {
	start, end time.Duration
	// hosts are the crashed or paused hosts; all is set for a partition
	// or a link fault, whose detections may name any host.
	host  string
	all   bool
	label string
}

// faultSpans lists the faults of a trace in the order they began: crashes,
// pauses, partitions (until their heal, or the end of the run) and
// delay, loss or corrupt faults on links.
func faultSpans(trace *ha.Trace, end time.Duration) []faultSpan {
	var fs []faultSpan
	open := map[string][]int{} // partition or link fault note → spans still open
	for _, e := range trace.Events() {
		switch e.Kind {
		case ha.EvCrash:
			fs = append(fs, faultSpan{start: e.T, end: e.T, host: e.Host, label: "crash " + e.Host + " at " + e.T.String()})
		case ha.EvPause:
			fs = append(fs, faultSpan{start: e.T, end: e.T + time.Duration(e.N), host: e.Host,
				label: fmt.Sprintf("pause %s at %s for %s", e.Host, e.T, time.Duration(e.N))})
		case ha.EvPartition:
			open["p"+e.Note] = append(open["p"+e.Note], len(fs))
			fs = append(fs, faultSpan{start: e.T, end: end, all: true, label: "partition " + e.Note + " at " + e.T.String()})
		case ha.EvLinkFault:
			fs = append(fs, faultSpan{start: e.T, end: e.T + time.Duration(e.N), all: true,
				label: fmt.Sprintf("%s on %s→%s at %s for %s", e.Note, anyHost(e.Host), anyHost(e.Peer), e.T, time.Duration(e.N))})
		case ha.EvHeal:
			if q := open["p"+e.Note]; len(q) > 0 {
				fs[q[0]].end, open["p"+e.Note] = e.T, q[1:]
			}
		}
	}
	slices.SortStableFunc(fs, func(a, b faultSpan) int { return int(a.start - b.start) })
	return fs
}

func anyHost(h string) string {
	if h == "" {
		return "*"
	}
	return h
}

// episodeSpan is a group of faults: one episode before it is measured.
type episodeSpan struct {
	start, end time.Duration
	faults     []faultSpan
}

// groupEpisodes puts faults that begin no later than window after the
// previous faults of an episode ended into that episode.
func groupEpisodes(fs []faultSpan, window time.Duration) []episodeSpan {
	var eps []episodeSpan
	for _, f := range fs {
		if n := len(eps); n > 0 && f.start <= eps[n-1].end+window {
			eps[n-1].end = max(eps[n-1].end, f.end)
			eps[n-1].faults = append(eps[n-1].faults, f)
			continue
		}
		eps = append(eps, episodeSpan{start: f.start, end: f.end, faults: []faultSpan{f}})
	}
	return eps
}

// observedWindow is the longest detection delay the trace shows — a
// crash or pause to the first detection of that host — or
// DefaultEpisodeWindow when it shows none.
func observedWindow(trace *ha.Trace) time.Duration {
	var w time.Duration
	failed := map[string]time.Duration{}
	for _, e := range trace.Events() {
		switch e.Kind {
		case ha.EvCrash, ha.EvPause:
			if _, ok := failed[e.Host]; !ok {
				failed[e.Host] = e.T
			}
		case ha.EvDetect:
			if at, ok := failed[e.Peer]; ok {
				w = max(w, e.T-at)
				delete(failed, e.Peer)
			}
		}
	}
	if w == 0 {
		return DefaultEpisodeWindow
	}
	return w
}

// episodeDetection is the first detection in [ep.start, until) of a
// host the episode crashed or paused (of any host when the episode has a
// partition or a link fault), as a delay from the episode start.
func episodeDetection(trace *ha.Trace, ep episodeSpan, until time.Duration) *float64 {
	anyPeer := false
	hosts := map[string]bool{}
	for _, f := range ep.faults {
		anyPeer = anyPeer || f.all
		if f.host != "" {
			hosts[f.host] = true
		}
	}
	for _, e := range trace.Events() {
		if e.Kind != ha.EvDetect || e.T < ep.start || e.T >= until {
			continue
		}
		if anyPeer || hosts[e.Peer] {
			return ptr(ms(e.T - ep.start))
		}
	}
	return nil
}
