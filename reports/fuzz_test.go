package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamha/streamha/ha"
)

// writeFuzzFile writes b where a reader expects its file.
func writeFuzzFile(t *testing.T, name string, b []byte) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzReadResult feeds arbitrary bytes to the result.json reader: it
// returns an error or a result that passes ValidateResult, never panics.
func FuzzReadResult(f *testing.F) {
	_, ps := synthPoints()
	b, _ := json.Marshal(ps[0].Result)
	f.Add(b)
	f.Add([]byte("null"))
	f.Add([]byte("{}"))
	f.Add([]byte(`{"runs":[{"strategy":"../../x"}]}`))
	f.Add([]byte(`{"runs":[{"strategy":"a","recovery":{"recovery_ms":1e300}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ReadResult(writeFuzzFile(t, ResultFile, b))
		if err != nil {
			return
		}
		if err := ValidateResult(r); err != nil {
			t.Fatalf("accepted an invalid result: %v", err)
		}
	})
}

// FuzzReadPoints feeds arbitrary bytes to the points.jsonl reader of a
// fixed sweep: every point it returns belongs to the sweep, once, with a
// valid result.
func FuzzReadPoints(f *testing.F) {
	sw, ps := synthPoints()
	var all []byte
	for _, p := range ps[:3] {
		b, _ := json.Marshal(p)
		all = append(append(all, b...), '\n')
	}
	f.Add(all)
	f.Add(append(append([]byte{}, all...), all...))
	f.Add([]byte(`{"index":0,"setting":0,"values":["50ms"],"seed":1,"result":{}}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ReadPoints(sw, writeFuzzFile(t, SweepPointsFile, b), false)
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for _, p := range got {
			if p.Index < 0 || p.Index >= sw.Len() || seen[p.Index] {
				t.Fatalf("accepted point %d twice or outside the sweep", p.Index)
			}
			seen[p.Index] = true
			if err := ValidateResult(p.Result); err != nil {
				t.Fatalf("accepted an invalid result: %v", err)
			}
		}
	})
}

// FuzzReadTrace feeds arbitrary bytes to the trace reader: every event it
// returns has its times in range.
func FuzzReadTrace(f *testing.F) {
	var tr ha.Trace
	tr.Add(ha.Event{T: 5, Kind: ha.EvDeliver, Host: "sink", Tuple: &ha.Tuple{Seq: 1, Time: 1, Emit: 1, Value: 2}})
	tr.Add(ha.Event{T: 7, Kind: ha.EvCrash, Host: "B"})
	p := filepath.Join(f.TempDir(), "t.jsonl")
	if err := WriteTrace(p, &tr); err != nil {
		f.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	f.Add(b)
	f.Add([]byte(`{"t":-5000000000,"kind":"deliver","host":"sink","tuple":{"Seq":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ReadTrace(writeFuzzFile(t, "trace-x.jsonl", b))
		if err != nil {
			return
		}
		for e := range got.All() {
			if err := checkEvent(&e); err != nil {
				t.Fatalf("accepted event %+v: %v", e, err)
			}
		}
	})
}
