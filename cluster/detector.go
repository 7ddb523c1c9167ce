package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// Detector profiles (DetectorConfig.Profile).
const (
	// ProfileTuned probes every 100 ms with a small suspicion multiplier:
	// a crash is declared in about 0.3–0.5 s on loopback. The default.
	ProfileTuned = "tuned"
	// ProfileSteady probes every 200 ms with more patience: a crash is
	// declared in about 0.8–1.2 s, and a host starved of CPU for a few
	// hundred milliseconds is not declared dead. For loaded machines.
	ProfileSteady = "steady"
	// ProfileLocal is memberlist.DefaultLocalConfig (1 s probes, seconds to detect).
	ProfileLocal = "local"
	// ProfileLAN is memberlist.DefaultLANConfig (1 s probes, a few seconds to detect).
	ProfileLAN = "lan"
)

// DetectorConfig configures membership and failure detection.
type DetectorConfig struct {
	// Host is this node's name in the membership.
	Host string
	// Bind is the gossip address ("127.0.0.1:0" picks a port).
	Bind string
	// Advertise is the address others reach this node's gossip port at
	// ("" = the bound address).
	Advertise string
	// DataAddr is the data-plane address published in the node metadata.
	DataAddr string
	// Profile is ProfileTuned (default), ProfileSteady, ProfileLocal or ProfileLAN.
	Profile string
	// Keys.Gossip, when set, turns on memberlist encryption.
	Keys Keys
	// Notify receives membership changes; it must not block (the node
	// enqueues them for its loop).
	Notify func(host string, alive bool)
	// Logger receives memberlist's log (default: discard).
	Logger *log.Logger
}

// nodeMeta is the metadata every member publishes.
type nodeMeta struct {
	Data string `json:"d"`
}

// Detector is a node's membership: hashicorp/memberlist with a delegate
// that publishes the data-plane address and turns join/leave/update
// notifications into PeerUp/PeerDown for the node loop.
type Detector struct {
	ml     *memberlist.Memberlist
	gt     *gossipTransport
	faults *faultLayer
	notify func(string, bool)

	mu   sync.RWMutex
	data map[string]string // host → data address
	meta []byte
}

// MemberlistConfig returns the memberlist configuration of a profile.
func MemberlistConfig(profile string) (*memberlist.Config, error) {
	switch profile {
	case "", ProfileTuned:
		c := memberlist.DefaultLocalConfig()
		c.ProbeInterval = 100 * time.Millisecond
		c.ProbeTimeout = 60 * time.Millisecond
		c.SuspicionMult = 2
		c.SuspicionMaxTimeoutMult = 2
		c.IndirectChecks = 2
		c.GossipInterval = 25 * time.Millisecond
		c.GossipNodes = 4
		c.RetransmitMult = 3
		c.TCPTimeout = 500 * time.Millisecond
		c.PushPullInterval = 2 * time.Second
		c.GossipToTheDeadTime = 2 * time.Second
		c.AwarenessMaxMultiplier = 4
		c.DeadNodeReclaimTime = time.Second
		// Gossip packets on a loopback or LAN cluster are a few hundred
		// bytes; compressing each one allocated an LZW table, a tenth of an
		// idle node's CPU with the garbage it made.
		c.EnableCompression = false
		return c, nil
	case ProfileSteady:
		c, _ := MemberlistConfig(ProfileTuned)
		c.ProbeInterval = 200 * time.Millisecond
		c.ProbeTimeout = 150 * time.Millisecond
		c.SuspicionMult = 3
		c.IndirectChecks = 3
		c.GossipInterval = 50 * time.Millisecond
		c.DeadNodeReclaimTime = 2 * time.Second
		return c, nil
	case ProfileLocal:
		c := memberlist.DefaultLocalConfig()
		c.DeadNodeReclaimTime = 5 * time.Second
		return c, nil
	case ProfileLAN:
		c := memberlist.DefaultLANConfig()
		c.DeadNodeReclaimTime = 30 * time.Second
		return c, nil
	}
	return nil, fmt.Errorf("detector profile %q: want %s, %s, %s or %s", profile, ProfileTuned, ProfileSteady, ProfileLocal, ProfileLAN)
}

func splitHostPort(addr, what string) (string, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%s %q: %w", what, addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%s %q: bad port", what, addr)
	}
	if h == "" {
		h = "0.0.0.0"
	}
	return h, port, nil
}

// NewDetector starts memberlist (it does not join anyone yet).
func NewDetector(cfg DetectorConfig, faults *faultLayer) (*Detector, error) {
	mc, err := MemberlistConfig(cfg.Profile)
	if err != nil {
		return nil, err
	}
	if faults == nil {
		faults = newFaultLayer()
	}
	logger := cfg.Logger
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	bindIP, bindPort, err := splitHostPort(cfg.Bind, "--bind")
	if err != nil {
		return nil, err
	}
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{bindIP}, BindPort: bindPort, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("gossip: listen on %s: %w", cfg.Bind, err)
	}
	port := nt.GetAutoBindPort()
	mc.Name = cfg.Host
	mc.BindAddr, mc.BindPort = bindIP, port
	mc.AdvertisePort = port
	if cfg.Advertise != "" {
		ip, p, err := splitHostPort(cfg.Advertise, "--advertise")
		if err != nil {
			nt.Shutdown()
			return nil, err
		}
		mc.AdvertiseAddr = ip
		if p != 0 {
			mc.AdvertisePort = p
		}
	} else if bindIP == "0.0.0.0" || bindIP == "::" {
		mc.AdvertiseAddr = ""
	} else {
		mc.AdvertiseAddr = bindIP
	}
	if cfg.Keys.Gossip != nil {
		mc.SecretKey = cfg.Keys.Gossip
		mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = true, true
	}
	mc.Logger = logger
	d := &Detector{faults: faults, notify: cfg.Notify, data: map[string]string{}}
	d.meta, _ = json.Marshal(nodeMeta{Data: cfg.DataAddr})
	d.gt = newGossipTransport(nt, faults, cfg.Host)
	mc.Transport = d.gt
	mc.Delegate = (*metaDelegate)(d)
	mc.Events = (*eventDelegate)(d)
	ml, err := memberlist.Create(mc)
	if err != nil {
		d.gt.Shutdown()
		return nil, fmt.Errorf("gossip: %w", err)
	}
	d.ml = ml
	return d, nil
}

// Addr is the gossip address other nodes join.
func (d *Detector) Addr() string {
	n := d.ml.LocalNode()
	return net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))
}

// Join contacts the given gossip addresses ("host:port", comma-separated
// lists allowed) and returns how many answered.
func (d *Detector) Join(addrs []string) (int, error) {
	var all []string
	for _, a := range addrs {
		for _, s := range strings.Split(a, ",") {
			if s = strings.TrimSpace(s); s != "" {
				all = append(all, s)
			}
		}
	}
	if len(all) == 0 {
		return 0, nil
	}
	return d.ml.Join(all)
}

// DataAddr returns host's data-plane address as published in its metadata, or "".
func (d *Detector) DataAddr(host string) string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.data[host]
}

// Members lists the hosts currently considered alive (self included).
func (d *Detector) Members() []string {
	var hs []string
	for _, m := range d.ml.Members() {
		hs = append(hs, m.Name)
	}
	return hs
}

// Shutdown stops gossiping; with leave it first announces a graceful leave.
func (d *Detector) Shutdown(leave bool) error {
	if leave {
		_ = d.ml.Leave(500 * time.Millisecond)
	}
	return d.ml.Shutdown()
}

func (d *Detector) learn(n *memberlist.Node) {
	var m nodeMeta
	if json.Unmarshal(n.Meta, &m) == nil && m.Data != "" {
		d.mu.Lock()
		d.data[n.Name] = m.Data
		d.mu.Unlock()
	}
	d.faults.learnAddr(n.Address(), n.Name)
}

type metaDelegate Detector

func (m *metaDelegate) NodeMeta(limit int) []byte {
	if len(m.meta) > limit {
		return nil
	}
	return m.meta
}
func (*metaDelegate) NotifyMsg([]byte)                {}
func (*metaDelegate) GetBroadcasts(int, int) [][]byte { return nil }
func (*metaDelegate) LocalState(bool) []byte          { return nil }
func (*metaDelegate) MergeRemoteState([]byte, bool)   {}

// eventDelegate turns memberlist events into node notifications. The
// callbacks only record and enqueue; they never block memberlist.
type eventDelegate Detector

func (e *eventDelegate) NotifyJoin(n *memberlist.Node) {
	(*Detector)(e).learn(n)
	if e.notify != nil {
		e.notify(n.Name, true)
	}
}

func (e *eventDelegate) NotifyLeave(n *memberlist.Node) {
	if e.notify != nil {
		e.notify(n.Name, false)
	}
}

func (e *eventDelegate) NotifyUpdate(n *memberlist.Node) {
	(*Detector)(e).learn(n)
	if e.notify != nil {
		e.notify(n.Name, true)
	}
}
