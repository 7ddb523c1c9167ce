package labs

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/why"
)

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
