// Package cluster is streamha's real-cluster runtime: the same experiment
// as the simulator, on real OS processes. RunNode is one process hosting
// one host (node.go: its options, their defaults and validation, and the
// plan read from the experiment; node_net.go: its I/O; node_loop.go: the
// loop that feeds the node its inputs; node_env.go: its ha.Env): it drives
// the very same ha.Node and strategy code through a real ha.Env — TCP between hosts with length-prefixed msgpack frames
// (transport.go, frame.go), timers on the real clock (timers.go), failure
// detection by hashicorp/memberlist (detector.go), fault rules applied to
// its own links (faults.go) and an HTTP control endpoint with Prometheus
// metrics (metrics.go, control_auth.go). Launch starts one process per
// host on this machine, injects the fault schedule with real signals
// (SIGKILL, SIGSTOP/SIGCONT) and link rules, merges the nodes' traces and
// computes the result as the simulator does; PlanChaos draws random faults
// within the fault model and the chaos check judges the runs against the
// strategies' promises. Collect computes the result of nodes started by
// hand on several machines.
//
// The expected output is a failure-free run of the simulator, which this
// package never runs itself: its caller supplies it (LaunchConfig.Reference;
// the CLI passes sim.ReferenceTrace). See docs/cluster.md.
package cluster
