// Package hatest steps the nodes of a topology by script, the way
// etcd-io/raft's rafttest does: a test chooses every interleaving — which
// message arrives, which is lost or overtaken, when a host crashes, when
// the failure detector declares it dead or alive, when a timer fires — and
// the transcript of what the nodes did is the expected output.
//
// A script (testdata/**/*.txt) is a list of commands, each followed by a
// line "----" and the output it must print, ended by a blank line:
//
//	# A.1 takes over from a crashed A; the source must replay to it.
//	setup strategy=upstream-backup
//	name: chain
//	duration: 1s
//	source: {rate: 1000, keys: 2}
//	nodes: [{name: A, ops: [{map: {scale: 1}}]}]
//	spares: 1
//	----
//	hosts: src A A.1 sink
//
//	crash A
//	----
//	A: crash
//
// Lines between a command and "----" are its input (setup's experiment).
// InteractionEnv.Handle lists the commands. Every message a node sends
// is printed with a number ("#12 A.1->src resume e1 s0 after=4") and
// stays in flight until deliver, drop, delay or stabilize takes it; every
// trace event is printed as "host: kind ...". The sink command prints
// what the sink delivered (with from= and to=, each output in that seq
// range: id, event time, value). Nothing here reads a clock:
// time moves only with tick and run, so a transcript is the same on every
// machine.
//
// To write a script, put the commands with an empty output after each
// "----" and run the walking test with -rewrite, which fills in what the
// nodes did; read the transcript and commit it only if it shows what
// should happen:
//
//	go test ./ha/hatest -run TestInteraction -rewrite
//
// Bugs fixed in the protocol can be put back per script with setup's
// plant=(name,...) (ha.Planted), so a script can show the transcript
// changing when the fix is undone.
package hatest
