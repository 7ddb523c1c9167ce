package ha

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

type layoutEnv struct{}

func (layoutEnv) Now() time.Duration             { return 0 }
func (layoutEnv) Send(string, *Message)          {}
func (layoutEnv) SetTimer(time.Duration, string) {}
func (layoutEnv) Work(int, int)                  {}
func (layoutEnv) Rand() *rand.Rand               { return rand.New(rand.NewPCG(1, 2)) }
func (layoutEnv) Trace(Event)                    {}

type layoutStrategy struct{}

func (layoutStrategy) Name() string                             { return "layout" }
func (layoutStrategy) Replicas() int                            { return 1 }
func (layoutStrategy) InitialReceivers(hosts []string) []string { return hosts[:1] }
func (layoutStrategy) Hooks(*Node) Hooks                        { return NopHooks{} }

// TestOutputFieldsShareALine guards the layout the output path relies on:
// every node field that emitting a tuple reads or writes — the output seq
// and port, whether to retain, the output queue's tail, length, head and
// lent flag — lies in one 64-byte line of an allocated node (the allocator
// puts an 8-byte header in front of a large object with pointers). A field
// added in front of them can split the line and cost every retaining node
// a cache miss per message in cluster mode, which no other test notices.
func TestOutputFieldsShareALine(t *testing.T) {
	topo := &Topology{Sources: []string{"src"}, Sink: "sink",
		Frags: []Fragment{{Name: "A", Hosts: []string{"A"}, Inputs: 1, NewOps: func() ([]Operator, error) { return nil, nil }}}}
	for range 20 {
		n, err := NewNode(NodeConfig{Host: "A", Topology: topo, Env: layoutEnv{}, Strategy: layoutStrategy{}})
		require.NoError(t, err)
		line := func(p unsafe.Pointer, size uintptr) [2]uintptr {
			return [2]uintptr{uintptr(p) / 64, (uintptr(p) + size - 1) / 64}
		}
		want := line(unsafe.Pointer(&n.outNext), 8)
		for name, got := range map[string][2]uintptr{
			"outPort":  line(unsafe.Pointer(&n.outPort), 1),
			"retain":   line(unsafe.Pointer(&n.retain), 1),
			"out.tail": line(unsafe.Pointer(&n.out.tail), unsafe.Sizeof(n.out.tail)),
			"out.n":    line(unsafe.Pointer(&n.out.n), unsafe.Sizeof(n.out.n)),
			"out.head": line(unsafe.Pointer(&n.out.head), unsafe.Sizeof(n.out.head)),
			"out.lent": line(unsafe.Pointer(&n.out.lent), 1),
		} {
			require.Equal(t, want, got, "%s is not in outNext's cache line (node at %p)", name, n)
		}
		require.Equal(t, want[0], want[1], "outNext spans two lines")
	}
}
