package labs

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/strategies"
	"github.com/streamha/streamha/strategies/conformance"
	"github.com/streamha/streamha/why"
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

func lab2() *Lab {
	l := &Lab{N: 2, Dir: "02-precise-vs-repeating", Title: "Precise vs repeating",
		Summary: "Upstream backup with and without duplicate elimination; what the replay after a crash delivers.",
		Questions: []Question{
			{Key: "p1", Predict: true, Text: "Before you run: without dedup, will the sink receive some output twice? (yes or no)"},
			{Key: "q1", Text: "Which recovery does upstream backup achieve without dedup (experiment.yaml)?"},
			{Key: "q2", Text: "How many duplicate outputs reached the sink?"},
			{Key: "q3", Text: "Which is the oldest source tuple (lowest sN:M) whose output reached the sink twice?"},
			{Key: "q4", Text: "How many tuples did A replay to the new B after the crash?"},
			{Key: "q5", Text: "Which recovery does it achieve with dedup: true (experiment-dedup.yaml)?"},
		}}
	l.check = func(c *ctx) error {
		r, err := l.simulate("experiment.yaml", "upstream-backup")
		if err != nil {
			return err
		}
		rec := r.rec()
		replayed := r.replayed("A")
		c.choice(spec{key: "p1", evidence: fmt.Sprintf("%d outputs reached the sink twice.", rec.Duplicates),
			look:       "the 'dup' column of the run of experiment.yaml, and the duplicates in lab2-out/anomalies-upstream-backup.jsonl.",
			confusions: []confusion{mistake("The replay re-sends tuples whose outputs the sink already had; without dedup nothing removes them.", "no")}},
			[]string{yesNo(rec.Duplicates > 0)})
		c.choice(spec{key: "q1", evidence: fmt.Sprintf("The classifier says %s with %d duplicates, %d missing and %d wrong.", r.label(), rec.Duplicates, rec.Missing, rec.Wrong),
			look: "the recovery column for experiment.yaml.", confusions: recoveryConfusions(rec.Type, rec.Subtype)},
			recoveryAnswers(rec.Type, rec.Subtype))
		dups := r.statusIDs(classify.StatusDuplicate)
		c.number(spec{key: "q2", evidence: "Duplicates: " + list(dups, 6) + ".", look: "the 'dup' column.", probe: "streamha why --first-duplicate --run lab2-out",
			confusions: append([]confusion{mixUp(float64(replayed), "That is the whole replay; duplicates are only the replayed tuples whose outputs the sink already had: those A sent between its last trim before the crash (the trim events of host A) and the crash. What A sent B after the crash had never reached the sink.")}, moreConfusions(r)...)},
			float64(rec.Duplicates), 0, 0, "")
		oldest := lab2Oldest(dups)
		// A bare tuple number is read as the source id the explanations
		// print ("3098" as "s0:3098"), as lab 1 reads "3" as "3s".
		for i, a := range c.answers["q3"] {
			c.answers["q3"][i] = sourceIDOf(a, dups)
		}
		if oldest == "" {
			c.choice(spec{key: "q3", evidence: "No output was delivered twice."}, []string{"none"})
		} else {
			c.choice(spec{key: "q3", evidence: fmt.Sprintf("The duplicated outputs are %d consecutive source tuples from %s on: the first tuple after the last acknowledgement that reached A before the crash.", len(dups), oldest),
				look: "the ids of the 'emitted twice' explanations are source ids sN:M; the oldest is the lowest M.", probe: "streamha why --first-duplicate --run lab2-out"},
				[]string{oldest})
		}
		c.number(spec{key: "q4", evidence: "From the replay_start events of host A in the trace.", look: "grep replay_start in trace-upstream-backup.jsonl (its n field).",
			confusions: distinctMixUps(float64(replayed), 0, 0,
				mixUp(float64(rec.Duplicates), "That is the number of duplicates; the replay also re-sent tuples whose outputs the sink had not received yet."),
				mixUp(float64(r.replayFrom("A")), "That is the position the replay starts from ('replays to B.1 from seq …' in streamha why), not how many tuples it sent: the replay_start event's n counts them."))},
			float64(replayed), 0, 0, "tuples")
		d, err := l.simulate("experiment-dedup.yaml", "upstream-backup")
		if err != nil {
			return err
		}
		c.choice(spec{key: "q5", evidence: fmt.Sprintf("With dedup the classifier says %s (%d duplicates).", d.label(), d.rec().Duplicates), look: "rerun with experiment-dedup.yaml.",
			confusions: recoveryConfusions(d.rec().Type, d.rec().Subtype)},
			recoveryAnswers(d.rec().Type, d.rec().Subtype))
		return nil
	}
	return l
}

// lab2Oldest is the source id with the lowest number among ids ("" when none).
func lab2Oldest(ids []string) string {
	best, bestN := "", int64(-1)
	for _, id := range ids {
		_, num, ok := strings.Cut(id, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err == nil && (bestN < 0 || n < bestN) {
			best, bestN = id, n
		}
	}
	return best
}

func lab4() *Lab {
	l := &Lab{N: 4, Dir: "04-nondeterminism", Title: "Non-determinism",
		Summary: "A union interleaved differently on the replica, in front of a hash chain: what active standby delivers after the takeover, and what shipping the primary's decisions changes and costs.",
		Questions: []Question{
			{Key: "p1", Predict: true, Text: "Before you run: without ship_decisions, once the sink has received a wrong output of a key, will that key's outputs become identical to the failure-free run's again before the run ends? (yes or no)"},
			{Key: "q1", Text: "Which recovery does active standby achieve without ship_decisions (experiment.yaml)?"},
			{Key: "q2", Text: "How many outputs were wrong?"},
			{Key: "q3", Text: "Which output id was the first wrong output delivered?"},
			{Key: "q4", Text: "At which step of that key (an id key#n) did the secondary first add another source tuple to its chain than the failure-free run did?"},
			{Key: "q5", Text: "Which recovery does it achieve with ship_decisions: true (experiment-ship.yaml)?"},
			{Key: "q6", Text: "What does shipping cost: the messages ratio (msgs×) over no HA with ship_decisions: true?"},
		}}
	l.check = func(c *ctx) error {
		r, err := l.simulate("experiment.yaml", "active-standby")
		if err != nil {
			return err
		}
		rec := r.rec()
		wrong := r.statusIDs(classify.StatusWrong)
		tail := lab4TailOf(r)
		c.choice(spec{key: "p1", evidence: fmt.Sprintf("%d outputs differ, the last delivered at %s s; the last delivery of %s. The values are exact integers and the smallest difference is %s: no rounding.",
			rec.Wrong, seconds(tail.lastWrongMs), tail.stillWrong, fmtNum(tail.minDiff)),
			look:       "what does the secondary's chain of a key hold after it took two inputs in another order, and what does every later head of that chain depend on?",
			confusions: []confusion{mistake("A running sum would forget the order once both tuples are in; a hash chain folds every value into the previous head, which already reflects the order.", "yes")}},
			[]string{yesNo(len(tail.stillWrongKeys) == 0)})
		c.choice(spec{key: "q1", evidence: fmt.Sprintf("The classifier says %s: %d wrong, %d missing, %d lost inputs; the wrong outputs run from %s s to the end of the run.", r.label(), rec.Wrong, rec.Missing, rec.LostInputs, seconds(tail.firstWrongMs)),
			look: "the recovery column for experiment.yaml, and whether the wrong outputs stop before the run ends.", confusions: recoveryConfusions(rec.Type, rec.Subtype)},
			recoveryAnswers(rec.Type, rec.Subtype))
		replay, dropped := lab4Replay(r)
		c.number(spec{key: "q2", evidence: fmt.Sprintf("Wrong outputs: %s, delivered from %s s to %s s.", list(wrong, 6), seconds(tail.firstWrongMs), seconds(tail.lastWrongMs)),
			look: "the 'wrong' column.", probe: "streamha why --first-wrong --run lab4-out",
			confusions: append([]confusion{
				mixUp(float64(replay), "That is the replay A.1 sent B after its takeover; B dropped what it already had from A, and A.1's wrong outputs go on after the replay, to the end of the run."),
				mixUp(float64(dropped), "That is B's dup_dropped: the replayed outputs B already had from A, dropped, not delivered."),
			}, moreConfusions(r)...)},
			float64(rec.Wrong), 0, 0, "")
		reorder, err := lab4Reordered(l)
		if err != nil {
			return err
		}
		if len(wrong) == 0 {
			c.choice(spec{key: "q3", evidence: "No output was wrong."}, []string{"none"})
			c.choice(spec{key: "q4", evidence: "No output was wrong."}, []string{"none"})
		} else {
			why := fmt.Sprintf("streamha why '%s' --run lab4-out", wrong[0])
			confs := []confusion{}
			if reorder != nil {
				confs = append(confs, mistake("That is where A.1's chain first took another input (q4); A.1 was still the secondary then and its output went nowhere. The question asks for the first wrong delivery.", reorder.ID))
			}
			if len(wrong) > 1 {
				confs = append(confs, mistake("That one is wrong too, but not the first delivered: the explanations are in delivery order.", wrong[1:min(len(wrong), 50)]...))
			}
			c.choice(spec{key: "q3", evidence: fmt.Sprintf("The first wrong delivery is %s, made by A.1 and sent to B in its replay after the takeover.", wrong[0]),
				look: "the first id the explanation quotes after 'outputs wrong, delivered at …'.", why: why,
				probe: "streamha why --first-wrong --run lab4-out", confusions: confs},
				wrong[:1])
			if reorder == nil {
				c.choice(spec{key: "q4", evidence: "streamha why finds no step taken in another order before the first wrong output."}, []string{"none"})
			} else {
				c.choice(spec{key: "q4", evidence: fmt.Sprintf("At %s (%s s) A.1 added %s where the failure-free run added %s: from there on every head of the key's chain at A.1 differs.", reorder.ID, seconds(reorder.TMs), reorder.Newest, reorder.RefNewest),
					look: "the line 'added the key's inputs in another order from …' of streamha why for the first wrong output.", why: why,
					probe:      "streamha why --first-wrong --run lab4-out",
					confusions: []confusion{mistake("That is the first wrong delivery (q3); its value is wrong because the chain took another path earlier: follow 'in another order from' in streamha why.", wrong[0])}},
					[]string{reorder.ID})
			}
		}
		s, err := l.simulate("experiment-ship.yaml", "active-standby")
		if err != nil {
			return err
		}
		c.choice(spec{key: "q5", evidence: fmt.Sprintf("With ship_decisions the classifier says %s (%d wrong).", s.label(), s.rec().Wrong), look: "rerun with experiment-ship.yaml.",
			confusions: recoveryConfusions(s.rec().Type, s.rec().Subtype)},
			recoveryAnswers(s.rec().Type, s.rec().Subtype))
		msgs, without := ratioOf(s.sr.Run.Overhead.MessagesRatio), ratioOf(r.sr.Run.Overhead.MessagesRatio)
		c.number(spec{key: "q6", evidence: fmt.Sprintf("msgs× is %.3f with shipping and %.3f without.", msgs, without), look: "the msgs× column of the run with experiment-ship.yaml.",
			confusions: []confusion{mixUp(without, "That is msgs× without shipping (experiment.yaml)."), mixUp(ratioOf(s.sr.Run.Overhead.CPURatio), "That is cpu×; the question asks for msgs×.")}},
			msgs, 0.02, 0.02, "")
		return nil
	}
	return l
}

// lab4Tail is where lab 4's wrong outputs lie.
type lab4Tail struct {
	firstWrongMs, lastWrongMs float64
	// stillWrongKeys are the keys whose last delivery of the run is wrong;
	// stillWrong says so in words.
	stillWrongKeys []string
	stillWrong     string
	// minDiff is the smallest difference between a wrong value and the
	// failure-free value of its id.
	minDiff float64
}

func lab4TailOf(r *run) lab4Tail {
	want := map[ha.OutputID]float64{}
	for _, d := range r.exp.All() {
		want[d.Tuple.ID] = d.Tuple.Value
	}
	t := lab4Tail{minDiff: math.Inf(1)}
	last := map[uint32]classify.Status{}
	var keys []uint32
	for i, s := range r.cls.Status {
		d := r.obs.At(i)
		if _, seen := last[d.Tuple.Key]; !seen {
			keys = append(keys, d.Tuple.Key)
		}
		last[d.Tuple.Key] = s
		if s != classify.StatusWrong {
			continue
		}
		at := float64(d.T) / float64(time.Millisecond)
		if t.firstWrongMs == 0 {
			t.firstWrongMs = at
		}
		t.lastWrongMs = at
		t.minDiff = min(t.minDiff, math.Abs(d.Tuple.Value-want[d.Tuple.ID]))
	}
	if math.IsInf(t.minDiff, 1) {
		t.minDiff = 0
	}
	slices.Sort(keys)
	for _, k := range keys {
		if last[k] == classify.StatusWrong {
			t.stillWrongKeys = append(t.stillWrongKeys, ha.KeyName(k))
		}
	}
	switch n := len(t.stillWrongKeys); {
	case n == 0:
		t.stillWrong = "every key is right"
	case n == len(keys):
		t.stillWrong = "every key (" + strings.Join(t.stillWrongKeys, ", ") + ") is wrong"
	default:
		t.stillWrong = strings.Join(t.stillWrongKeys, ", ") + " (of " + strconv.Itoa(len(keys)) + " keys) is wrong"
	}
	return t
}

// lab4Replay is what A.1 replayed to B after its takeover and how many of
// those outputs B dropped as duplicates.
func lab4Replay(r *run) (replayed, dropped int64) {
	for _, e := range r.sr.Trace.Events() {
		switch {
		case e.Kind == ha.EvReplayStart && e.Host == "A.1" && e.Peer == "B":
			replayed += e.N
		case e.Kind == ha.EvStats && e.Host == "B" && e.Stats != nil:
			dropped = e.Stats.Duplicates
		}
	}
	return replayed, dropped
}

// lab4Reorder memoises lab4Reordered: it reruns the lab with every emit
// traced, which costs about as much as the rest of the check.
var lab4Reorder struct {
	once sync.Once
	ro   *why.Reorder
	err  error
}

// lab4Reordered is what `streamha why --first-wrong` finds for lab 4: the
// first step at which the host that made the first wrong output added
// another source tuple than the failure-free run (nil when none).
func lab4Reordered(l *Lab) (*why.Reorder, error) {
	lab4Reorder.once.Do(func() {
		e, err := l.experiment("experiment.yaml")
		if err != nil {
			lab4Reorder.err = err
			return
		}
		r, err := why.Rerun(e, "active-standby")
		if err != nil {
			lab4Reorder.err = err
			return
		}
		id, err := r.FirstWrong()
		if errors.Is(err, why.ErrUsage) {
			return // no wrong output: nothing was reordered
		}
		if err != nil {
			lab4Reorder.err = err
			return
		}
		st, err := r.Story(id)
		if err != nil {
			lab4Reorder.err = err
			return
		}
		lab4Reorder.ro = st.Reordered
	})
	return lab4Reorder.ro, lab4Reorder.err
}

// Lab5Strategy is the name the lab-5 skeleton registers.
const Lab5Strategy = "my-strategy"

// Lab5Claims are the claims the completed lab-5 strategy must meet.
var Lab5Claims = conformance.Claims{
	Repeatable: conformance.Precise, Convergent: conformance.Precise,
	Deterministic: conformance.Precise, Arbitrary: conformance.Gap,
}

func lab5() *Lab {
	l := &Lab{N: 5, Dir: "05-own-strategy", Title: "Write your own strategy",
		Summary: "Complete the skeleton strategy package; the check runs the conformance suite and classifies its recovery.",
		Questions: []Question{
			{Key: "p1", Predict: true, Text: "Before you run: will your completed strategy deliver any duplicate on the lab's experiment? (yes or no)"},
			{Key: "q1", Text: "Which recovery does your strategy achieve on the lab's experiment?"},
			{Key: "q2", Text: "How many tuples did A replay to the new B after the crash?"},
			{Key: "q3", Text: "What is the peak output-queue length (tuples, the 'peak queue' column) of your strategy?"},
			{Key: "q4", Text: "Which recovery does your strategy get in the conformance case arbitrary/crash-first?"},
		}}
	l.check = func(c *ctx) error {
		if _, err := strategies.Lookup(Lab5Strategy); err != nil {
			c.res.Failed = append(c.res.Failed, fmt.Sprintf("strategy %q is not registered: this program does not import your package (the streamha command does, in cmd/streamha/lab_strategies.go) (%v)", Lab5Strategy, err))
			for _, q := range l.Questions {
				c.add(q.Key, false, "cannot be checked without the strategy.")
			}
			return nil
		}
		rep, err := conformance.Check(Lab5Strategy, Lab5Claims)
		if err != nil {
			return err
		}
		var b strings.Builder
		rep.Write(&b)
		c.res.Notes = append(c.res.Notes, strings.TrimRight(b.String(), "\n"))
		if !rep.Passed() {
			var names []string
			for _, f := range rep.Failed() {
				names = append(names, f.Name)
			}
			c.res.Failed = append(c.res.Failed, fmt.Sprintf("the conformance suite failed %d of %d cases (%s); claims: precise for repeatable, convergent-capable and deterministic queries, only the invariants for arbitrary ones", len(names), len(rep.Cases), strings.Join(names, ", ")))
		}
		r, err := l.simulate("experiment.yaml", Lab5Strategy)
		if err != nil {
			return err
		}
		rec := r.rec()
		c.choice(spec{key: "p1", evidence: fmt.Sprintf("Your strategy delivered %d duplicates.", rec.Duplicates),
			look:       "the 'dup' column of your run (lab5-out), and C's dup_dropped in the stats events of lab5-out/trace-my-strategy.jsonl.",
			confusions: []confusion{mistake("The restarted node re-creates the old sequence numbers, so the downstream drops what it already has as duplicates (dup_dropped).", "yes")}},
			[]string{yesNo(rec.Duplicates > 0)})
		c.choice(spec{key: "q1", evidence: fmt.Sprintf("The classifier says %s: %d missing, %d duplicates, %d wrong, %d lost inputs.", r.label(), rec.Missing, rec.Duplicates, rec.Wrong, rec.LostInputs),
			look: "run the lab's experiment with your strategy.", confusions: recoveryConfusions(rec.Type, rec.Subtype)},
			recoveryAnswers(rec.Type, rec.Subtype))
		peak := float64(r.sr.Run.Overhead.PeakQueue)
		replayed := float64(r.replayed("A"))
		c.number(spec{key: "q2", evidence: "From the replay_start events of host A.", look: "grep replay_start in the trace of your strategy (its n field).",
			confusions: []confusion{mixUp(peak, "That is the peak queue (q3), the most any host held in the failure-free run; q2 counts what A replayed after the crash.")}},
			replayed, 0, 0, "tuples")
		c.number(spec{key: "q3", evidence: "Peak retained output tuples over all hosts in the failure-free run.", look: "the 'peak queue' column.",
			confusions: []confusion{mixUp(replayed, "That is what A replayed after the crash (q2); the peak queue is the most any host held in the failure-free run.")}}, peak, 0.02, 1, "tuples")
		found := false
		for _, k := range rep.Cases {
			if k.Name == "arbitrary/crash-first" {
				found = true
				why := "the restarted union merges its two replayed inputs in event-time order, not in the order the failed primary saw them, so the sums after it differ until both orders have included the same tuples again"
				confusions := recoveryConfusions(k.Type, k.Subtype)
				if k.Type == "gap" {
					why = "the restarted union re-interleaves its two inputs, and the downstream's seq filter drops new outputs whose seq it already saw although they carry different tuples"
					confusions = append(confusions, mistake("Nothing was lost upstream, but look at the case's lost inputs: the seq filter dropped new outputs whose seqs the old ones had used.", "rollback"))
				} else {
					confusions = append(confusions, mistake("Nothing is lost, but the case is not identical to the failure-free run either: look at its wrong outputs, then at whether the last outputs agree again.", "precise"))
				}
				c.choice(spec{key: "q4", evidence: fmt.Sprintf("The suite got %s (missing %d, wrong %d, lost inputs %d): %s.", k.Label(), k.Recovery.Missing, k.Recovery.Wrong, k.Recovery.LostInputs, why),
					look: "the conformance table printed above.", confusions: confusions},
					recoveryAnswers(k.Type, k.Subtype))
			}
		}
		if !found {
			// never let a question vanish: AllRight would then ignore it
			c.add("q4", false, "the conformance suite ran no arbitrary/crash-first case, so this answer cannot be checked")
		}
		return nil
	}
	return l
}

// Lab6Strategy is the strategy lab 6 runs in both modes.
const Lab6Strategy = "passive-standby"

func lab6() *Lab {
	l := &Lab{N: 6, Dir: "06-real-crashes", Title: "Real crashes",
		Summary: "Cluster mode, SIGKILL of the primary; compare simulated and real recovery times.",
		Questions: []Question{
			{Key: "p1", Predict: true, Text: "Before you run: will the real recovery take longer than the simulated one? (yes or no)"},
			{Key: "q1", Text: "Path of the result.json your `streamha cluster` run wrote."},
			{Key: "q2", Text: "Real recovery time in ms (from your cluster result)."},
			{Key: "q3", Text: "Simulated recovery time in ms for the same experiment."},
			{Key: "q4", Text: "Which recovery took longer: real or sim?"},
			{Key: "q5", Text: "Real detection delay in ms (from your cluster result)."},
		}}
	l.check = func(c *ctx) error {
		s, err := l.simulate("experiment.yaml", Lab6Strategy)
		if err != nil {
			return err
		}
		simRec := ptrMs(s.rec().RecoveryMs)
		real, why := lab6Real(c)
		var confs3 []confusion
		if d := s.rec().DetectionMs; d != nil && math.Abs(*d-simRec) > 0.05 {
			confs3 = append(confs3, mixUp(*d, "That is the simulated detection time; recovery runs until the output is back to normal."))
		}
		if real != nil && real.Recovery.RecoveryMs != nil {
			confs3 = append(confs3, mixUp(*real.Recovery.RecoveryMs, "That is your cluster run's recovery (q2); q3 asks for the simulator's, from 'streamha run' on the same experiment."))
		}
		c.number(spec{key: "q3", evidence: fmt.Sprintf("The simulator gives recovery %.1f ms, detection %.1f ms.", simRec, ptrMs(s.rec().DetectionMs)),
			look: "streamha run with the lab's experiment: the 'recovery ms' column.", confusions: distinctMixUps(simRec, 0.02, 1, confs3...)}, simRec, 0.02, 1, "ms")
		if real == nil {
			for _, k := range []string{"p1", "q1", "q2", "q4", "q5"} {
				c.add(k, false, why)
			}
			return nil
		}
		if problem := lab6FigureProblem(real, filepath.Dir(lab6Path(c))); problem != "" {
			c.add("q1", false, problem)
			for _, k := range []string{"p1", "q2", "q4", "q5"} {
				c.add(k, false, "the cluster result is not usable: "+problem)
			}
			return nil
		}
		c.add("q1", true, why)
		rr := real.Recovery
		if rr.RecoveryMs == nil || rr.DetectionMs == nil {
			for _, k := range []string{"p1", "q2", "q4", "q5"} {
				c.add(k, false, "your cluster result has no recovery or detection time: did the crash happen (faults) and did the run last past it?")
			}
			return nil
		}
		c.number(spec{key: "q2", evidence: fmt.Sprintf("Your cluster result says recovery %.1f ms (%s).", *rr.RecoveryMs, rr.Type), look: "recovery_ms in your result.json.",
			confusions: []confusion{mixUp(*rr.DetectionMs, "That is your run's detection time; the question asks for recovery_ms.")}}, *rr.RecoveryMs, 0.01, 1, "ms")
		longer := "real"
		if *rr.RecoveryMs < simRec {
			longer = "sim"
		}
		cmp := fmt.Sprintf("Real %.1f ms vs simulated %.1f ms (difference %+.1f ms). %s", *rr.RecoveryMs, simRec, *rr.RecoveryMs-simRec, lab6Explain(rr, s.rec()))
		c.choice(spec{key: "p1", evidence: cmp, look: "compare recovery_ms in your result.json with the simulated run's."}, []string{yesNo(longer == "real")})
		c.choice(spec{key: "q4", evidence: cmp, look: "compare q2 and q3."}, []string{longer})
		c.number(spec{key: "q5", evidence: fmt.Sprintf("Your cluster result says detection %.1f ms; the simulator's memberlist model gives %.1f ms.", *rr.DetectionMs, ptrMs(s.rec().DetectionMs)),
			look: "detection_ms in your result.json.", confusions: distinctMixUps(*rr.DetectionMs, 0.01, 1,
				mixUp(*rr.RecoveryMs, "That is your run's recovery time; the question asks for detection_ms."),
				mixUp(ptrMs(s.rec().DetectionMs), "That is the simulator's detection (its memberlist model); q5 asks for your cluster run's: detection_ms in your result.json."))}, *rr.DetectionMs, 0.01, 1, "ms")
		return nil
	}
	return l
}

// lab6Path is the path of the student's cluster result named by q1 ("" without one).
func lab6Path(c *ctx) string {
	if len(c.answers["q1"]) == 0 {
		return ""
	}
	path := c.answers["q1"][0]
	if !filepath.IsAbs(path) && c.opts.BaseDir != "" {
		path = filepath.Join(c.opts.BaseDir, path)
	}
	return path
}

// lab6Real reads the student's cluster result named by q1.
func lab6Real(c *ctx) (*metrics.Run, string) {
	notAvail := ""
	if !c.opts.ClusterAvailable {
		notAvail = " Note: this build of streamha has no 'cluster' command yet, so lab 6 cannot be completed with it; ask your teacher."
	}
	if len(c.answers["q1"]) == 0 {
		return nil, "no cluster result given: put the path of your cluster run's result.json in q1." + notAvail
	}
	path := c.answers["q1"][0]
	if !filepath.IsAbs(path) && c.opts.BaseDir != "" {
		path = filepath.Join(c.opts.BaseDir, path)
	}
	res, err := readResult(path)
	if err != nil {
		return nil, fmt.Sprintf("cannot read the cluster result %s: %v.%s", path, err, notAvail)
	}
	if res.Mode != "cluster" {
		return nil, fmt.Sprintf("%s is a %q result, not a cluster one: run the experiment with 'streamha cluster'.%s", path, res.Mode, notAvail)
	}
	for i := range res.Runs {
		if res.Runs[i].Strategy == Lab6Strategy {
			return &res.Runs[i], fmt.Sprintf("%s is a cluster result of %s (seed %d, faults: %s).", path, Lab6Strategy, res.Seed, strings.Join(res.Faults, "; "))
		}
	}
	return nil, fmt.Sprintf("%s has no %s run: run the cluster with --strategy %s.", path, Lab6Strategy, Lab6Strategy)
}

func lab7() *Lab {
	l := &Lab{N: 7, Dir: "07-split-brain", Title: "Split brain",
		Summary: "A pause with an aggressive detector causes a false failover; what the resumed old primary does to the output, with and without fencing.",
		Questions: []Question{
			{Key: "p1", Predict: true, Text: "Before you run: with fencing off, will more outputs be missing than with fencing on? (yes or no)"},
			{Key: "q1", Text: "How many ms after the pause began was B declared dead?"},
			{Key: "q2", Text: "Was B really dead? (yes or no)"},
			{Key: "q3", Text: "How many outputs are missing with fencing on (experiment.yaml)?"},
			{Key: "q4", Text: "How many outputs are missing with fencing off (experiment-nofence.yaml)?"},
			{Key: "q5", Text: "With fencing on, how many messages did the hosts drop as coming from a stale epoch?"},
			{Key: "q6", Text: "With fencing off, for how many ms did the sink receive no output (the 'unavail ms' column)?"},
			{Key: "q7", Text: "With fencing off, how many ms after the pause began was the output back for good (the 'recovery ms' column)?"},
			{Key: "q8", Text: "With fencing off, how many of the new primary's outputs did C drop as duplicates (C's dup_dropped)?"},
		}}
	l.check = func(c *ctx) error {
		on, err := l.simulate("experiment.yaml", "amnesia")
		if err != nil {
			return err
		}
		off, err := l.simulate("experiment-nofence.yaml", "amnesia")
		if err != nil {
			return err
		}
		c.choice(spec{key: "p1", evidence: fmt.Sprintf("%d missing with fencing, %d without.", on.rec().Missing, off.rec().Missing),
			look:       "when B comes back it still believes it is the primary; what does C do with its messages, with and without the epoch check?",
			confusions: []confusion{mistake("Without fencing C accepts the resumed B's old, high sequence numbers and then drops the new primary's lower ones as duplicates.", "no")}},
			[]string{yesNo(off.rec().Missing > on.rec().Missing)})
		det := ptrMs(on.rec().DetectionMs)
		c.number(spec{key: "q1", evidence: "From the pause event to the first detect event of B.", look: "the 'detect ms' column.",
			confusions: distinctMixUps(det, 0, 1, append([]confusion{mixUp(400, "That is how long B was paused; detection came much earlier.")},
				detectionConfusions(on, "B", faultTime(on, ha.EvPause))...)...)}, det, 0, 1, "ms")
		var pause time.Duration
		for _, e := range on.sr.Trace.Events() {
			if e.Kind == ha.EvPause {
				pause = time.Duration(e.N)
				break
			}
		}
		c.choice(spec{key: "q2", evidence: fmt.Sprintf("B was paused for %s and declared dead after %.1f ms: a false failover (the trace has a resume event for B and no crash).", pause, det),
			look: "look for crash, pause and resume events in the trace."}, []string{"no"})
		var confs3 []confusion
		if on.rec().Missing != off.rec().Missing {
			confs3 = append(confs3, mixUp(float64(off.rec().Missing), "That is the run without fencing (experiment-nofence.yaml); q3 asks about experiment.yaml."))
		}
		c.number(spec{key: "q3", evidence: fmt.Sprintf("With fencing: %s, missing %s.", on.label(), list(on.cls.MissingIDs, 5)), look: "the 'missing' column for experiment.yaml.", confusions: append(confs3, moreConfusions(on)...)},
			float64(on.rec().Missing), 0, 0, "")
		dupC := hostStat(off.sr.Trace, "C", func(s *ha.NodeStats) int64 { return s.Duplicates })
		var confs4 []confusion
		if on.rec().Missing != off.rec().Missing {
			confs4 = append(confs4, mixUp(float64(on.rec().Missing), "That is the run with fencing (experiment.yaml); q4 asks about experiment-nofence.yaml."))
		}
		c.number(spec{key: "q4", evidence: fmt.Sprintf("Without fencing: %s, missing %s. The resumed B kept sending with its old, higher sequence numbers; C accepted them and then dropped the new primary's output as duplicates (dup_dropped %d).", off.label(), list(off.cls.MissingIDs, 5), dupC),
			look: "the 'missing' column for experiment-nofence.yaml.", probe: "streamha why --missing --run lab7-nofence", confusions: append(confs4, moreConfusions(off)...)},
			float64(off.rec().Missing), 0, 0, "")
		stale := stat(on.sr.Trace, func(s *ha.NodeStats) int64 { return s.Fenced })
		events, lines := fencedLines(on.sr.Trace)
		c.number(spec{key: "q5", evidence: "Sum of fenced_dropped over the hosts' stats events.", look: "sum fenced_dropped in the stats events of trace-amnesia.jsonl (grep '\"stats\"'), or count the fenced events' n.",
			confusions: distinctMixUps(float64(stale), 0, 0,
				mixUp(float64(events), "That counts every fenced event, B's own 'superseded by a newer epoch' too; only the receivers' drops ('dropped data from a stale epoch') count."),
				mixUp(float64(lines), "That counts every line with \"fenced\": B's 'superseded' event and B's stats (role fenced) too; only the receivers' drops count: their fenced_dropped."))},
			float64(stale), 0, 0, "messages")
		c.number(spec{key: "q6", evidence: fmt.Sprintf("Without fencing the sink waited %.1f ms; with fencing %.1f ms.", off.rec().UnavailableMs, on.rec().UnavailableMs), look: "the 'unavail ms' column.",
			confusions: []confusion{mixUp(on.rec().UnavailableMs, "That is the run with fencing.")}}, off.rec().UnavailableMs, 0.02, 1, "ms")
		if off.rec().RecoveryMs == nil {
			c.add("q7", false, "the run without fencing never recovered before it ended, so there is no moment to give: tell your teacher, the lab's experiment should run long enough")
		} else {
			c.number(spec{key: "q7", evidence: fmt.Sprintf("Output was back for good %.1f ms after the pause began, once B.1's numbering passed the last seq C had accepted from the resumed B.", *off.rec().RecoveryMs),
				look: "the 'recovery ms' column of experiment-nofence.yaml.", probe: "streamha why --missing --run lab7-nofence",
				confusions: []confusion{mixUp(off.rec().UnavailableMs, "That is the longest silence ('unavail ms'); recovery runs from the pause until the output is back for good."),
					mixUp(float64(pause/time.Millisecond), "That is when the resumed B came back; C then accepted B's stale output and dropped B.1's.")}},
				*off.rec().RecoveryMs, 0.02, 1, "ms")
		}
		var confs8 []confusion
		if int64(off.rec().Missing) != dupC {
			confs8 = append(confs8, mixUp(float64(off.rec().Missing), "That is the number of missing outputs, which is not what C counted as duplicates: some of B.1's drops were of outputs the resumed B had delivered."))
		}
		confs8 = append(confs8, mixUp(float64(stat(off.sr.Trace, func(s *ha.NodeStats) int64 { return s.InputGaps })), "That is input_gaps, the seqs C never received; the question asks for dup_dropped."))
		c.number(spec{key: "q8", evidence: fmt.Sprintf("C's stats event says dup_dropped %d in the run without fencing.", dupC),
			look: "the stats event of host C in trace-amnesia.jsonl of the run without fencing (dup_dropped).", probe: "streamha why --missing --run lab7-nofence",
			confusions: confs8}, float64(dupC), 0, 0, "")
		return nil
	}
	return l
}

// hostStat is one host's end-of-run counter.
func hostStat(trace *ha.Trace, host string, f func(*ha.NodeStats) int64) int64 {
	for _, e := range trace.Events() {
		if e.Kind == ha.EvStats && e.Stats != nil && e.Host == host {
			return f(e.Stats)
		}
	}
	return 0
}

func readResult(path string) (*metrics.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r metrics.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("not a streamha result.json: %w", err)
	}
	return &r, nil
}
