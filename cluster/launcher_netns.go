package cluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
)

// NetnsNote is added to the note of every --netns result.
const NetnsNote = " With --netns every host ran in its own Linux network namespace with its own address, joined by a bridge " +
	"(nodes started with the --bind/--advertise/--join/--data-addr flags of a multi-machine deployment); partitions were cut " +
	"in the network (packets from the other side dropped silently in each namespace: TCP stalls and retransmits, memberlist's " +
	"direct and indirect probes fail as on real machines), the experiment's bandwidth limited every host's egress through tbf; " +
	"each fault's injection layer is given after it in faults."

// NetnsFile is the description of a --netns run's network in its
// directory: run id, subnet, bridge, namespaces, links and every host's
// address.
func NetnsFile(dir string) string { return filepath.Join(dir, "netns.json") }

// openNet creates the run's network namespaces for hosts, describes them
// in dir, and returns the function that removes them (and kills whatever
// still runs in them).
func (l *launcher) openNet(hosts []string, dir string) (func(), error) {
	n, err := openNetns(hosts, float64(l.exp.Network.Bandwidth), l.cfg.Log)
	if err != nil {
		return nil, err
	}
	b, _ := json.MarshalIndent(n.layout.state(0, 0), "", "  ")
	if err := os.WriteFile(NetnsFile(dir), b, 0o644); err != nil {
		if cerr := n.close(); cerr != nil {
			l.cfg.Log.Printf("netns: %v", cerr)
		}
		return nil, fmt.Errorf("netns: %w", err)
	}
	l.net, l.netem = n, n.netem
	return func() {
		l.net = nil
		if err := n.close(); err != nil {
			l.cfg.Log.Printf("netns: %v", err)
		}
	}, nil
}

// addrFlags are the address flags of host's node: its own address in its
// namespace under --netns, ports picked on 127.0.0.1 otherwise.
func (l *launcher) addrFlags(host string) []string {
	if l.net != nil {
		return l.net.layout.nodeFlags(host)
	}
	return []string{"--bind", "127.0.0.1:0", "--data-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0"}
}

// command is the command line that starts host's node: in its namespace
// under --netns.
func (l *launcher) command(host string, args []string) (string, []string) {
	if l.net != nil {
		return l.net.command(host, l.cfg.Exe, args)
	}
	return l.cfg.Exe, args
}

// netPartition schedules partition fault i in the network: cut at f.At,
// healed f.For later, each traced as the loopback launcher traces it.
func (l *launcher) netPartition(i int, f experiment.Fault, record func(ha.Event)) []action {
	n := l.net
	what := fmt.Sprintf("%s %v (network)", f.Kind, f.Groups)
	return []action{
		{at: f.At, what: what, do: func() error {
			record(ha.Event{Kind: ha.EvPartition, Note: fmt.Sprint(f.Groups)})
			t0 := time.Now()
			err := n.cut(i, f.Groups)
			l.cfg.Log.Printf("netns: partition %v cut in %s", f.Groups, time.Since(t0).Round(time.Millisecond))
			return err
		}},
		{at: f.At + f.For, what: "end of " + what, do: func() error {
			record(ha.Event{Kind: ha.EvHeal, Note: fmt.Sprint(f.Groups)})
			t0 := time.Now()
			err := n.heal(i)
			l.cfg.Log.Printf("netns: partition %v healed in %s", f.Groups, time.Since(t0).Round(time.Millisecond))
			return err
		}},
	}
}

// labelNetns says in res how --netns injected each fault.
func (l *launcher) labelNetns(res *metrics.Result) {
	res.Note = netnsNote(res.Note)
	if l.cfg.Chaos != nil {
		for i := range res.Faults {
			res.Faults[i] += " [kills and pauses by signal; partitions " + netnsFaultLabel("partition", l.netem) + "]"
		}
		return
	}
	kinds := make([]string, len(l.exp.Faults))
	for i, f := range l.exp.Faults {
		kinds[i] = f.Kind()
	}
	res.Faults = labelFaults(res.Faults, kinds, l.netem)
}

// FaultTraceFile is the coordinator's trace of the faults it injected in
// a run directory: crash, pause, resume, partition and heal events, on
// the nodes' time base. Collect reads it beside the nodes' traces.
func FaultTraceFile(dir string) string { return filepath.Join(dir, "coordinator.trace.jsonl") }

// faultTrace writes the coordinator's fault events as they happen, so
// that a run's directory holds them even if the coordinator is killed.
type faultTrace struct {
	f  *os.File
	bw *bufio.Writer
	ew *ha.EventWriter
}

func createFaultTrace(dir string) (*faultTrace, error) {
	f, err := os.Create(FaultTraceFile(dir))
	if err != nil {
		return nil, fmt.Errorf("coordinator trace: %w", err)
	}
	bw := bufio.NewWriter(f)
	return &faultTrace{f: f, bw: bw, ew: ha.NewEventWriter(bw)}, nil
}

// write appends ev and flushes it (faults are few).
func (t *faultTrace) write(ev *ha.Event) {
	if t.ew.Write(ev) == nil {
		_ = t.bw.Flush()
	}
}

func (t *faultTrace) close() {
	_ = t.bw.Flush()
	_ = t.f.Close()
}

// readFaultTrace reads dir's coordinator trace (nil when there is none).
func readFaultTrace(dir string) ([]ha.Event, error) {
	return ReadTraceTolerant(FaultTraceFile(dir))
}

// collectNote is the note of a collected result: where its fault events
// came from, and whether the run was a --netns one (its directory has
// NetnsFile).
func collectNote(found int, dir string, faults int) string {
	note := Note
	if _, err := os.Stat(NetnsFile(dir)); err == nil {
		note = netnsNote(note)
	}
	if faults > 0 {
		return note + fmt.Sprintf(" Collected from %d node traces in %s and the coordinator's trace of the %d fault events it injected.", found, dir, faults)
	}
	return note + fmt.Sprintf(" Collected from %d node traces in %s; faults were injected by hand (no %s).", found, dir, filepath.Base(FaultTraceFile(dir)))
}

// netnsNote turns a cluster note into that of a --netns run.
func netnsNote(note string) string {
	return strings.Replace(note, "real OS processes on loopback", "real OS processes in network namespaces", 1) + NetnsNote
}
