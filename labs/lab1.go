package labs

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
)

func lab1() *Lab {
	l := &Lab{N: 1, Dir: "01-gap-recovery", Title: "Gap recovery",
		Summary: "Run amnesia, identify which outputs were lost and why.",
		Questions: []Question{
			{Key: "p1", Predict: true, Text: "Before you run: will any window that starts after the crash's window be damaged? (yes or no)"},
			{Key: "q1", Text: "Which recovery type does amnesia achieve in this experiment?"},
			{Key: "q2", Text: "How many outputs were delivered with a wrong value or lineage?"},
			{Key: "q3", Text: "Which window(s) were damaged? Give the window start(s), e.g. 2s."},
			{Key: "q4", Text: "Which output id lost the most source tuples?"},
			{Key: "q5", Text: "How many source tuples were lost in total?"},
			{Key: "q6", Text: "How many milliseconds passed between the crash and its detection?"},
		}}
	l.check = func(c *ctx) error {
		r, err := l.simulate("experiment.yaml", "amnesia")
		if err != nil {
			return err
		}
		rec := r.rec()
		wrong := r.statusIDs(classify.StatusWrong)
		damaged := append(slices.Clone(wrong), r.cls.MissingIDs...)
		var windows []string
		for _, id := range damaged {
			if _, w, ok := strings.Cut(id, "|w="); ok && !slices.Contains(windows, w) {
				windows = append(windows, w)
			}
		}
		crashWindow := lab1CrashWindow(r)
		later := false
		for _, w := range windows {
			if d, err := time.ParseDuration(w); err == nil && d > crashWindow {
				later = true
			}
		}
		c.choice(spec{key: "p1", evidence: fmt.Sprintf("The damaged windows start at %s; the crash fell in the window starting at %s.", strings.Join(windows, ", "), crashWindow),
			look:       "the ids of the damaged outputs (key|w=window-start) in the explanations, against the time of the crash.",
			confusions: []confusion{mistake("Amnesia loses only the state the crashed node held: a window that opens after the restart is computed from fresh input.", "yes")}},
			[]string{yesNo(later)})
		c.choice(spec{key: "q1", evidence: fmt.Sprintf("The classifier says %s: %d missing, %d wrong, %d lost inputs.", r.label(), rec.Missing, rec.Wrong, rec.LostInputs),
			look: "the recovery column of the table.", confusions: recoveryConfusions(rec.Type, rec.Subtype)},
			recoveryAnswers(rec.Type, rec.Subtype))
		c.number(spec{key: "q2", evidence: "Wrong outputs: " + list(wrong, 8) + ".", look: "the 'wrong' column, or count the explanations.",
			probe:      "streamha why --first-wrong --run lab1-out",
			confusions: distinctMixUps(float64(rec.Wrong), 0, 0, append([]confusion{mixUp(float64(rec.LostInputs), "That counts source tuples ('lost in'); the question counts outputs.")}, moreConfusions(r)...)...)},
			float64(rec.Wrong), 0, 0, "")
		// A window start is a time: "3" is read as "3s", as the ids write it.
		for i, a := range c.answers["q3"] {
			if _, err := strconv.ParseFloat(strings.TrimSpace(a), 64); err == nil {
				c.answers["q3"][i] = strings.TrimSpace(a) + "s"
			}
		}
		c.set(spec{key: "q3", evidence: fmt.Sprintf("The damaged ids are %s; B crashed at 3.4 s.", list(damaged, 8)),
			look: "the ids in the explanations are key|w=window-start."}, windows)
		lost := r.lostPerID()
		var worst []string
		var most int64
		for id, n := range lost {
			if n > most {
				most, worst = n, []string{id}
			} else if n == most {
				worst = append(worst, id)
			}
		}
		sort.Strings(worst)
		var confs []confusion
		if len(wrong) > 0 && !slices.Contains(worst, wrong[0]) {
			confs = append(confs, mistake("That is the first wrong output, not the one that lost most: for each output compare its source tuples with the failure-free run's (an explanation lists each output as 'ID value instead of V (N source tuples, not M)': it lost M − N).", wrong[0]))
		}
		var fewer []string
		for id := range lost {
			if !slices.Contains(worst, id) && (len(wrong) == 0 || id != wrong[0]) {
				fewer = append(fewer, id)
			}
		}
		sort.Strings(fewer)
		if len(fewer) > 0 {
			confs = append(confs, mistake("That output lost fewer source tuples than another one: an explanation names only the first outputs of its group ('and N more'); compare expected_sources − sources on every line of lab1-out/anomalies-amnesia.jsonl.", fewer...))
		}
		why := "streamha why --first-wrong --run lab1-out"
		if len(worst) > 0 {
			why = fmt.Sprintf("streamha why '%s' --run lab1-out", worst[0])
		}
		c.choice(spec{key: "q4", evidence: fmt.Sprintf("%s lost %d source tuples, the most of any output (per-id shortfall = expected lineage − delivered lineage).", strings.Join(worst, " and "), most),
			look: "each output in the explanation reads '(N source tuples, not M)': it lost M − N; lab1-out/anomalies-amnesia.jsonl has sources and expected_sources per output, and `streamha why ID` lists the source tuples an output lacks.", why: why,
			probe: "streamha why --first-wrong --run lab1-out", confusions: confs}, worst)
		c.number(spec{key: "q5", evidence: fmt.Sprintf("Sum of the per-output shortfalls over %d damaged outputs.", len(lost)), look: "the 'lost in' column.",
			confusions: distinctMixUps(float64(rec.LostInputs), 0, 0,
				mixUp(float64(rec.Wrong), "That counts damaged outputs; the question counts the source tuples they lack."),
				mixUp(float64(rec.UnmatchedInputs), "That is the note under the table: source tuples that reach no output even without a failure (filtered out), which never count as lost."))},
			float64(rec.LostInputs), 0, 0, "")
		var confs6 []confusion
		if rec.RecoveryMs != nil {
			confs6 = append(confs6, mixUp(*rec.RecoveryMs, "That is the recovery time (crash → output back to normal); detection ends at the first detect event."))
		}
		confs6 = distinctMixUps(ptrMs(rec.DetectionMs), 0, 1, append(confs6, detectionConfusions(r, "B", faultTime(r, ha.EvCrash))...)...)
		c.number(spec{key: "q6", evidence: "From the crash event to the first detect event of B in the trace.", look: "the 'detect ms' column.", confusions: confs6},
			ptrMs(rec.DetectionMs), 0, 1, "ms")
		return nil
	}
	return l
}

// lab1CrashWindow is the start of the 1 s window the first crash falls in.
func lab1CrashWindow(r *run) time.Duration {
	for _, e := range r.sr.Trace.Events() {
		if e.Kind == ha.EvCrash {
			return e.T.Truncate(time.Second)
		}
	}
	return 0
}
