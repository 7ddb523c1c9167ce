package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Network namespaces (`streamha cluster --netns`): every host of a run in
// its own Linux network namespace with its own address on a private /24,
// all joined by a bridge the run creates; the coordinator talks to the
// nodes' control endpoints through the bridge's own address. Partitions
// are cut in the network, not in the program: each namespace drops what
// arrives from a host on the other side (an `ip rule ... blackhole` on the
// source address, looked up before the local table), silently, as a
// switch that stopped forwarding would. Names carry the run's id and a
// state file per run lets the next start remove what a killed coordinator
// left (sweepStaleNetns).

// Netns naming and addresses.
const (
	// netnsPrefix starts every namespace, link and bridge name a run creates.
	netnsPrefix = "stha"
	// netnsStateDir holds one state file per live run (and the lock).
	netnsStateDir = "/run/streamha-netns"
	// netnsGossipPort, netnsDataPort and netnsControlPort are the fixed
	// ports every host listens on at its own address, as on real machines.
	netnsGossipPort  = 7946
	netnsDataPort    = 7947
	netnsControlPort = 9100
	// netnsLocalPref is where each namespace looks its local table up once
	// its partition rules (netnsRulePref + fault index) may come first.
	netnsLocalPref = 30000
	netnsRulePref  = 1000
	// netnsCoordinatorOctet is the bridge's (the coordinator's) address in
	// the subnet; hosts get .1, .2, … in topology order.
	netnsCoordinatorOctet = 254
)

// ErrNetnsUnsupported is returned when this machine or user cannot create
// network namespaces.
var ErrNetnsUnsupported = errors.New("--netns needs Linux, the ip command (iproute2) and root (CAP_NET_ADMIN and CAP_SYS_ADMIN)")

// netnsLayout names and addresses one run's network.
type netnsLayout struct {
	ID     string
	Subnet netip.Prefix
	// Hosts in topology order; host i has address Subnet .i+1.
	Hosts []string
}

// newRunID is a short random id that every name of a run carries.
func newRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Bridge is the name of the run's bridge.
func (n netnsLayout) Bridge() string { return netnsPrefix + n.ID }

// Namespace is host's namespace name.
func (n netnsLayout) Namespace(host string) string { return netnsPrefix + n.ID + "-" + host }

// Veth is the bridge-side end of host i's link (inside its namespace the
// other end is eth0). Interface names have at most 15 bytes.
func (n netnsLayout) Veth(i int) string { return netnsPrefix + n.ID + "h" + strconv.Itoa(i) }

// Addr is host i's address.
func (n netnsLayout) Addr(i int) netip.Addr { return octet(n.Subnet, i+1) }

// CoordinatorAddr is the bridge's address, from which the coordinator
// reaches the nodes' control endpoints.
func (n netnsLayout) CoordinatorAddr() netip.Addr { return octet(n.Subnet, netnsCoordinatorOctet) }

// HostAddr is host's address, false when it is not a host of the run.
func (n netnsLayout) HostAddr(host string) (netip.Addr, bool) {
	i := slices.Index(n.Hosts, host)
	if i < 0 {
		return netip.Addr{}, false
	}
	return n.Addr(i), true
}

func octet(p netip.Prefix, last int) netip.Addr {
	a := p.Addr().As4()
	a[3] = byte(last)
	return netip.AddrFrom4(a)
}

// nodeFlags are the address flags of host's node: those a deployment on
// real machines passes (deploy/k8s): bind every interface, advertise the
// host's own address, data on every interface (its published address
// derived from --advertise), the control endpoint on the host's address.
func (n netnsLayout) nodeFlags(host string) []string {
	a, _ := n.HostAddr(host)
	ip := a.String()
	return []string{
		"--bind", "0.0.0.0:" + strconv.Itoa(netnsGossipPort),
		"--advertise", ip + ":" + strconv.Itoa(netnsGossipPort),
		"--data-addr", "0.0.0.0:" + strconv.Itoa(netnsDataPort),
		"--metrics-addr", ip + ":" + strconv.Itoa(netnsControlPort),
	}
}

// pickSubnet returns the first /24 of 10.213.0.0/16 that overlaps none
// of the prefixes in use (the machine's routes and addresses, and other
// runs' subnets). A default route (/0) overlaps everything and is not
// counted.
func pickSubnet(inUse []netip.Prefix) (netip.Prefix, error) {
	for x := range 256 {
		cand := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 213, byte(x), 0}), 24)
		if !slices.ContainsFunc(inUse, func(p netip.Prefix) bool { return p.Bits() > 0 && p.Overlaps(cand) }) {
			return cand, nil
		}
	}
	return netip.Prefix{}, errors.New("netns: every /24 of 10.213.0.0/16 overlaps a route or address of this machine")
}

// parseRoutePrefixes reads the destinations of `ip -4 -o route show table
// all` and the addresses of `ip -4 -o addr show` (lines it cannot read are
// skipped: they name no IPv4 prefix).
func parseRoutePrefixes(routes, addrs string) []netip.Prefix {
	var out []netip.Prefix
	add := func(s string) {
		if !strings.Contains(s, "/") {
			s += "/32"
		}
		if p, err := netip.ParsePrefix(s); err == nil && p.Addr().Is4() {
			out = append(out, p.Masked())
		}
	}
	for _, line := range strings.Split(routes, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "default" {
			continue
		}
		switch f[0] {
		case "local", "broadcast", "unicast", "blackhole", "unreachable", "prohibit", "throw", "multicast", "anycast", "nat":
			if len(f) > 1 {
				add(f[1])
			}
		default:
			add(f[0])
		}
	}
	for _, line := range strings.Split(addrs, "\n") {
		f := strings.Fields(line)
		if i := slices.Index(f, "inet"); i >= 0 && i+1 < len(f) {
			add(f[i+1])
		}
	}
	return out
}

// dropRule is one silent drop a partition installs: in Namespace's host,
// packets from From are dropped.
type dropRule struct {
	Host string // the receiving host
	From string // the sending host whose packets are dropped
}

// partitionDrops turns a partition's groups into drop rules: every host
// drops what arrives from the hosts of the other groups, so no packet
// crosses in either direction. Hosts in no group are unaffected. Rules
// name only hosts of the run, in a stable order.
func partitionDrops(groups [][]string, hosts []string) []dropRule {
	var out []dropRule
	for gi, g := range groups {
		for _, h := range g {
			if !slices.Contains(hosts, h) {
				continue
			}
			for gj, o := range groups {
				if gj == gi {
					continue
				}
				for _, from := range o {
					if from != h && slices.Contains(hosts, from) {
						out = append(out, dropRule{Host: h, From: from})
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b dropRule) int {
		if c := strings.Compare(a.Host, b.Host); c != 0 {
			return c
		}
		return strings.Compare(a.From, b.From)
	})
	return slices.Compact(out)
}

// netnsState is what a run records in netnsStateDir/<id>.json before it
// creates anything, so that a later start finds and removes what it left
// if its coordinator was killed.
type netnsState struct {
	ID string `json:"id"`
	// PID and PIDStart identify the coordinator process (the start time
	// in clock ticks, field 22 of /proc/PID/stat, tells a reused PID apart).
	PID        int      `json:"pid"`
	PIDStart   uint64   `json:"pid_start"`
	Subnet     string   `json:"subnet"`
	Bridge     string   `json:"bridge"`
	Namespaces []string `json:"namespaces"`
	Links      []string `json:"links"`
	// Addrs maps every host to its address.
	Addrs map[string]string `json:"addrs,omitempty"`
}

// state is the layout's state file content.
func (n netnsLayout) state(pid int, start uint64) netnsState {
	s := netnsState{ID: n.ID, PID: pid, PIDStart: start, Subnet: n.Subnet.String(), Bridge: n.Bridge(), Addrs: map[string]string{}}
	for i, h := range n.Hosts {
		s.Namespaces = append(s.Namespaces, n.Namespace(h))
		s.Links = append(s.Links, n.Veth(i))
		s.Addrs[h] = n.Addr(i).String()
	}
	return s
}

// runIDOf returns the run id in a namespace or link name made by this
// package ("" if the name is not one).
func runIDOf(name string) string {
	rest, ok := strings.CutPrefix(name, netnsPrefix)
	if !ok || len(rest) < 6 {
		return ""
	}
	id := rest[:6]
	if _, err := hex.DecodeString(id); err != nil {
		return ""
	}
	switch tail := rest[6:]; {
	case tail == "", strings.HasPrefix(tail, "-"):
		return id
	case strings.HasPrefix(tail, "h"):
		if _, err := strconv.Atoi(tail[1:]); err == nil {
			return id
		}
	}
	return ""
}

// netnsFaultLabel says how a fault kind is injected under --netns.
func netnsFaultLabel(kind string, netem bool) string {
	switch kind {
	case "crash", "pause":
		return "signal"
	case "partition":
		return "network: ip rule blackhole in the receiving namespaces"
	case "delay", "loss":
		if netem {
			return "transport layer (netem per link is not implemented)"
		}
		return "transport layer: netem is not available on this kernel"
	}
	return "not injected in cluster mode"
}

// labelFaults appends to each fault description how --netns injects it.
func labelFaults(desc, kinds []string, netem bool) []string {
	out := slices.Clone(desc)
	for i := range out {
		if i < len(kinds) {
			out[i] = fmt.Sprintf("%s [%s]", out[i], netnsFaultLabel(kinds[i], netem))
		}
	}
	return out
}
