package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/streamha/streamha/internal/cliflag"
)

// SecretEnv is the environment variable holding the cluster secret when
// --secret-file is not given.
const SecretEnv = "STREAMHA_SECRET"

// InsecureNote says what a cluster without a secret exposes.
const InsecureNote = "without a cluster secret gossip is not encrypted and nothing is authenticated: " +
	"anyone who can reach a node's ports can join the membership and declare hosts dead, inject or alter " +
	"tuples, routes and checkpoints (one forged route can fence a healthy primary), and start, stop or " +
	"inject faults into the run through the control endpoint"

// ErrNoSecret is returned (wrapped) when a cluster would start without a
// secret and --insecure was not given.
var ErrNoSecret = errors.New("no cluster secret")

// CheckSecret refuses an empty secret unless insecure is set.
func CheckSecret(secret []byte, insecure bool) error {
	if len(secret) > 0 || insecure {
		return nil
	}
	return fmt.Errorf("%w: set $%s or --secret-file (e.g. %s=$(head -c 24 /dev/urandom | base64)), "+
		"or pass --insecure to run without one on a machine and network you trust; %s",
		ErrNoSecret, SecretEnv, SecretEnv, InsecureNote)
}

// LoadSecret reads the cluster secret from file (trailing newline
// trimmed) or, when file is "", from $STREAMHA_SECRET. No secret is not an
// error here: CheckSecret decides whether the cluster may run without.
func LoadSecret(file string) ([]byte, error) {
	var s string
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--secret-file: %w", err)
		}
		s = strings.TrimRight(string(b), "\r\n")
		if s == "" {
			return nil, fmt.Errorf("--secret-file %s: empty secret", file)
		}
	} else {
		s = os.Getenv(SecretEnv)
	}
	if s != "" && len(s) < 8 {
		return nil, fmt.Errorf("cluster secret: too short (%d bytes, want at least 8)", len(s))
	}
	return []byte(s), nil
}

// BindNodeFlags defines the `streamha node` flags on fs. After fs is
// parsed, the returned function builds the NodeOptions (reading the secret).
func BindNodeFlags(fs *pflag.FlagSet) func() (NodeOptions, error) {
	var (
		o          NodeOptions
		join       []string
		peers      []string
		secretFile string
		seed       cliflag.Seed
	)
	o.Out = DefaultOut
	cliflag.AddConfig(fs, &o.Config, "the built-in experiment")
	cliflag.AddStrategy(fs, &o.Strategy, "strategy every node of the run uses (required)")
	cliflag.AddSeed(fs, &seed, "seed of the run (default: the experiment's)")
	fs.StringVar(&o.Host, "host", "", "this node's host name: src, src2, A, B, B.1, …, sink (required)")
	fs.StringVar(&o.HostOrdinal, "host-ordinal", "", "pick the host from a name ending in -N, e.g. a StatefulSet pod name (N-th host of the topology: sources, fragment hosts in takeover order, sink)")
	fs.StringVar(&o.Bind, "bind", "127.0.0.1:0", "gossip (memberlist) bind address, ip:port (port 0 picks one)")
	fs.StringVar(&o.Advertise, "advertise", "", "gossip address peers reach this node at (default: the bind address)")
	fs.StringSliceVar(&join, "join", nil, "gossip address(es) of running nodes to join, host:port (repeat or comma-separate)")
	fs.StringVar(&o.DataAddr, "data-addr", "127.0.0.1:0", "TCP data-plane listen address")
	fs.StringVar(&o.DataAdvertise, "data-advertise", "", "data-plane address published to peers (default: derived from --data-addr and --advertise)")
	fs.StringSliceVar(&peers, "peers", nil, "static data addresses host=ip:port (default: learned from the membership)")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", "127.0.0.1:0", "address of /metrics and the control endpoint (\"\" = off)")
	cliflag.AddOut(fs, &o.Out, cliflag.OutDir, "", "directory for the trace, ready file and logs")
	fs.BoolVar(&o.AllowLarge, "allow-large", false, "check --config against the large ranges ('streamha docs experiment', Ranges)")
	fs.StringVar(&secretFile, "secret-file", "", "file holding the cluster secret (default: $"+SecretEnv+"; required unless --insecure)")
	fs.BoolVar(&o.Insecure, "insecure", false, "run without a cluster secret: gossip in clear, nothing authenticated (anyone reaching the ports can join, forge messages and control the run)")
	fs.Int64Var(&o.Start, "start", 0, "common start instant, Unix nanoseconds (0 = now)")
	fs.BoolVar(&o.AwaitStart, "await-start", false, "once ready, wait for POST /start {\"at\": unix-ns} on the control endpoint (what 'streamha cluster' does)")
	fs.StringVar(&o.Profile, "profile", ProfileTuned, "failure-detector profile: tuned (~0.3–0.5 s), steady (~1 s, tolerates CPU starvation), local or lan (seconds)")
	fs.BoolVar(&o.Hold, "hold", false, "stay alive after the run until SIGTERM (for orchestrators that restart exited containers)")
	fs.DurationVar(&o.Linger, "linger", DefaultLinger, "how long to stay a member after the run ends")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file (read it with 'go tool pprof')")
	return func() (NodeOptions, error) {
		if err := checkOutputFile(o.CPUProfile); err != nil {
			return o, fmt.Errorf("--cpuprofile: %w", err)
		}
		o.Join = join
		o.Seed = seed.Value()
		if len(peers) > 0 {
			o.Peers = map[string]string{}
			for _, p := range peers {
				h, a, ok := strings.Cut(p, "=")
				if !ok || h == "" || a == "" {
					return o, fmt.Errorf("--peers: want host=ip:port, got %q", p)
				}
				o.Peers[h] = a
			}
		}
		s, err := LoadSecret(secretFile)
		if err != nil {
			return o, err
		}
		o.Secret = s
		return o, nil
	}
}

// checkOutputFile checks that a file can be created at path ("" = none):
// path is not a directory and its parent directory exists.
func checkOutputFile(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("directory of %s: %w", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	return nil
}

// NodeMain parses args as `streamha node` flags and runs the node until
// its run ends or SIGTERM/SIGINT; it returns the exit status. Tests re-exec
// their own binary into it.
func NodeMain(args []string) int {
	fs := pflag.NewFlagSet("node", pflag.ContinueOnError)
	opts := BindNodeFlags(fs)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, "streamha node:", err)
		return 2
	}
	o, err := opts()
	if err == nil {
		err = CheckSecret(o.Secret, o.Insecure)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "streamha node:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := RunNode(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "streamha node:", err)
		return 1
	}
	return 0
}
