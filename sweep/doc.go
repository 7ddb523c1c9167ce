// Package sweep runs parameter sweeps: every point (a setting of the swept
// parameters and a seed) is a simulated comparison of the sweep's
// strategies (sim.Compare), run on a pool of workers and appended to
// points.jsonl as it finishes, so an interrupted sweep resumes where it
// stopped; a sweep can be split into shards and the shards merged. The
// sweep's definition is experiment.Sweep; the files and the report are package
// reports', which only reads and draws them.
package sweep
