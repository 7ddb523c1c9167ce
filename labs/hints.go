package labs

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
)

// detectionConfusions are the numbers a student takes for the detection
// delay of the first fault on host when reading `streamha why` or the
// trace: when the host that took over declared it dead (why lists only
// the hosts on an output's path) and when it took over. from is the
// fault's time (the crash, or the start of a pause).
func detectionConfusions(r *run, host string, from time.Duration) []confusion {
	var out []confusion
	var successor string
	for _, e := range r.sr.Trace.Events() {
		if e.Kind == ha.EvTakeover && e.Peer == host && e.T >= from {
			successor = e.Host
			out = append(out, mixUp(durMs(e.T-from), "That is when "+e.Host+" took over; detection comes before the takeover: the first host to declare "+host+" dead."))
			break
		}
	}
	if successor == "" {
		return out
	}
	first := true
	for _, e := range r.sr.Trace.Events() {
		if e.Kind != ha.EvDetect || e.Peer != host || e.T < from {
			continue
		}
		if e.Host == successor && !first {
			out = append(out, mixUp(durMs(e.T-from), "That is when "+successor+", the host that took over, declared "+host+" dead (streamha why lists only the hosts on an output's path); another host did so first: the first detect event of "+host+" in the trace."))
			break
		}
		first = false
	}
	return out
}

// durMs is a duration in milliseconds.
func durMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// faultTime is the time of the first event of kind (a crash or a pause).
func faultTime(r *run, kind ha.EventKind) time.Duration {
	for _, e := range r.sr.Trace.Events() {
		if e.Kind == kind {
			return e.T
		}
	}
	return 0
}

// fencedLines counts what a student finds for "fenced" in a trace: every
// fenced event (a receiver's drop, or a host learning it was superseded)
// and, with grep, the stats of a host whose role ended as fenced.
func fencedLines(trace *ha.Trace) (events, grep int64) {
	for _, e := range trace.Events() {
		switch {
		case e.Kind == ha.EvFenced:
			events++
		case e.Kind == ha.EvStats && e.Stats != nil && e.Stats.Role == "fenced":
			grep++
		}
	}
	return events, events + grep
}

// distinctMixUps keeps the confusions whose values differ from want by
// more than the question's tolerance and from each other: a confusion
// that equals the answer must not shadow it, nor one another.
func distinctMixUps(want, relTol, absTol float64, cs ...confusion) []confusion {
	var out []confusion
	near := func(a, b float64) bool { return math.Abs(a-b) <= max(absTol, math.Abs(b)*relTol) }
	for _, c := range cs {
		if c.num == nil || near(*c.num, want) {
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || near(*c.num, *o.num)
		}
		if !dup {
			out = append(out, c)
		}
	}
	return out
}

// sourceIDOf reads a bare tuple number as a source id of stream (when
// every id of ids is of that stream, as "3098" for "s0:3098"); other
// answers are returned unchanged.
func sourceIDOf(answer string, ids []string) string {
	a := strings.TrimSpace(answer)
	if _, err := strconv.ParseUint(a, 10, 64); err != nil || len(ids) == 0 {
		return answer
	}
	stream, _, ok := strings.Cut(ids[0], ":")
	if !ok {
		return answer
	}
	for _, id := range ids {
		if s, _, _ := strings.Cut(id, ":"); s != stream {
			return answer
		}
	}
	return stream + ":" + a
}

// round2 is x rounded to two decimals, as the tables print ratios.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// replayFrom is the output position host's first replay started from.
func (r *run) replayFrom(host string) int64 {
	for _, e := range r.sr.Trace.Events() {
		if e.Kind == ha.EvReplayStart && e.Host == host {
			return int64(e.Seq)
		}
	}
	return -1
}

// andMore matches the count an explanation gives after the outputs it
// names (", and 287 more").
var andMore = regexp.MustCompile(`, and (\d+) more`)

// moreConfusions are the counts a student may take from the run's
// explanations for a number of outputs: each group's "and N more", which
// counts the outputs it does not name, not all of them.
func moreConfusions(r *run) []confusion {
	var out []confusion
	for _, ex := range r.rec().Explanations {
		for _, m := range andMore.FindAllStringSubmatch(ex, -1) {
			if n, err := strconv.ParseFloat(m[1], 64); err == nil {
				out = append(out, mixUp(n, "That is the 'and N more' of an explanation, which counts only the outputs it does not name; the sentence begins with how many there are in all, and the table's column counts them too."))
			}
		}
	}
	return out
}
