package hatest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// Handle runs one script command and returns its output. The commands,
// each with an example:
//
//	setup strategy=passive-standby [plant=(name,...)]   builds the nodes of the experiment in the input (none: the default)
//	start                                    starts every node
//	tick d=5ms                               advances the clock, firing the timers due
//	fire A.1 ha.elect                        fires a pending timer of a host (the clock moves to its time)
//	msgs                                     lists the messages in flight
//	deliver [from=A] [to=B] [kind=route] [type=ckpt] [n=1]   delivers matching messages
//	drop [filter...] [n=1]                   loses matching messages
//	delay [filter...] [n=1]                  moves matching messages behind every other
//	lose [filter...] n=2                     loses the next 2 matching messages when they would be delivered (by any command)
//	stabilize [max=1000]                     delivers until nothing is in flight
//	run d=50ms [step=1ms]                    ticks and stabilises in steps, printing only trace events
//	partition A.1 [B ...]                    cuts the hosts named off from the others: messages between the two groups are lost
//	cut A B                                  cuts the link between A and B only (both ways; cuts add up)
//	heal                                     ends the partition and every cut
//	pause A / resume A                       A handles nothing meanwhile: messages to it wait, its timers wait
//	crash A                                  A stops: what it is sent is dropped, its timers never fire
//	down A [on=(src,A.1)]                    the detector declares A dead (on every other live host)
//	up A [on=(...)]                          A is seen alive again
//	status [A A.1 ...]                       role, epoch, positions and routes of hosts (all by default)
//	sink [from=9] [to=16]                    what the sink delivered; with from= or to=, also each output in that seq range (id, event time, value)
//
// A filter is any of from=, to=, kind= (data, route, resume, ack,
// strategy), type= (a strategy message's type) and id= (a message number
// as printed, "#3").
func (e *InteractionEnv) Handle(c *Cmd) (string, error) {
	e.out.Reset()
	var err error
	switch c.Name {
	case "setup":
		err = e.handleSetup(c)
	case "start":
		err = e.handleStart()
	case "tick":
		err = e.handleTick(c)
	case "fire":
		err = e.handleFire(c)
	case "msgs":
		for _, env := range e.inflight {
			e.printf("%s\n", env)
		}
	case "lose":
		err = e.handleLose(c)
	case "deliver", "drop", "delay":
		err = e.handleChosen(c)
	case "stabilize":
		err = e.handleStabilize(c)
	case "run":
		err = e.handleRun(c)
	case "pause", "resume":
		err = e.handlePause(c)
	case "crash":
		err = e.handleCrash(c)
	case "partition":
		err = e.handlePartition(c)
	case "cut":
		err = e.handleCut(c)
	case "heal":
		e.apart, e.cuts = nil, nil
		e.printf("healed\n")
	case "down", "up":
		err = e.handlePeer(c)
	case "status":
		err = e.handleStatus(c)
	case "sink":
		err = e.handleSink(c)
	default:
		err = fmt.Errorf("unknown command %q", c.Name)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Name, err)
	}
	return clean(e.out.String()), nil
}

// handleSetup builds the nodes: the experiment in the input (the built-in
// default when there is none; its faults are ignored: the script is the
// schedule), the strategy named by strategy=, bugs planted by plant=.
func (e *InteractionEnv) handleSetup(c *Cmd) error {
	name := c.one("strategy")
	if name == "" {
		return fmt.Errorf("strategy= is required")
	}
	text := c.Input
	if strings.TrimSpace(text) == "" {
		text = experiment.DefaultYAML
	}
	exp, err := experiment.Parse([]byte(text), "setup")
	if err != nil {
		return err
	}
	var planted ha.Planted
	if names, ok := c.Arg("plant"); ok {
		if planted, err = ha.ParsePlanted(strings.Join(names, ",")); err != nil {
			return err
		}
	}
	st, err := strategies.Build(name, exp.ParamsFor(name))
	if err != nil {
		return err
	}
	planted |= e.plant
	*e = InteractionEnv{plant: e.plant, exp: exp, strategy: name, topo: exp.Topology(st), nodes: map[string]*ha.Node{}, crashed: map[string]bool{}}
	e.hosts = e.topo.Hosts()
	for _, h := range e.hosts {
		cfg := exp.NodeConfig(h, e.topo, st, &hostEnv{e: e, host: h, rng: experiment.Seeded(exp.Seed, "node", h)})
		cfg.Planted = planted
		n, err := ha.NewNode(cfg)
		if err != nil {
			return err
		}
		e.nodes[h] = n
	}
	e.printf("hosts: %s\n", strings.Join(e.hosts, " "))
	return nil
}

func (e *InteractionEnv) handleStart() error {
	if e.nodes == nil {
		return fmt.Errorf("no nodes: run setup first")
	}
	for _, h := range e.hosts {
		e.printf("%s: start\n", h)
		e.step(h, e.nodes[h].Start)
	}
	return nil
}

func (e *InteractionEnv) handleTick(c *Cmd) error {
	d, err := c.duration("d", 0)
	if err != nil {
		return err
	}
	if e.nodes == nil {
		return fmt.Errorf("no nodes: run setup first")
	}
	e.advance(d)
	return nil
}

// handleFire fires the earliest pending timer of the host with the name,
// moving the clock forward to its time if it was not due yet.
func (e *InteractionEnv) handleFire(c *Cmd) error {
	if len(c.Args) != 2 {
		return fmt.Errorf("want: fire HOST TIMER")
	}
	host, name := c.Args[0].Key, c.Args[1].Key
	if _, err := e.node(host); err != nil {
		return err
	}
	for i, t := range e.timers {
		if t.host == host && t.name == name {
			e.timers = slices.Delete(e.timers, i, i+1)
			e.now = max(e.now, t.at)
			e.fireTimer(t)
			return nil
		}
	}
	return fmt.Errorf("%s has no pending timer %q", host, name)
}

// handleChosen delivers, drops or delays the messages in flight that
// match the command's filter (at most n= of them).
func (e *InteractionEnv) handleChosen(c *Cmd) error {
	match, err := c.filter()
	if err != nil {
		return err
	}
	limit, err := c.int("n", -1)
	if err != nil {
		return err
	}
	var chosen []*envelope
	for _, env := range e.inflight {
		if match(env) && (limit < 0 || len(chosen) < limit) {
			chosen = append(chosen, env)
		}
	}
	if len(chosen) == 0 {
		return fmt.Errorf("no message in flight matches")
	}
	e.inflight = slices.DeleteFunc(e.inflight, func(env *envelope) bool { return slices.Contains(chosen, env) })
	for _, env := range chosen {
		switch c.Name {
		case "deliver":
			e.deliver(env)
		case "drop":
			e.printf("dropped %s\n", env)
		case "delay":
			e.printf("delayed %s\n", env)
			e.inflight = append(e.inflight, env)
		}
	}
	return nil
}

// handleLose adds a standing rule: the next n= messages that match the
// filter are lost when a command would deliver them.
func (e *InteractionEnv) handleLose(c *Cmd) error {
	match, err := c.filter()
	if err != nil {
		return err
	}
	n, err := c.int("n", 1)
	if err != nil {
		return err
	}
	e.losses = append(e.losses, &loss{match: match, n: n})
	e.printf("losing the next %d matching\n", n)
	return nil
}

// handleStabilize delivers messages in flight in the order they were sent
// until none is left but those to paused hosts.
func (e *InteractionEnv) handleStabilize(c *Cmd) error {
	limit, err := c.int("max", 10000)
	if err != nil {
		return err
	}
	return e.stabilize(limit)
}

func (e *InteractionEnv) stabilize(limit int) error {
	for i := 0; ; i++ {
		k := slices.IndexFunc(e.inflight, func(env *envelope) bool { return !e.paused[env.to] })
		if k < 0 {
			return nil
		}
		if i == limit {
			return fmt.Errorf("still %d messages in flight after %d deliveries", len(e.inflight), limit)
		}
		env := e.inflight[k]
		e.inflight = slices.Delete(e.inflight, k, k+1)
		e.deliver(env)
	}
}

// handleRun alternates a tick of step= and a stabilize until d= has
// passed, and prints only the trace events (not every message and timer).
func (e *InteractionEnv) handleRun(c *Cmd) error {
	d, err := c.duration("d", 0)
	if err != nil {
		return err
	}
	step, err := c.duration("step", time.Millisecond)
	if err != nil {
		return err
	}
	if step <= 0 {
		return fmt.Errorf("step must be positive")
	}
	if e.nodes == nil {
		return fmt.Errorf("no nodes: run setup first")
	}
	saved := e.out.String()
	e.out.Reset()
	for end := e.now + d; e.now < end; {
		e.advance(min(step, end-e.now))
		if err := e.stabilize(100000); err != nil {
			return err
		}
	}
	var keep []string
	for l := range strings.SplitSeq(e.out.String(), "\n") {
		if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "  sent ") && !strings.Contains(l, ": timer ") {
			keep = append(keep, strings.TrimPrefix(l, "  "))
		}
	}
	e.out.Reset()
	e.out.WriteString(saved)
	e.out.WriteString(strings.Join(mergeDeliveries(keep), "\n"))
	return nil
}

// mergeDeliveries joins consecutive "sink: deliver seq=..." lines into one.
func mergeDeliveries(lines []string) []string {
	var out []string
	var seqs []string
	flush := func() {
		if len(seqs) > 0 {
			out = append(out, "sink: deliver seq="+joinRanges(seqs))
			seqs = nil
		}
	}
	for _, l := range lines {
		if s, ok := strings.CutPrefix(l, "sink: deliver seq="); ok {
			seqs = append(seqs, s)
			continue
		}
		flush()
		out = append(out, l)
	}
	flush()
	return out
}

// joinRanges merges range lists written by ranges.
func joinRanges(parts []string) string {
	var seqs []uint64
	for _, p := range parts {
		for r := range strings.SplitSeq(p, ",") {
			lo, hi, ok := strings.Cut(r, "..")
			a, _ := strconv.ParseUint(lo, 10, 64)
			b := a
			if ok {
				b, _ = strconv.ParseUint(hi, 10, 64)
			}
			for s := a; s <= b; s++ {
				seqs = append(seqs, s)
			}
		}
	}
	return ranges(seqs)
}

func (e *InteractionEnv) handlePause(c *Cmd) error {
	if len(c.Args) != 1 {
		return fmt.Errorf("want: %s HOST", c.Name)
	}
	h := c.Args[0].Key
	if _, err := e.node(h); err != nil {
		return err
	}
	if e.paused == nil {
		e.paused = map[string]bool{}
	}
	e.paused[h] = c.Name == "pause"
	e.printf("%s: %s\n", h, c.Name)
	return nil
}

func (e *InteractionEnv) handleCrash(c *Cmd) error {
	if len(c.Args) != 1 {
		return fmt.Errorf("want: crash HOST")
	}
	h := c.Args[0].Key
	if _, err := e.node(h); err != nil {
		return err
	}
	e.crashed[h] = true
	e.timers = slices.DeleteFunc(e.timers, func(t *timer) bool { return t.host == h })
	e.printf("%s: crash\n", h)
	return nil
}

// handlePartition cuts the hosts named off from the others until heal.
func (e *InteractionEnv) handlePartition(c *Cmd) error {
	if len(c.Args) == 0 {
		return fmt.Errorf("want: partition HOST...")
	}
	e.apart = map[string]bool{}
	var names []string
	for _, a := range c.Args {
		if _, err := e.node(a.Key); err != nil {
			return err
		}
		e.apart[a.Key] = true
		names = append(names, a.Key)
	}
	e.printf("partition: (%s) apart\n", strings.Join(names, ","))
	return nil
}

// handleCut cuts the link between two hosts, both ways, until heal.
func (e *InteractionEnv) handleCut(c *Cmd) error {
	if len(c.Args) != 2 {
		return fmt.Errorf("want: cut HOST HOST")
	}
	a, b := c.Args[0].Key, c.Args[1].Key
	for _, h := range []string{a, b} {
		if _, err := e.node(h); err != nil {
			return err
		}
	}
	if e.cuts == nil {
		e.cuts = map[[2]string]bool{}
	}
	e.cuts[[2]string{a, b}], e.cuts[[2]string{b, a}] = true, true
	e.printf("cut: %s | %s\n", a, b)
	return nil
}

// handlePeer runs PeerDown or PeerUp of the host on the observers.
func (e *InteractionEnv) handlePeer(c *Cmd) error {
	if len(c.Args) == 0 || c.Args[0].Vals != nil {
		return fmt.Errorf("want: %s HOST [on=(HOST,...)]", c.Name)
	}
	peer := c.Args[0].Key
	if _, err := e.node(peer); err != nil {
		return err
	}
	on, given := c.Arg("on")
	if !given {
		for _, h := range e.hosts {
			if h != peer && !e.crashed[h] {
				on = append(on, h)
			}
		}
	}
	for _, h := range on {
		n, err := e.node(h)
		if err != nil {
			return err
		}
		if e.crashed[h] {
			return fmt.Errorf("%s crashed", h)
		}
		e.printf("%s: %s %s\n", h, c.Name, peer)
		if c.Name == "down" {
			e.step(h, func() { n.Handle(ha.Input{Kind: ha.InputPeerDown, Name: peer}) })
		} else {
			e.step(h, func() { n.Handle(ha.Input{Kind: ha.InputPeerUp, Name: peer}) })
		}
	}
	return nil
}
