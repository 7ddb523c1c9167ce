package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	hametrics "github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/reports"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

func benchSim(size benchSize, add func(row)) error {
	e := experiment.Default()
	st, err := strategies.Build("none", nil)
	if err != nil {
		return err
	}
	cfg, err := sim.ConfigFor(e, st, false)
	if err != nil {
		return err
	}
	// One run takes ~10 ms, about as long as a garbage collection cycle
	// or a burst from a neighbour on a shared machine: each sample times
	// simRunsPerSample runs so that such costs are averaged, not sampled.
	var events int64
	ds, err := timed(size.repeat, func() error {
		for range simRunsPerSample {
			o, err := sim.Run(cfg)
			if err != nil {
				return err
			}
			events = totalsOf(o.Trace).tuples
		}
		return nil
	})
	if err != nil {
		return err
	}
	rates := make([]float64, len(ds))
	for i, d := range ds {
		rates[i] = float64(events*simRunsPerSample) / d.Seconds()
	}
	add(row{"simulator, default experiment, no HA", human(hametrics.Median(rates)) + "tuple-events/s", "≥ 5 M/s per core", spread(rates)})
	return nil
}

// classifyWorkload is a failure-free log of n windowed outputs over 1000
// keys as sink deliveries, and an observed log with a few missing,
// duplicated and wrong outputs.
func classifyWorkload(n int) (exp, obs *ha.Deliveries) {
	const keys = 1000
	var e, o ha.Trace
	deliver := func(tr *ha.Trace, i int, v float64, t time.Duration) {
		tu := ha.Tuple{Key: uint32(i % keys), Value: v, Lineage: ha.Lineage{N: uint32(100 + i%50)},
			ID: ha.OutputID{Kind: ha.IDWindow, Key: uint32(i % keys), X: int64(i/keys) * int64(time.Second)}}
		tr.Add(ha.Event{T: t, Kind: ha.EvDeliver, Tuple: &tu})
	}
	for i := range n {
		v, t := float64(i%997)/4, time.Duration(i/keys*1000+i%keys)*time.Millisecond
		deliver(&e, i, v, t)
		switch {
		case i%20011 == 0:
			continue
		case i%30011 == 1:
			deliver(&o, i, v, t)
			t += 500 * time.Millisecond
		case i%40009 == 2:
			v += 0.001
		}
		deliver(&o, i, v, t)
	}
	return e.Deliveries(), o.Deliveries()
}

// benchClassify times the classifier on one workload in both of its
// forms: as text (classify.Classify on Outputs, what `streamha classify`
// reads) and in place (ha/metrics.Classify on deliveries, what `streamha
// run` uses).
func benchClassify(size benchSize, add func(row)) error {
	exp, obs := classifyWorkload(size.classify)
	texts := [2][]classify.Output{hametrics.Outputs(exp), hametrics.Outputs(obs)}
	n := human(float64(obs.Len()))
	if err := timeClassifier(size, add, fmt.Sprintf("classifier, %s outputs over 1000 keys", n), "1 M outputs < 2 s", obs.Len(),
		func() classify.Result { return classify.Classify(texts[0], texts[1], nil) }); err != nil {
		return err
	}
	return timeClassifier(size, add, fmt.Sprintf("classifier in place (simulator deliveries), %s outputs", n), "", obs.Len(),
		func() classify.Result { return hametrics.Classify(exp, obs, nil) })
}

// timeClassifier times classify over n observed outputs and adds its row;
// the workload must come out as a gap.
func timeClassifier(size benchSize, add func(row), what, target string, n int, classify1 func() classify.Result) error {
	var r classify.Result
	ds, err := timed(size.repeat, func() error {
		r = classify1()
		return nil
	})
	if err != nil {
		return err
	}
	if r.Type != classify.TypeGap {
		return fmt.Errorf("bench: %s: the workload gave %s, want gap", what, r.Type)
	}
	rates := make([]float64, len(ds))
	for i, d := range ds {
		rates[i] = float64(n) / d.Seconds()
	}
	add(row{what, human(hametrics.Median(rates)) + "outputs/s", target, spread(rates)})
	return nil
}

func benchCodec(size benchSize, add func(row)) error {
	t := ha.Tuple{Stream: 0, Seq: 7, Key: 3, Time: 12345678, Emit: 12345678, Value: 0.25,
		ID: ha.OutputID{Kind: ha.IDWindow, Key: 3, X: 1e9}, Lineage: ha.Lineage{N: 17, Hash: 0xdeadbeef}}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	dec := msgpack.NewDecoder(&buf)
	var got ha.Tuple
	size1 := 0
	single, err := timed(size.repeat, func() error {
		for range size.codec {
			if err := t.EncodeMsgpack(enc); err != nil {
				return err
			}
			size1 = buf.Len()
			if err := got.DecodeMsgpack(dec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	m := ha.Message{Kind: ha.KindData, From: "A", Epoch: 1}
	for i := range 64 {
		tt := t
		tt.Seq = uint64(i + 1)
		m.Tuples = append(m.Tuples, tt)
	}
	var mbuf bytes.Buffer
	menc := msgpack.NewEncoder(&mbuf)
	mdec := msgpack.NewDecoder(&mbuf)
	var mgot ha.Message
	msgSize := 0
	batches := max(1, size.codec/64)
	batched, err := timed(size.repeat, func() error {
		for range batches {
			mbuf.Reset()
			if err := m.EncodeMsgpack(menc); err != nil {
				return err
			}
			msgSize = mbuf.Len()
			mdec.Reset(&mbuf)
			if err := mgot.DecodeMsgpack(mdec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	ns := func(ds []time.Duration, n int) []float64 {
		out := make([]float64, len(ds))
		for i, d := range ds {
			out[i] = float64(d.Nanoseconds()) / float64(n)
		}
		return out
	}
	s, b := ns(single, size.codec), ns(batched, batches*64)
	add(row{"codec, one tuple encode+decode (reused Encoder/Decoder)", fmt.Sprintf("%.0f ns/tuple, %d bytes/tuple", hametrics.Median(s), size1), "≤ 120 ns", spread(s)})
	add(row{"codec, per tuple in a 64-tuple data message", fmt.Sprintf("%.0f ns/tuple, %.1f bytes/tuple", hametrics.Median(b), float64(msgSize)/64), "", spread(b)})
	return nil
}

func benchRunWall(size benchSize, add func(row)) error {
	dir, err := os.MkdirTemp("", "streamha-bench-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ds, err := timed(size.runWall, func() error {
		e := experiment.Default()
		cmp, err := compareInto(e, strategies.Names(false), dir, nil, "")
		if err != nil {
			return err
		}
		if err := reports.Table(io.Discard, cmp.Result); err != nil {
			return err
		}
		reports.Explanations(io.Discard, cmp.Result, 5)
		return nil
	})
	if err != nil {
		return err
	}
	s := secs(ds)
	add(row{"streamha run (all strategies, defaults, report written)", fmt.Sprintf("%.2f s", hametrics.Median(s)), "< 1 s", spread(s)})
	return nil
}

func benchStrategies(size benchSize, add func(row)) error {
	e := experiment.Default()
	names := strategies.Names(false)
	cmp, err := sim.Compare(e, names)
	if err != nil {
		return err
	}
	none, err := strategies.Build("none", nil)
	if err != nil {
		return err
	}
	ffNone, err := sim.ConfigFor(e, none, true)
	if err != nil {
		return err
	}
	for i, name := range names {
		st, err := strategies.Build(name, e.ParamsFor(name))
		if err != nil {
			return err
		}
		ff, err := sim.ConfigFor(e, st, true)
		if err != nil {
			return err
		}
		var simRatio, rtRatio []float64
		for range size.repeat {
			base, err := timed(1, func() error { _, err := sim.Run(ffNone); return err })
			if err != nil {
				return err
			}
			with, err := timed(1, func() error { _, err := sim.Run(ff); return err })
			if err != nil {
				return err
			}
			simRatio = append(simRatio, with[0].Seconds()/base[0].Seconds())
			b, _, err := runInproc(size.strategyN, "none")
			if err != nil {
				return err
			}
			w, _, err := runInproc(size.strategyN, name)
			if err != nil {
				return err
			}
			rtRatio = append(rtRatio, w.Seconds()/b.Seconds())
		}
		ov := cmp.Result.Runs[i].Overhead
		ratio := func(p *float64) string {
			if p == nil {
				return "-"
			}
			return fmt.Sprintf("%.2f", *p)
		}
		add(row{"overhead vs no HA: " + name,
			fmt.Sprintf("simulated: messages %s×, bytes %s×, CPU %s×; wall: simulator %.2f×, in-process runtime %.2f×",
				ratio(ov.MessagesRatio), ratio(ov.BytesRatio), ratio(ov.CPURatio), hametrics.Median(simRatio), hametrics.Median(rtRatio)),
			"", "sim " + spread(simRatio) + ", runtime " + spread(rtRatio)})
	}
	return nil
}
