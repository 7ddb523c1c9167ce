package labs

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ctx is one check in progress.
type ctx struct {
	lab     *Lab
	answers Answers
	opts    Options
	res     *Result
}

// spec says how to explain one question's verdict.
type spec struct {
	key string
	// evidence is what the check computed, values included: shown for a
	// right answer (with --verbose) and to a teacher (Reveal), never for a
	// wrong one.
	evidence string
	// look says where the answer is to be found, without giving it:
	// shown for a wrong or blank answer.
	look string
	// why is a command that follows the evidence to its cause (often
	// `streamha why ID`, naming the answer); shown with --verbose for a
	// right answer.
	why string
	// probe is a command that shows where the evidence is without naming
	// the answer (`streamha why --first-wrong`); shown for a wrong answer,
	// and for a right one when there is no why.
	probe string
	// confusions are the likely mistakes the check recognises.
	confusions []confusion
}

// confusion is a wrong answer the check recognises and what it probably
// mixed up. For a numeric question num is the value that signals it
// (within the question's tolerance); otherwise answers lists the texts.
type confusion struct {
	num     *float64
	answers []string
	say     string
}

// mixUp is a numeric confusion: an answer near v means say.
func mixUp(v float64, say string) confusion { return confusion{num: &v, say: say} }

// mistake is a textual confusion: any of answers means say.
func mistake(say string, answers ...string) confusion { return confusion{answers: answers, say: say} }

func (c *ctx) question(key string) string {
	for _, q := range c.lab.Questions {
		if q.Key == key {
			return q.Text
		}
	}
	panic("labs: lab " + strconv.Itoa(c.lab.N) + " grades unknown question " + key)
}

// add records a verdict with a ready explanation (lab-level situations:
// no strategy registered, no cluster result).
func (c *ctx) add(key string, right bool, why string) {
	c.res.Verdicts = append(c.res.Verdicts, Verdict{
		Key: key, Question: c.question(key), Answer: strings.Join(c.answers[key], ", "), Right: right, Why: why,
	})
}

// verdict records the outcome of a graded question: a right answer gets
// the evidence; a wrong one the confusion it matches (or a direction for
// a number), where to look and the why pointer, never the value.
func (c *ctx) verdict(s spec, right bool, expected, confused string) {
	v := Verdict{Key: s.key, Question: c.question(s.key), Answer: strings.Join(c.answers[s.key], ", "), Right: right}
	if right {
		v.Why, v.Look = s.evidence, cmp.Or(s.why, s.probe)
	} else {
		parts := []string{}
		if confused != "" {
			parts = append(parts, confused)
		}
		if s.look != "" {
			parts = append(parts, "Where to look: "+s.look)
		}
		v.Why, v.Look = strings.Join(parts, " "), s.probe
	}
	if c.opts.Reveal {
		v.Expected, v.Evidence = expected, s.evidence
		for _, m := range s.confusions {
			v.Confusions = append(v.Confusions, m.say)
		}
	}
	c.res.Verdicts = append(c.res.Verdicts, v)
}

// blank records a blank answer; true when the answer was blank.
func (c *ctx) blank(s spec, expected string) bool {
	if len(c.answers[s.key]) > 0 {
		return false
	}
	c.verdict(s, false, expected, "No answer given.")
	return true
}

// number grades a numeric answer against want within a relative tolerance
// (and an absolute one for values near zero).
func (c *ctx) number(s spec, want, relTol, absTol float64, unit string) {
	tol := max(absTol, math.Abs(want)*relTol)
	u := ""
	if unit != "" {
		u = " " + unit
	}
	expected := fmt.Sprintf("%s%s (±%s)", fmtNum(want), u, fmtNum(tol))
	if c.blank(s, expected) {
		return
	}
	text := strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(c.answers[s.key][0], unit), "%"))
	got, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil {
		c.verdict(s, false, expected, fmt.Sprintf("Want a number (in %s), got %q.", unitName(unit), c.answers[s.key][0]))
		return
	}
	if math.Abs(got-want) <= tol {
		c.verdict(s, true, expected, "")
		return
	}
	for _, m := range s.confusions {
		if m.num != nil && math.Abs(got-*m.num) <= max(absTol, math.Abs(*m.num)*relTol) {
			c.verdict(s, false, expected, m.say)
			return
		}
	}
	dir := "too high"
	if got < want {
		dir = "too low"
	}
	c.verdict(s, false, expected, fmt.Sprintf("Not what the check computed: %s.", dir))
}

// choice grades an answer that must be one of the accepted texts
// (case-insensitive).
func (c *ctx) choice(s spec, accepted []string) {
	expected := strings.Join(quoteAll(accepted), " or ")
	if c.blank(s, expected) {
		return
	}
	got := normalize(c.answers[s.key][0])
	for _, a := range accepted {
		if got == normalize(a) {
			c.verdict(s, true, expected, "")
			return
		}
	}
	for _, m := range s.confusions {
		for _, a := range m.answers {
			if got == normalize(a) {
				c.verdict(s, false, expected, m.say)
				return
			}
		}
	}
	c.verdict(s, false, expected, "Not what the check computed.")
}

// set grades a list answer that must equal the computed set (order
// ignored); a wrong one is told how many items are missing or extra, not
// which.
func (c *ctx) set(s spec, want []string) {
	expected := "[" + strings.Join(want, ", ") + "]"
	if c.blank(s, expected) {
		return
	}
	got := map[string]bool{}
	for _, a := range c.answers[s.key] {
		got[normalize(a)] = true
	}
	wantSet := map[string]bool{}
	missing, extra := 0, 0
	for _, w := range want {
		wantSet[normalize(w)] = true
		if !got[normalize(w)] {
			missing++
		}
	}
	for a := range got {
		if !wantSet[a] {
			extra++
		}
	}
	if missing == 0 && extra == 0 {
		c.verdict(s, true, expected, "")
		return
	}
	var parts []string
	if missing > 0 {
		parts = append(parts, fmt.Sprintf("your list lacks %s", count(missing, "item")))
	}
	if extra > 0 {
		parts = append(parts, fmt.Sprintf("%s in it %s not in the computed set", count(extra, "item"), map[bool]string{true: "is", false: "are"}[extra == 1]))
	}
	c.verdict(s, false, expected, capitalize(strings.Join(parts, "; "))+".")
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func normalize(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Quote(x)
	}
	return out
}

func unitName(u string) string {
	if u == "" {
		return "plain units"
	}
	return u
}

func fmtNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e12 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// recoveryAnswers lists the accepted spellings of a recovery: "gap",
// "rollback/repeating", "repeating" (the subtype alone) and "rollback".
func recoveryAnswers(typ, sub string) []string {
	if sub == "" {
		return []string{typ}
	}
	return []string{typ + "/" + sub, sub, typ + " " + sub}
}

// yesNo is "yes" or "no".
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// recoveryConfusions are the usual mix-ups between recovery types, for a
// question whose right answer is label.
func recoveryConfusions(typ, sub string) []confusion {
	var out []confusion
	if typ != "precise" {
		out = append(out, mistake("Precise means the output equals the failure-free run's exactly, latency aside: is every anomaly column 0?", "precise"))
	}
	if typ != "gap" {
		out = append(out, mistake("Gap means some input's effect never reached the output: look at 'missing' and 'lost in', not at 'wrong' alone.", "gap"))
	}
	if typ == "gap" {
		out = append(out, mistake("Rollback means no input was lost; here some source tuples never reached the output: look at the 'lost in' column.",
			"rollback", "rollback/repeating", "rollback/convergent", "rollback/divergent", "repeating", "convergent", "divergent"))
	}
	if typ == "rollback" && sub == "convergent" {
		out = append(out, mistake("Divergent means the output never becomes identical again; here it does: result.json gives converged_at_ms.", "divergent", "rollback/divergent"))
		out = append(out, mistake("Repeating means the only difference is extra copies; here outputs have other values: look at 'wrong'.", "repeating", "rollback/repeating"))
	}
	if typ == "rollback" && sub == "divergent" {
		out = append(out, mistake("Convergent means that from some point on the output equals the failure-free run's again; here outputs still differ when the run ends: compare the last wrong delivery with the end of the run.", "convergent", "rollback/convergent"))
		out = append(out, mistake("Repeating means the only difference is extra copies; here outputs have other values: look at 'wrong'.", "repeating", "rollback/repeating"))
	}
	if typ == "rollback" && sub == "repeating" {
		out = append(out, mistake("Nothing here was delivered with another value: the only anomalies are extra copies. Which subtype is that?", "convergent", "rollback/convergent", "divergent", "rollback/divergent"))
	}
	return out
}
