package main

import (
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/cluster"
	"github.com/streamha/streamha/strategies"
)

func newNodeCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "node",
		Short: "Run one host of a real cluster (started by 'streamha cluster', or by hand across machines)",
		Long: "node runs one host of the experiment (a source, a fragment's primary, replica or spare, or the sink)\n" +
			"as a real process: memberlist for membership and failure detection, TCP for the data plane,\n" +
			"a Prometheus /metrics endpoint, Go profiling under /debug/pprof/ and a small control endpoint\n" +
			"(POST /fault, POST /stop); --cpuprofile FILE writes a CPU profile of the run.\n" +
			"It writes <out>/<host>.trace.jsonl (as <host>.trace.jsonl.partial until it is whole; a node whose\n" +
			"trace cannot be written exits non-zero) and stops at the experiment's end (duration + drain).\n" +
			"With a cluster secret (--secret-file or $STREAMHA_SECRET) gossip is encrypted and every\n" +
			"data frame and control request is authenticated with HMAC-SHA256; peers without it are rejected.\n" +
			"Without a secret the node refuses to start unless --insecure is given: then anyone who can reach\n" +
			"its ports can join, forge tuples and routes, and start, stop or fault the run.",
		Example: "  streamha node --strategy amnesia --host sink --bind 10.0.0.5:7946 --data-addr 10.0.0.5:7947 \\\n" +
			"      --secret-file /etc/streamha/secret --start 1767225600000000000 --out /data\n" +
			"  streamha node --strategy amnesia --host B --bind 10.0.0.6:7946 --data-addr 10.0.0.6:7947 \\\n" +
			"      --join 10.0.0.5:7946 --secret-file /etc/streamha/secret --start 1767225600000000000 --out /data",
	}
	opts := cluster.BindNodeFlags(c.Flags())
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		o, err := opts()
		if err != nil {
			return usageErr{err}
		}
		if (o.Host == "" && o.HostOrdinal == "") || o.Strategy == "" {
			return usage("--host (or --host-ordinal) and --strategy are required")
		}
		// --config as every command reads it: a file or a built-in example.
		if o.Experiment, err = loadExperiment(o.Config, o.Seed, o.AllowLarge); err != nil {
			return err
		}
		if err := checkNodeHost(o); err != nil {
			return err
		}
		if err := cluster.CheckSecret(o.Secret, o.Insecure); err != nil {
			return usageErr{err}
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		return cluster.RunNode(ctx, o)
	}
	return c
}

// checkNodeHost refuses, as a usage error, a --host that is not in the
// experiment's topology under the strategy (the node would fail the same
// way, but only after its own start-up and with a plain error).
func checkNodeHost(o cluster.NodeOptions) error {
	if o.Host == "" {
		return nil
	}
	e := o.Experiment
	st, err := strategies.Build(o.Strategy, e.ParamsFor(o.Strategy))
	if err != nil {
		return usage("--strategy: %w", err)
	}
	topo := e.Topology(st)
	if _, ok := topo.FragOf(o.Host); !ok {
		return usage("--host: %q is not a host of the experiment under %s (hosts: %s)",
			o.Host, o.Strategy, strings.Join(topo.Hosts(), ", "))
	}
	return nil
}
