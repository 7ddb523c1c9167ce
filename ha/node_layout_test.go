package ha

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"
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

// BenchmarkOutputFieldsShareALine reports the layout the output path
// relies on: every node field that emitting a tuple reads or writes — the
// output seq and port, whether to retain, the output queue's tail, length,
// and head — should lie in one 64-byte line of an allocated node
// (the allocator puts an 8-byte header in front of a large object with
// pointers). A field added in front of them can split the line and cost
// every retaining node a cache miss per message in cluster mode. It
// allocates nodes as a cluster node does and reports hot-lines: the most
// 64-byte lines those fields spanned in any of them (target 1). This is a
// measurement, not a pass/fail test: the allocator decides addresses.
//
//	go test -run '^$' -bench OutputFieldsShareALine ./ha
func BenchmarkOutputFieldsShareALine(b *testing.B) {
	topo := &Topology{Sources: []string{"src"}, Sink: "sink",
		Frags: []Fragment{{Name: "A", Hosts: []string{"A"}, Inputs: 1, NewOps: func() ([]Operator, error) { return nil, nil }}}}
	worst := 0
	for b.Loop() {
		n, err := NewNode(NodeConfig{Host: "A", Topology: topo, Env: layoutEnv{}, Strategy: layoutStrategy{}})
		if err != nil {
			b.Fatal(err)
		}
		worst = max(worst, outputLines(n))
	}
	b.ReportMetric(float64(worst), "hot-lines")
}

// outputLines is the number of 64-byte lines the output fields of n span.
func outputLines(n *Node) int {
	var lines []uintptr
	add := func(p unsafe.Pointer, size uintptr) {
		for l := uintptr(p) / 64; l <= (uintptr(p)+size-1)/64; l++ {
			if !slices.Contains(lines, l) {
				lines = append(lines, l)
			}
		}
	}
	add(unsafe.Pointer(&n.outNext), unsafe.Sizeof(n.outNext))
	add(unsafe.Pointer(&n.outPort), unsafe.Sizeof(n.outPort))
	add(unsafe.Pointer(&n.retain), unsafe.Sizeof(n.retain))
	add(unsafe.Pointer(&n.out.tail), unsafe.Sizeof(n.out.tail))
	add(unsafe.Pointer(&n.out.n), unsafe.Sizeof(n.out.n))
	add(unsafe.Pointer(&n.out.head), unsafe.Sizeof(n.out.head))
	return len(lines)
}
