package classify

import (
	"strconv"
	"strings"
	"time"
)

// maxGroupItems is how many outputs a grouped sentence names before it
// says how many more there are.
const maxGroupItems = 6

// anomalySet is the anomalies told in one sentence: of one kind, in one
// window (when the ids name windows), in one context of the run's marks
// and, for duplicates, with as many copies each.
type anomalySet struct {
	kind    anomalyKind
	window  string // "10s" for ids such as "k00|w=10s"; "" otherwise
	context string // where the anomalies fall among the marks
	copies  int    // duplicates: copies of each output
	members []int  // indexes into the sorted anomaly list, in its order
}

// splitWindow splits an output id that names a window ("k00|w=10s") into
// the rest of the id ("k00") and the window ("10s"); other ids are
// returned whole with no window.
func splitWindow(id string) (item, window string) {
	if i := strings.LastIndex(id, "|w="); i >= 0 {
		return id[:i], id[i+len("|w="):]
	}
	return id, ""
}

// anomalyID is the output id an anomaly is about.
func (s *state) anomalyID(a *anomaly, groups [][]int32) string {
	switch a.kind {
	case kindMissing:
		return s.expOut(int(a.pos)).ID
	case kindDuplicate:
		return s.obsOut(int(groups[a.grp][0])).ID
	}
	return s.obsOut(int(a.pos)).ID
}

// groupAnomalies gathers the sorted anomalies into sets told in one
// sentence each, in the order of their first anomaly. An order anomaly is
// always alone.
func (s *state) groupAnomalies(list []anomaly, groups [][]int32, mk *markIndex) []anomalySet {
	type setKey struct {
		kind            anomalyKind
		window, context string
		copies          int
	}
	index := map[setKey]int{}
	var sets []anomalySet
	for i := range list {
		a := &list[i]
		if a.kind == kindOrder {
			sets = append(sets, anomalySet{kind: a.kind, members: []int{i}})
			continue
		}
		k := setKey{kind: a.kind}
		_, k.window = splitWindow(s.anomalyID(a, groups))
		if s.allT {
			k.context = mk.relate(a.t)
		}
		if a.kind == kindDuplicate {
			k.copies = len(groups[a.grp])
		}
		j, ok := index[k]
		if !ok {
			j = len(sets)
			index[k] = j
			sets = append(sets, anomalySet{kind: k.kind, window: k.window, context: k.context, copies: k.copies})
		}
		sets[j].members = append(sets[j].members, i)
	}
	return sets
}

// groupSentence tells a set of several anomalies in one sentence, e.g.
// "16 outputs of window 10 s wrong, delivered at 11.00 s after the
// takeover by B.1 (epoch 1) at 10.62 s (1122 inputs lost): k00 49.16
// instead of 119.1 (50 source tuples, not 117), …, and 10 more".
func (s *state) groupSentence(list []anomaly, g anomalySet, groups [][]int32, mk *markIndex) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(g.members)) + " outputs")
	if g.window != "" {
		b.WriteString(" of window " + windowText(g.window))
	}
	span := s.timeSpan(list, g)
	var lost int64
	switch g.kind {
	case kindMissing:
		b.WriteString(" never delivered")
		if span != "" {
			b.WriteString(" (expected at " + span + " s")
			if g.context != "" {
				b.WriteString(", " + g.context)
			}
			b.WriteString(")")
		}
	case kindDuplicate:
		b.WriteString(" emitted " + times(g.copies))
		if span != "" {
			b.WriteString(", repeated at " + span + " s")
			if g.context != "" {
				b.WriteString(" " + g.context)
			}
		}
	case kindWrong, kindSpurious:
		if g.kind == kindWrong {
			b.WriteString(" wrong")
		} else {
			b.WriteString(" not expected (spurious)")
		}
		if span != "" {
			b.WriteString(", delivered at " + span + " s")
			if g.context != "" {
				b.WriteString(" " + g.context)
			}
		}
		if g.kind == kindWrong {
			for _, m := range g.members {
				lost += s.lostAt(list[m].pos)
			}
		}
	}
	if lost > 0 {
		b.WriteString(" (" + strconv.FormatInt(lost, 10) + " inputs lost)")
	}
	b.WriteString(": ")
	for n, m := range g.members {
		if n == maxGroupItems {
			b.WriteString(", and " + strconv.Itoa(len(g.members)-n) + " more")
			break
		}
		if n > 0 {
			b.WriteString(", ")
		}
		a := &list[m]
		item, _ := splitWindow(s.anomalyID(a, groups))
		item = short(item)
		if a.kind == kindWrong {
			item = s.wrongItem(a.pos, item)
		}
		b.WriteString(item)
	}
	return b.String()
}

// timeSpan is the time of a set's anomalies in seconds, "11.00" or
// "6.30–12.00"; "" when times are unknown.
func (s *state) timeSpan(list []anomaly, g anomalySet) string {
	if !s.allT {
		return ""
	}
	lo, hi := list[g.members[0]].t, list[g.members[0]].t
	for _, m := range g.members {
		lo, hi = min(lo, list[m].t), max(hi, list[m].t)
	}
	if seconds(lo) == seconds(hi) {
		return seconds(lo)
	}
	return seconds(lo) + "–" + seconds(hi)
}

// lostAt is the shortfall of source tuples of the id delivered wrong at
// observed index i, counted at its last delivery only.
func (s *state) lostAt(i int32) int64 {
	d := s.idOfObs[i]
	if sf := s.shortfall(d); sf > 0 && s.origin[s.lastObs[d]] == i {
		return sf
	}
	return 0
}

// wrongItem is a wrong delivery in a grouped sentence: "k00 49.16
// instead of 119.1 (50 source tuples, not 117)".
func (s *state) wrongItem(i int32, name string) string {
	o := s.obsOut(int(i))
	d := s.idOfObs[i]
	e := s.expOut(int(s.expHead[d]))
	valueDiffers := s.obsItem(i).val != s.expItem(s.expHead[d]).val
	expN, expHasN := s.expN(d)
	nDiffers := o.HasN && expHasN && o.N != expN
	got, want := roundedPair(o.Value, e.Value)
	got, want = short(got), short(want)
	tuples := strconv.FormatInt(o.N, 10) + " source tuples, not " + strconv.FormatInt(expN, 10)
	switch {
	case valueDiffers && nDiffers:
		return name + " " + got + " instead of " + want + " (" + tuples + ")"
	case valueDiffers:
		return name + " " + got + " instead of " + want + roundingOnly(o.Value, e.Value)
	case nDiffers:
		return name + " with " + tuples
	}
	return name + " " + short(rounded(o.Value, sigDigits)) + " (matches no remaining expected output of that id)"
}

// windowText spells a window named in an id: "10 s" for "10s", or the
// name as it is when it is not a duration.
func windowText(w string) string {
	d, err := time.ParseDuration(w)
	if err != nil {
		return w
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}
