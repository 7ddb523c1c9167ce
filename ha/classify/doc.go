// Package classify is streamha's recovery classifier. It compares the output
// log of a failure-free run (O_e, "expected") with the output log delivered in
// a run with failures (O_f + O', "observed") and reports which kind of
// recovery the run achieved, in the sense of Hwang et al., "High-Availability
// Algorithms for Distributed Stream Processing" (ICDE 2005): precise,
// rollback (repeating, convergent or divergent) or gap.
//
// It is used in-process by the simulator's metrics, which hand it the sink's
// deliveries in place through a [Source] ([ClassifySource]), and by
// `streamha classify` on JSON Lines logs written by any system (see
// [ReadJSONL]), as slices of [Output] ([Classify]); both take the same path
// and give the same verdict for the same outputs.
//
// # Outputs and identity
//
// Every output has a logical id, a canonical value text and optionally a
// lineage count n (how many source tuples it reflects) and a delivery time t
// in milliseconds. Two outputs are identical when they have the same id, the
// same value text and — only when both carry n — the same n. Order matters
// only within a key (the Key field); outputs without a key form one group, so
// reordering across keys is never an anomaly.
//
// # Labels of observed deliveries
//
// Each observed delivery gets exactly one label, the first that applies:
//   - "ok": it is identical to an expected output of that id not yet matched
//     by an earlier delivery (an id expected k times may be delivered ok k
//     times);
//   - "duplicate": it is identical to an earlier delivery of that id;
//   - "wrong": its id is expected but its value or n differs;
//   - "spurious": its id is not expected at all.
//
// The counts of [Result] are computed whatever the type: Missing is the
// number of expected ids never delivered, Duplicates, Wrong and Spurious are
// the numbers of deliveries labelled so (a repeat of a wrong or spurious
// delivery counts as a duplicate).
//
// # Type and subtype
//
// The rules are applied in this order:
//   - precise: for every key, the observed sequence equals the expected
//     sequence exactly (same ids, values and n, same order, nothing extra).
//   - gap: some expected id is never delivered, or — when n is known on both
//     sides — the last delivered copy of an expected id reflects fewer source
//     tuples than expected. LostInputs sums the shortfall over expected ids:
//     expected n − n of the last delivered copy when positive, and the whole
//     expected n for an id never delivered (when n is known). If an id occurs
//     several times in the expected log, its last copy's n counts (so a log
//     always classifies against itself as precise).
//   - rollback otherwise (no input lost), with the first subtype that applies:
//
// Rollback subtypes:
//   - repeating: removing the duplicate deliveries gives exactly the expected
//     sequence for every key;
//   - convergent: for every key, the de-duplicated observed sequence ends in
//     a non-empty suffix equal to the end of the expected sequence (a key
//     with nothing expected but something observed cannot converge).
//     ConvergedAt is where that (longest) suffix begins, the latest over
//     keys: the delivery time in ms when every such first delivery carries a
//     time, otherwise its 0-based index in the observed slice;
//   - divergent: otherwise.
//
// # Explanations
//
// Explanations holds plain-English sentences, one per anomaly: each missing id,
// each group of identical copies of one delivery, each wrong and each
// spurious delivery, and — for a key whose only difference is order — the
// first position where its order departs from the failure-free run. Times
// are shown in seconds with two decimals and related to the [Mark]s: inside
// an interval mark "during <label>", else after the nearest preceding point
// mark "after <label> at X s", else after the latest interval mark that
// ended "after <label> at X–Y s", else before the first mark "before <label>
// at X s". Unknown times are omitted. Sentences are in time order when every
// output carries a time, otherwise in delivery order followed by the missing
// ids in expected order. Anomalies of one kind that fall in the same
// window (ids such as "k00|w=10s") and in the same context of the marks are
// told in one sentence that names up to six of them, e.g. "16 outputs of
// window 10 s wrong, delivered at 11.00 s after the takeover by B.1 at
// 10.62 s (1122 inputs lost): k00 49.16 instead of 119.1 (50 source tuples,
// not 117), …, and 10 more". Values are shown to 4 significant digits, or
// as many more as it takes to tell the observed from the expected value.
// At most [MaxExplanations] sentences are given,
// followed by one summary sentence of the rest: "… and N more anomalies
// (M missing, D duplicates, W wrong, S spurious)", where D counts groups of
// copies and ", R out of order" is added when some keys are only reordered. A precise run has no
// explanations (an empty, non-nil slice).
//
// Classify is deterministic: the same input always gives an identical Result.
// It runs in time linear in the size of the logs (a hash table of ids, no
// formatting per delivery), about a second or less for a million outputs.
package classify
