package classify

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// o builds an output in the default key with a value and no n or time.
func o(id, value string) Output { return Output{ID: id, Value: value} }

// on builds an output with a lineage count.
func on(id, value string, n int64) Output { return Output{ID: id, Value: value, N: n, HasN: true} }

// ot builds an output with a delivery time (ms).
func ot(id, value string, t float64) Output {
	return Output{ID: id, Value: value, T: t, HasT: true}
}

// ok builds an output in a key.
func ok(key, id, value string) Output { return Output{ID: id, Key: key, Value: value} }

// okt builds an output in a key with a delivery time (ms).
func okt(key, id, value string, t float64) Output {
	return Output{ID: id, Key: key, Value: value, T: t, HasT: true}
}

func fp(f float64) *float64 { return &f }

// texts are the labels as text.
func texts(st []Status) []string {
	out := make([]string, len(st))
	for i, s := range st {
		out[i] = s.String()
	}
	return out
}

// TestStatusText: the delivery labels read, and encode in JSON, as the
// words the package documentation uses.
func TestStatusText(t *testing.T) {
	tests := []struct {
		status Status
		want   string
	}{
		{StatusOK, "ok"},
		{StatusDuplicate, "duplicate"},
		{StatusWrong, "wrong"},
		{StatusSpurious, "spurious"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.status.String())
			b, err := tc.status.MarshalText()
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
			j, err := json.Marshal(map[Status][]Status{tc.status: {tc.status}})
			require.NoError(t, err)
			assert.JSONEq(t, `{"`+tc.want+`": ["`+tc.want+`"]}`, string(j))
		})
	}
	_, err := Status(200).MarshalText()
	require.Error(t, err)
	assert.Equal(t, "Status(200)", Status(200).String())
}

func TestClassifyTypes(t *testing.T) {
	abc := []Output{o("a", "1"), o("b", "2"), o("c", "3")}
	type want struct {
		typ, sub                       string
		missing, dups, wrong, spurious int
		lost                           int64
		convergedAt                    *float64
		status                         []string
		missingIDs                     []string
	}
	tests := []struct {
		name     string
		expected []Output
		observed []Output
		want     want
	}{
		{
			name: "precise", expected: abc, observed: abc,
			want: want{typ: TypePrecise, status: []string{"ok", "ok", "ok"}},
		},
		{
			name: "precise empty",
			want: want{typ: TypePrecise, status: []string{}},
		},
		{
			name:     "precise with n",
			expected: []Output{on("a", "1", 10), on("b", "2", 20)},
			observed: []Output{on("a", "1", 10), on("b", "2", 20)},
			want:     want{typ: TypePrecise, status: []string{"ok", "ok"}},
		},
		{
			name:     "precise across keys despite cross-key reorder",
			expected: []Output{ok("k1", "a", "1"), ok("k2", "b", "2"), ok("k1", "c", "3"), ok("k2", "d", "4")},
			observed: []Output{ok("k2", "b", "2"), ok("k2", "d", "4"), ok("k1", "a", "1"), ok("k1", "c", "3")},
			want:     want{typ: TypePrecise, status: []string{"ok", "ok", "ok", "ok"}},
		},
		{
			name:     "precise with an id expected twice",
			expected: []Output{o("a", "1"), o("a", "1")},
			observed: []Output{o("a", "1"), o("a", "1")},
			want:     want{typ: TypePrecise, status: []string{"ok", "ok"}},
		},
		{
			name:     "gap by missing id",
			expected: []Output{on("a", "1", 10), on("b", "2", 10), on("c", "3", 7)},
			observed: []Output{on("a", "1", 10), on("c", "3", 7)},
			want: want{typ: TypeGap, missing: 1, lost: 10, status: []string{"ok", "ok"},
				missingIDs: []string{"b"}},
		},
		{
			name:     "gap by missing id without n loses no counted inputs",
			expected: abc,
			observed: []Output{o("a", "1"), o("b", "2")},
			want:     want{typ: TypeGap, missing: 1, status: []string{"ok", "ok"}, missingIDs: []string{"c"}},
		},
		{
			name:     "gap by lower n",
			expected: []Output{on("a", "1", 1000), on("b", "2", 500), on("c", "3", 300)},
			observed: []Output{on("a", "1", 812), on("b", "2", 500), on("c", "3", 299)},
			want:     want{typ: TypeGap, wrong: 2, lost: 188 + 1, status: []string{"wrong", "ok", "wrong"}},
		},
		{
			name:     "gap counts the last copy only",
			expected: []Output{on("a", "1", 1000)},
			observed: []Output{on("a", "1", 1000), on("a", "1", 900)},
			want:     want{typ: TypeGap, wrong: 1, lost: 100, status: []string{"ok", "wrong"}},
		},
		{
			name:     "higher n on the last copy is no gap",
			expected: []Output{on("a", "1", 10), on("b", "2", 10)},
			observed: []Output{on("a", "1", 12), on("b", "2", 10)},
			want:     want{typ: TypeRollback, sub: SubtypeConvergent, wrong: 1, convergedAt: fp(1), status: []string{"wrong", "ok"}},
		},
		{
			name:     "repeating",
			expected: abc,
			observed: []Output{o("a", "1"), o("b", "2"), o("a", "1"), o("b", "2"), o("c", "3"), o("c", "3")},
			want: want{typ: TypeRollback, sub: SubtypeRepeating, dups: 3,
				status: []string{"ok", "ok", "duplicate", "duplicate", "ok", "duplicate"}},
		},
		{
			name:     "repeating per key",
			expected: []Output{ok("x", "a", "1"), ok("y", "b", "2"), ok("x", "c", "3")},
			observed: []Output{ok("x", "a", "1"), ok("y", "b", "2"), ok("x", "a", "1"), ok("x", "c", "3")},
			want: want{typ: TypeRollback, sub: SubtypeRepeating, dups: 1,
				status: []string{"ok", "ok", "duplicate", "ok"}},
		},
		{
			name:     "convergent with times",
			expected: []Output{ot("w1", "1", 1000), ot("w2", "2", 2000), ot("w3", "3", 3000)},
			observed: []Output{ot("w1", "1", 1000), ot("w2", "5", 2000), ot("w2", "2", 2500), ot("w3", "3", 3000)},
			want: want{typ: TypeRollback, sub: SubtypeConvergent, wrong: 1, convergedAt: fp(2500),
				status: []string{"ok", "wrong", "ok", "ok"}},
		},
		{
			name:     "convergent without times gives the delivery index",
			expected: []Output{o("w1", "1"), o("w2", "2"), o("w3", "3")},
			observed: []Output{o("w1", "1"), o("w2", "5"), o("w2", "5"), o("w2", "2"), o("w3", "3")},
			want: want{typ: TypeRollback, sub: SubtypeConvergent, wrong: 1, dups: 1, convergedAt: fp(3),
				status: []string{"ok", "wrong", "duplicate", "ok", "ok"}},
		},
		{
			name: "convergent takes the latest key",
			expected: []Output{okt("x", "x1", "1", 100), okt("y", "y1", "1", 150), okt("x", "x2", "2", 200),
				okt("y", "y2", "2", 250)},
			observed: []Output{okt("x", "x1", "9", 100), okt("y", "y1", "9", 150), okt("x", "x1", "1", 180),
				okt("x", "x2", "2", 200), okt("y", "y2", "2", 250)},
			want: want{typ: TypeRollback, sub: SubtypeConvergent, wrong: 2, convergedAt: fp(250),
				status: []string{"wrong", "wrong", "ok", "ok", "ok"}},
		},
		{
			name:     "convergent after a spurious output",
			expected: []Output{o("a", "1"), o("b", "2")},
			observed: []Output{o("a", "1"), o("x", "7"), o("b", "2")},
			want: want{typ: TypeRollback, sub: SubtypeConvergent, spurious: 1, convergedAt: fp(2),
				status: []string{"ok", "spurious", "ok"}},
		},
		{
			name:     "divergent: union interleaving swapped at the end",
			expected: []Output{o("s0:1", "1"), o("s1:1", "1"), o("s0:2", "2"), o("s1:2", "2")},
			observed: []Output{o("s0:1", "1"), o("s1:1", "1"), o("s1:2", "2"), o("s0:2", "2")},
			want: want{typ: TypeRollback, sub: SubtypeDivergent,
				status: []string{"ok", "ok", "ok", "ok"}},
		},
		{
			name:     "divergent: value differs at the end",
			expected: []Output{o("a", "1"), o("b", "2")},
			observed: []Output{o("a", "1"), o("b", "3")},
			want:     want{typ: TypeRollback, sub: SubtypeDivergent, wrong: 1, status: []string{"ok", "wrong"}},
		},
		{
			name:     "divergent: spurious at the end",
			expected: []Output{o("a", "1"), o("b", "2")},
			observed: []Output{o("a", "1"), o("b", "2"), o("x", "9"), o("x", "9")},
			want: want{typ: TypeRollback, sub: SubtypeDivergent, spurious: 1, dups: 1,
				status: []string{"ok", "ok", "spurious", "duplicate"}},
		},
		{
			name:     "divergent: a key never expected cannot converge",
			expected: []Output{ok("k1", "a", "1")},
			observed: []Output{ok("k1", "a", "1"), ok("k2", "z", "1")},
			want: want{typ: TypeRollback, sub: SubtypeDivergent, spurious: 1,
				status: []string{"ok", "spurious"}},
		},
		{
			name:     "gap wins over everything else",
			expected: []Output{o("a", "1"), o("b", "2"), o("c", "3")},
			observed: []Output{o("a", "1"), o("a", "1"), o("x", "0"), o("c", "4")},
			want: want{typ: TypeGap, missing: 1, dups: 1, spurious: 1, wrong: 1,
				status: []string{"ok", "duplicate", "spurious", "wrong"}, missingIDs: []string{"b"}},
		},
		{
			name:     "nothing delivered",
			expected: []Output{on("a", "1", 3), on("b", "1", 4)},
			want:     want{typ: TypeGap, missing: 2, lost: 7, status: []string{}, missingIDs: []string{"a", "b"}},
		},
		{
			name:     "n compared only when both sides carry it",
			expected: []Output{on("a", "1", 3)},
			observed: []Output{o("a", "1")},
			want:     want{typ: TypePrecise, status: []string{"ok"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Classify(tc.expected, tc.observed, nil)
			w := tc.want
			assert.Equal(t, w.typ, r.Type, "type")
			assert.Equal(t, w.sub, r.Subtype, "subtype")
			assert.Equal(t, w.missing, r.Missing, "missing")
			assert.Equal(t, w.dups, r.Duplicates, "duplicates")
			assert.Equal(t, w.wrong, r.Wrong, "wrong")
			assert.Equal(t, w.spurious, r.Spurious, "spurious")
			assert.Equal(t, w.lost, r.LostInputs, "lost inputs")
			assert.Equal(t, w.convergedAt, r.ConvergedAt, "converged at")
			assert.Equal(t, w.status, texts(r.Status), "status")
			if w.missingIDs == nil {
				w.missingIDs = []string{}
			}
			assert.Equal(t, w.missingIDs, r.MissingIDs, "missing ids")
			require.NotNil(t, r.Explanations)
			if r.Type == TypePrecise {
				assert.Empty(t, r.Explanations)
			} else {
				assert.NotEmpty(t, r.Explanations, "every non-precise result is explained")
			}
		})
	}
}

func TestPreciseJSONShowsEmptyExplanations(t *testing.T) {
	r := Classify([]Output{o("a", "1")}, []Output{o("a", "1")}, nil)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"precise","subtype":"","missing":0,"duplicates":0,"wrong":0,"spurious":0,
		"lost_inputs":0,"converged_at":null,"explanations":[]}`, string(b))

	r = Classify([]Output{o("a", "1"), o("b", "1")}, []Output{o("a", "2"), o("b", "1")}, nil)
	b, err = json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"converged_at":1`)
}

var crashMarks = []Mark{
	{At: 9400, Label: "the crash of B"},
	{At: 9600, Until: 9900, Label: "the replay from upstream A"},
}

func TestExplanations(t *testing.T) {
	tests := []struct {
		name     string
		expected []Output
		observed []Output
		marks    []Mark
		want     []string
	}{
		{
			name:     "duplicate across a crash and a replay",
			expected: []Output{ot("k03|w=9s", "40", 9010)},
			observed: []Output{ot("k03|w=9s", "40", 9010), ot("k03|w=9s", "40", 9720)},
			marks:    crashMarks,
			want: []string{"output k03|w=9s emitted twice: at 9.01 s before the crash of B at 9.40 s " +
				"and at 9.72 s during the replay from upstream A"},
		},
		{
			name:     "three copies",
			expected: []Output{ot("a", "1", 1000)},
			observed: []Output{ot("a", "1", 1000), ot("a", "1", 9700), ot("a", "1", 9950)},
			marks:    crashMarks,
			want: []string{"output a emitted 3 times: at 1.00 s before the crash of B at 9.40 s, " +
				"at 9.70 s during the replay from upstream A and at 9.95 s after the crash of B at 9.40 s"},
		},
		{
			name:     "missing",
			expected: []Output{ot("k04|w=9s", "1", 9000), ot("k05|w=10s", "2", 10000)},
			observed: []Output{ot("k04|w=9s", "1", 9000)},
			marks:    crashMarks,
			want:     []string{"output k05|w=10s never delivered (expected at 10.00 s, after the crash of B at 9.40 s)"},
		},
		{
			name: "lower n",
			expected: []Output{{ID: "k01|w=10s", Value: "7", N: 1000, HasN: true, T: 10010, HasT: true},
				ot("k09", "1", 11000)},
			observed: []Output{{ID: "k01|w=10s", Value: "7", N: 812, HasN: true, T: 10610, HasT: true},
				ot("k09", "1", 11000)},
			marks: crashMarks,
			want: []string{"output k01|w=10s delivered at 10.61 s after the crash of B at 9.40 s " +
				"with 812 source tuples instead of 1000 (188 inputs lost)"},
		},
		{
			name:     "wrong value",
			expected: []Output{ot("k02|w=12s", "40", 12000), ot("z", "1", 13000)},
			observed: []Output{ot("k02|w=12s", "41.5", 12300), ot("z", "1", 13000)},
			marks:    crashMarks,
			want: []string{"output k02|w=12s delivered with value 41.5 instead of 40 at 12.30 s " +
				"after the crash of B at 9.40 s"},
		},
		{
			name:     "spurious",
			expected: []Output{ot("s1:39", "1", 9000)},
			observed: []Output{ot("s1:39", "1", 9000), ot("s1:40", "1", 9650)},
			marks:    crashMarks,
			want:     []string{"output s1:40 was not expected (spurious) at 9.65 s during the replay from upstream A"},
		},
		{
			name:     "no marks",
			expected: []Output{ot("a", "1", 1000)},
			observed: []Output{ot("a", "1", 1000), ot("a", "1", 2000)},
			want:     []string{"output a emitted twice: at 1.00 s and at 2.00 s"},
		},
		{
			name:     "times unknown are omitted",
			expected: []Output{o("a", "1"), o("b", "2"), o("c", "3")},
			observed: []Output{o("a", "1"), o("a", "1"), o("c", "4"), o("x", "0")},
			marks:    crashMarks,
			want: []string{
				"output a emitted twice",
				"output c delivered with value 4 instead of 3",
				"output x was not expected (spurious)",
				"output b never delivered",
			},
		},
		{
			name:     "after an interval that ended",
			expected: []Output{ot("a", "1", 1000)},
			observed: []Output{ot("a", "1", 1000), ot("a", "1", 5000)},
			marks:    []Mark{{At: 2000, Until: 3000, Label: "the partition"}},
			want: []string{"output a emitted twice: at 1.00 s before the partition at 2.00 s " +
				"and at 5.00 s after the partition at 2.00–3.00 s"},
		},
		{
			name:     "order only",
			expected: []Output{okt("k1", "s0:1", "1", 100), okt("k1", "s1:1", "1", 200)},
			observed: []Output{okt("k1", "s1:1", "1", 100), okt("k1", "s0:1", "1", 200)},
			marks:    crashMarks,
			want: []string{"output s1:1 delivered at 0.10 s before the crash of B at 9.40 s out of order: " +
				"the failure-free run has output s0:1 at position 1 of key k1"},
		},
		{
			name:     "sentences in time order",
			expected: []Output{ot("a", "1", 1000), ot("b", "1", 2000), ot("c", "1", 3000)},
			observed: []Output{ot("a", "1", 1000), ot("c", "2", 3000), ot("a", "1", 3500)},
			want: []string{
				"output b never delivered (expected at 2.00 s)",
				"output c delivered with value 2 instead of 1 at 3.00 s",
				"output a emitted twice: at 1.00 s and at 3.50 s",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Classify(tc.expected, tc.observed, tc.marks)
			assert.Equal(t, tc.want, r.Explanations)
		})
	}
}

func TestExplanationsCapped(t *testing.T) {
	// Each window is its own sentence, so 40 windows with anomalies need
	// more sentences than are given.
	var exp, obs []Output
	for i := range 40 {
		id := "k|w=" + strconv.Itoa(i) + "s"
		exp = append(exp, ot(id, "1", float64(1000*i)))
		switch {
		case i < 30: // missing
		case i < 33:
			obs = append(obs, ot(id, "1", float64(1000*i)), ot(id, "1", float64(1000*i+500)))
		case i < 35:
			obs = append(obs, ot(id, "2", float64(1000*i)))
		default:
			obs = append(obs, ot(id, "1", float64(1000*i)))
		}
	}
	obs = append(obs, ot("extra", "1", 99000))
	r := Classify(exp, obs, nil)
	assert.Equal(t, TypeGap, r.Type)
	assert.Equal(t, 30, r.Missing)
	assert.Equal(t, 3, r.Duplicates)
	assert.Equal(t, 2, r.Wrong)
	assert.Equal(t, 1, r.Spurious)
	require.Len(t, r.Explanations, MaxExplanations+1)
	assert.Equal(t, "output k|w=0s never delivered (expected at 0.00 s)", r.Explanations[0])
	assert.Equal(t, "… and 11 more anomalies (5 missing, 3 duplicates, 2 wrong, 1 spurious)",
		r.Explanations[MaxExplanations])
}

func TestExplanationsGrouped(t *testing.T) {
	wr := func(id, v string, n int64, ms float64) Output {
		return Output{ID: id, Value: v, N: n, HasN: true, T: ms, HasT: true}
	}
	tests := []struct {
		name     string
		expected []Output
		observed []Output
		want     []string
	}{
		{
			name: "wrong outputs of one window, values to 4 significant digits, lost inputs summed",
			expected: []Output{wr("k00|w=10s", "119.1234", 117, 10010), wr("k01|w=10s", "126", 117, 10010),
				wr("k02|w=11s", "3", 5, 11010)},
			observed: []Output{wr("k00|w=10s", "49.15765249149101", 50, 11000), wr("k01|w=10s", "58.11", 54, 11000),
				wr("k02|w=11s", "3", 5, 11010)},
			want: []string{"2 outputs of window 10 s wrong, delivered at 11.00 s after the crash of B at 9.40 s " +
				"(130 inputs lost): k00 49.16 instead of 119.1 (50 source tuples, not 117), " +
				"k01 58.11 instead of 126 (54 source tuples, not 117)"},
		},
		{
			name: "missing outputs in one context, the rest counted",
			expected: []Output{ot("a#1", "1", 9500), ot("a#2", "1", 9510), ot("a#3", "1", 9520), ot("a#4", "1", 9530),
				ot("a#5", "1", 9540), ot("a#6", "1", 9550), ot("a#7", "1", 9560), ot("a#8", "1", 9570)},
			observed: []Output{ot("a#1", "1", 9500)},
			want: []string{"7 outputs never delivered (expected at 9.51–9.57 s, after the crash of B at 9.40 s): " +
				"a#2, a#3, a#4, a#5, a#6, a#7, and 1 more"},
		},
		{
			name:     "duplicates in another context than the first copies",
			expected: []Output{ot("a", "1", 1000), ot("b", "1", 2000)},
			observed: []Output{ot("a", "1", 1000), ot("b", "1", 2000), ot("a", "1", 9700), ot("b", "1", 9800)},
			want:     []string{"2 outputs emitted twice, repeated at 9.70–9.80 s during the replay from upstream A: a, b"},
		},
		{
			name:     "different windows are told apart",
			expected: []Output{ot("k0|w=1s", "1", 1000), ot("k0|w=2s", "1", 2000)},
			observed: []Output{},
			want: []string{"output k0|w=1s never delivered (expected at 1.00 s, before the crash of B at 9.40 s)",
				"output k0|w=2s never delivered (expected at 2.00 s, before the crash of B at 9.40 s)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Classify(tc.expected, tc.observed, crashMarks)
			assert.Equal(t, tc.want, r.Explanations)
		})
	}
}

func TestExplanationsNameIDsTimesAndMarks(t *testing.T) {
	exp := []Output{ot("k01", "1", 9000), ot("k02", "2", 9500), ot("k03", "3", 9800)}
	obs := []Output{ot("k01", "1", 9000), ot("k01", "1", 9700), ot("k03", "4", 9800), ot("k09", "4", 9850)}
	r := Classify(exp, obs, crashMarks)
	require.Len(t, r.Explanations, 4)
	for _, s := range r.Explanations {
		assert.Contains(t, s, "output k0")
		assert.True(t, strings.Contains(s, "the crash of B") || strings.Contains(s, "the replay from upstream A"), s)
		assert.Regexp(t, `\d+\.\d\d s`, s)
	}
	// Sorted by the time of the anomaly: the missing k02 (9.50 s), the
	// repeat of k01 (9.70 s), the wrong k03 (9.80 s), the spurious k09.
	assert.Contains(t, r.Explanations[0], "k02")
	assert.Contains(t, r.Explanations[1], "k01")
	assert.Contains(t, r.Explanations[1], "9.00 s")
	assert.Contains(t, r.Explanations[1], "9.70 s")
	assert.Contains(t, r.Explanations[2], "k03")
	assert.Contains(t, r.Explanations[3], "k09")
}

func TestRelate(t *testing.T) {
	mk := newMarkIndex(crashMarks)
	tests := []struct {
		t    float64
		want string
	}{
		{1000, "before the crash of B at 9.40 s"},
		{9400, "after the crash of B at 9.40 s"},
		{9500, "after the crash of B at 9.40 s"},
		{9600, "during the replay from upstream A"},
		{9900, "during the replay from upstream A"},
		{9901, "after the crash of B at 9.40 s"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, mk.relate(tc.t), "t=%v", tc.t)
	}
	assert.Equal(t, "", newMarkIndex(nil).relate(5))
}

// randomLogs builds a pseudo-random pair of logs with anomalies of every kind.
func randomLogs(seed uint64, n, keys int) (exp, obs []Output, marks []Mark) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := range n {
		k := "k" + strconv.Itoa(i%keys)
		exp = append(exp, Output{ID: k + "|" + strconv.Itoa(i), Key: k, Value: strconv.Itoa(i % 7),
			N: int64(i % 13), HasN: true, T: float64(i), HasT: true})
	}
	for _, e := range exp {
		switch rng.IntN(20) {
		case 0: // missing
		case 1:
			obs = append(obs, e, e)
		case 2:
			e.Value += "x"
			obs = append(obs, e)
		case 3:
			obs = append(obs, e, Output{ID: "spurious" + strconv.Itoa(rng.IntN(50)), Key: e.Key, Value: "0"})
		case 4:
			if len(obs) > 0 {
				obs[len(obs)-1], e = e, obs[len(obs)-1]
			}
			obs = append(obs, e)
		default:
			obs = append(obs, e)
		}
	}
	marks = []Mark{{At: float64(n / 3), Label: "the crash"}, {At: float64(n / 2), Until: float64(n/2 + 10), Label: "the replay"}}
	return exp, obs, marks
}

func TestDeterministic(t *testing.T) {
	for seed := range uint64(5) {
		exp, obs, marks := randomLogs(seed, 2000, 17)
		r1 := Classify(exp, obs, marks)
		for range 3 {
			r2 := Classify(exp, obs, marks)
			require.Equal(t, r1, r2)
		}
		j1, err := json.Marshal(r1)
		require.NoError(t, err)
		j2, err := json.Marshal(Classify(exp, obs, marks))
		require.NoError(t, err)
		require.Equal(t, string(j1), string(j2))
		require.Len(t, r1.Status, len(obs))
		require.LessOrEqual(t, len(r1.Explanations), MaxExplanations+1)
	}
}

func TestSelfIsPrecise(t *testing.T) {
	exp, obs, marks := randomLogs(7, 3000, 5)
	for _, log := range [][]Output{exp, obs} {
		r := Classify(log, log, marks)
		assert.Equal(t, TypePrecise, r.Type)
		assert.Zero(t, r.Duplicates+r.Wrong+r.Spurious+r.Missing)
		assert.Empty(t, r.Explanations)
	}
}

func TestStatusCountsAgree(t *testing.T) {
	exp, obs, _ := randomLogs(3, 5000, 9)
	r := Classify(exp, obs, nil)
	count := map[Status]int{}
	for _, s := range r.Status {
		count[s]++
	}
	assert.Equal(t, r.Duplicates, count[StatusDuplicate])
	assert.Equal(t, r.Wrong, count[StatusWrong])
	assert.Equal(t, r.Spurious, count[StatusSpurious])
	assert.Equal(t, len(obs), count[StatusOK]+r.Duplicates+r.Wrong+r.Spurious)
	assert.Len(t, r.MissingIDs, r.Missing)
}

// TestIndexRelatesTheLogsByID: the result numbers the expected ids in
// order of first delivery and gives each observed output its id, -1 for
// one never expected, so callers need not number them again.
func TestIndexRelatesTheLogsByID(t *testing.T) {
	out := func(id string) Output { return Output{ID: id, Value: "1"} }
	exp := []Output{out("a"), out("b"), out("a"), out("c")}
	obs := []Output{out("b"), out("x"), out("a"), out("c"), out("b")}
	r := Classify(exp, obs, nil)
	assert.Equal(t, []int32{0, 1, 3}, r.Index.First)
	assert.Equal(t, []int32{1, -1, 0, 2, 1}, r.Index.Observed)
}
