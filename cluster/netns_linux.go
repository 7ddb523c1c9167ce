//go:build linux

package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// NetnsSupported reports whether this process can run `streamha cluster
// --netns`: the ip command is installed and the process has CAP_NET_ADMIN
// and CAP_SYS_ADMIN (root has both).
func NetnsSupported() error {
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("%w: %v", ErrNetnsUnsupported, err)
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNetnsUnsupported, err)
	}
	const need = 1<<12 | 1<<21 // CAP_NET_ADMIN, CAP_SYS_ADMIN
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err == nil && caps&need == need {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: this process lacks them (uid %d)", ErrNetnsUnsupported, os.Geteuid())
}

// ipTimeout bounds one ip or tc command (a batch included).
const ipTimeout = 20 * time.Second

// runIP runs the ip (or tc, when tool is "tc") command with args, feeding
// it stdin when not empty, and returns its output or an error quoting it.
func runIP(tool, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", tool, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// netnsNet is one run's network: its namespaces, links and bridge, and
// the partition rules in force.
type netnsNet struct {
	layout netnsLayout
	// netem tells whether the kernel has the netem qdisc (probed once).
	netem     bool
	statePath string
	log       *log.Logger

	mu    sync.Mutex
	rules map[int][]dropRule // fault index → the drops it installed
	// socks are the namespaces' rule sockets, by host (set up before the
	// run starts, read-only after).
	socks map[string]*ruleSocket
}

// openNetns creates the network of one run: a bridge with the
// coordinator's address on a free /24, and for every host a namespace
// whose eth0 (a veth to the bridge) has the host's address, no default
// route, and, when bandwidth (bits/s) is above 0, a tbf qdisc limiting
// its egress to it. It first removes what runs whose coordinator died
// left behind. On error nothing of the run is left.
func openNetns(hosts []string, bandwidth float64, lg *log.Logger) (_ *netnsNet, err error) {
	unlock, err := lockNetnsState()
	if err != nil {
		return nil, err
	}
	defer func() {
		if unlock != nil {
			unlock()
		}
	}()
	if removed, err := sweepStaleNetnsLocked(); err != nil {
		lg.Printf("netns: removing what an earlier run left: %v", err)
	} else if len(removed) > 0 {
		lg.Printf("netns: removed what an earlier run left: %s", strings.Join(removed, ", "))
	}
	inUse, err := prefixesInUse()
	if err != nil {
		return nil, err
	}
	subnet, err := pickSubnet(inUse)
	if err != nil {
		return nil, err
	}
	n := &netnsNet{
		layout: netnsLayout{ID: newRunID(), Subnet: subnet, Hosts: slices.Clone(hosts)},
		log:    lg, rules: map[int][]dropRule{}, socks: map[string]*ruleSocket{},
	}
	n.statePath = filepath.Join(netnsStateDir, n.layout.ID+".json")
	st := n.layout.state(os.Getpid(), procStart(os.Getpid()))
	b, _ := json.MarshalIndent(st, "", "  ")
	if err := os.WriteFile(n.statePath, b, 0o644); err != nil {
		return nil, fmt.Errorf("netns: state file: %w", err)
	}
	defer func() {
		if err != nil {
			if cerr := n.close(); cerr != nil {
				lg.Printf("netns: %v", cerr)
			}
		}
	}()
	// The bridge and its address first: from then on the subnet is a
	// route of this machine, and a concurrent run picks another one.
	l := n.layout
	var root strings.Builder
	fmt.Fprintf(&root, "link add %s type bridge\nlink set %s up\naddr add %s/24 dev %s\n", l.Bridge(), l.Bridge(), l.CoordinatorAddr(), l.Bridge())
	for i, h := range l.Hosts {
		fmt.Fprintf(&root, "netns add %s\nlink add %s type veth peer name eth0 netns %s\nlink set %s master %s up\n",
			l.Namespace(h), l.Veth(i), l.Namespace(h), l.Veth(i), l.Bridge())
	}
	if _, err := runIP("ip", root.String(), "-batch", "-"); err != nil {
		return nil, fmt.Errorf("netns: create: %w", err)
	}
	unlock()
	unlock = nil
	errs := make([]error, len(l.Hosts))
	var wg sync.WaitGroup
	for i, h := range l.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = n.setupHost(i, h, bandwidth)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, h := range l.Hosts {
		s, err := openRuleSocket(l.Namespace(h))
		if err != nil {
			return nil, err
		}
		n.socks[h] = s
	}
	n.netem = n.probeNetem()
	lg.Printf("netns: run %s: %d hosts on %s (bridge %s, coordinator %s)", l.ID, len(l.Hosts), l.Subnet, l.Bridge(), l.CoordinatorAddr())
	return n, nil
}

// setupHost configures host i's namespace: its address, lo, the local
// table looked up after the partition rules, and the bandwidth limit.
func (n *netnsNet) setupHost(i int, host string, bandwidth float64) error {
	l := n.layout
	ns := l.Namespace(host)
	cmds := fmt.Sprintf("addr add %s/24 dev eth0\nlink set eth0 up\nlink set lo up\nrule add pref %d lookup local\nrule del pref 0 lookup local\n",
		l.Addr(i), netnsLocalPref)
	if _, err := runIP("ip", cmds, "-n", ns, "-batch", "-"); err != nil {
		return fmt.Errorf("netns: host %s: %w", host, err)
	}
	if bandwidth > 0 {
		rate := uint64(bandwidth)
		// A burst of 4 ms at the rate, and never below a 64 KiB segment
		// (veth hands the qdisc segments up to that size).
		burst := max(rate/8/250, 64<<10)
		if _, err := runIP("tc", "", "-n", ns, "qdisc", "add", "dev", "eth0", "root", "tbf",
			"rate", strconv.FormatUint(rate, 10)+"bit", "burst", strconv.FormatUint(burst, 10), "latency", "50ms"); err != nil {
			return fmt.Errorf("netns: host %s: bandwidth: %w", host, err)
		}
	}
	return nil
}

// probeNetem tells whether a netem qdisc can be created (on the first
// host's lo, removed at once).
func (n *netnsNet) probeNetem() bool {
	if len(n.layout.Hosts) == 0 {
		return false
	}
	ns := n.layout.Namespace(n.layout.Hosts[0])
	if _, err := runIP("tc", "", "-n", ns, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "0ms"); err != nil {
		return false
	}
	_, _ = runIP("tc", "", "-n", ns, "qdisc", "del", "dev", "lo", "root")
	return true
}

// command returns the command line that runs exe args in host's namespace.
func (n *netnsNet) command(host, exe string, args []string) (string, []string) {
	return "ip", append([]string{"netns", "exec", n.layout.Namespace(host), exe}, args...)
}

// cut installs fault id's partition: every host of a group drops what
// arrives from the hosts of the other groups.
func (n *netnsNet) cut(id int, groups [][]string) error {
	drops := partitionDrops(groups, n.layout.Hosts)
	n.mu.Lock()
	n.rules[id] = drops
	n.mu.Unlock()
	return n.applyDrops(id, drops, "add")
}

// heal removes fault id's partition rules.
func (n *netnsNet) heal(id int) error {
	n.mu.Lock()
	drops := n.rules[id]
	delete(n.rules, id)
	n.mu.Unlock()
	return n.applyDrops(id, drops, "del")
}

// applyDrops adds or deletes drop rules through the namespaces' rule
// sockets, every namespace at once.
func (n *netnsNet) applyDrops(id int, drops []dropRule, op string) error {
	byHost := map[string][]dropRule{}
	for _, d := range drops {
		byHost[d.Host] = append(byHost[d.Host], d)
	}
	pref := uint32(netnsRulePref + id%20000)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for h, ds := range byHost {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, d := range ds {
				from, _ := n.layout.HostAddr(d.From)
				if err := n.socks[h].blackhole(op == "add", pref, from); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("partition rule %s of %s: from %s (%s): %w", op, h, d.From, from, err))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// close kills whatever still runs in the run's namespaces and removes
// them, the links, the bridge and the state file.
func (n *netnsNet) close() error {
	for _, s := range n.socks {
		_ = s.close()
	}
	var st netnsState
	if b, err := os.ReadFile(n.statePath); err == nil {
		_ = json.Unmarshal(b, &st)
	} else {
		st = n.layout.state(0, 0)
	}
	return removeNetnsState(st, n.statePath)
}

// removeNetnsState removes everything a state file names, then the file.
func removeNetnsState(st netnsState, path string) error {
	names := slices.Concat(st.Namespaces, st.Links)
	if st.Bridge != "" {
		names = append(names, st.Bridge)
	}
	killNamespaceProcs(st.Namespaces)
	var b strings.Builder
	for _, l := range st.Links {
		fmt.Fprintf(&b, "link del %s\n", l)
	}
	if st.Bridge != "" {
		fmt.Fprintf(&b, "link del %s\n", st.Bridge)
	}
	for _, ns := range st.Namespaces {
		fmt.Fprintf(&b, "netns del %s\n", ns)
	}
	// -force goes on past the names already gone; what is left is checked.
	_, _ = runIP("ip", b.String(), "-force", "-batch", "-")
	left, err := netnsNames()
	if err != nil {
		return err
	}
	left = slices.DeleteFunc(left, func(s string) bool { return !slices.Contains(names, s) })
	if len(left) > 0 {
		return fmt.Errorf("netns: run %s: could not remove %s", st.ID, strings.Join(left, ", "))
	}
	if path != "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("netns: state file: %w", err)
		}
	}
	return nil
}

// killNamespaceProcs SIGKILLs every process in the namespaces and waits
// (up to 5 s) until none is left.
func killNamespaceProcs(namespaces []string) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		found := false
		for _, ns := range namespaces {
			out, err := runIP("ip", "", "netns", "pids", ns)
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(out) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != os.Getpid() {
					found = true
					_ = syscall.Kill(pid, syscall.SIGCONT)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if !found || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// netnsNames lists the namespaces and links of this machine that carry a
// run id of this package.
func netnsNames() ([]string, error) {
	var out []string
	nss, err := runIP("ip", "", "netns", "list")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(nss, "\n") {
		if f := strings.Fields(line); len(f) > 0 && runIDOf(f[0]) != "" {
			out = append(out, f[0])
		}
	}
	links, err := runIP("ip", "", "-o", "link", "show")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(links, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if runIDOf(name) != "" {
			out = append(out, name)
		}
	}
	return out, nil
}

// SweepStaleNetns removes the namespaces, links, bridges and processes of
// --netns runs whose coordinator is gone (killed with SIGKILL, say):
// those its state file names, and any other name carrying the prefix of
// a run that has no live state file. It returns what it removed. Every
// `streamha cluster --netns` does this before it creates its own network.
func SweepStaleNetns() ([]string, error) {
	unlock, err := lockNetnsState()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return sweepStaleNetnsLocked()
}

func sweepStaleNetnsLocked() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(netnsStateDir, "*.json"))
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	var removed []string
	var errs []error
	for _, f := range files {
		var st netnsState
		b, err := os.ReadFile(f)
		if err != nil || json.Unmarshal(b, &st) != nil || st.ID == "" {
			errs = append(errs, fmt.Errorf("netns: unreadable state file %s (remove it by hand)", f))
			continue
		}
		if st.PID > 0 && procStart(st.PID) == st.PIDStart && st.PIDStart != 0 {
			live[st.ID] = true
			continue
		}
		if err := removeNetnsState(st, f); err != nil {
			errs = append(errs, err)
		}
		removed = append(removed, "run "+st.ID)
	}
	names, err := netnsNames()
	if err != nil {
		return removed, errors.Join(append(errs, err)...)
	}
	// Names of runs without a live state file: the coordinator died before
	// it wrote one, or its file was removed by hand.
	stray := netnsState{ID: "without a state file"}
	for _, name := range names {
		if live[runIDOf(name)] {
			continue
		}
		if strings.Contains(name, "-") {
			stray.Namespaces = append(stray.Namespaces, name)
		} else {
			stray.Links = append(stray.Links, name) // veths and bridges alike
		}
		removed = append(removed, name)
	}
	if len(stray.Namespaces)+len(stray.Links) > 0 {
		if err := removeNetnsState(stray, ""); err != nil {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

// lockNetnsState checks that namespaces can be made here and takes the
// machine-wide lock of the state directory.
func lockNetnsState() (func(), error) {
	if err := NetnsSupported(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(netnsStateDir, 0o755); err != nil {
		return nil, fmt.Errorf("netns: state directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(netnsStateDir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("netns: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("netns: lock: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// prefixesInUse are the IPv4 routes and addresses of this machine and the
// subnets of live runs.
func prefixesInUse() ([]netip.Prefix, error) {
	routes, err := runIP("ip", "", "-4", "-o", "route", "show", "table", "all")
	if err != nil {
		return nil, err
	}
	addrs, err := runIP("ip", "", "-4", "-o", "addr", "show")
	if err != nil {
		return nil, err
	}
	out := parseRoutePrefixes(routes, addrs)
	files, _ := filepath.Glob(filepath.Join(netnsStateDir, "*.json"))
	for _, f := range files {
		var st netnsState
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &st) == nil {
			if p, err := netip.ParsePrefix(st.Subnet); err == nil {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// procStart is the start time of process pid in clock ticks since boot
// (0 if it does not exist).
func procStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	// After the command come the fields from 3 (state) on; start time is 22.
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
}
