package ha_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/streamha/streamha/ha"
)

// FuzzRouteMessage delivers arbitrary routes, route queries and resume
// requests to a node: it never panics, believes only a route whose primary
// and receivers are hosts of its fragment, and no epoch it holds jumps by
// more than 1024 in one message or reaches 2^62 (epochs never wrap).
func FuzzRouteMessage(f *testing.F) {
	f.Add(1, uint64(1), "B.1", "B.1", "sink", false, true, uint8(0))
	f.Add(1, ^uint64(0), "evil", "evil", "sink", true, true, uint8(0))
	f.Add(0, uint64(3), "A", "A,B", "A", false, false, uint8(1))
	f.Add(7, uint64(2), "B", "", "src", false, false, uint8(2))
	f.Fuzz(func(t *testing.T, frag int, epoch uint64, primary, receivers, from string, reset, resume bool, kind uint8) {
		env := &fakeEnv{}
		n := newChainNode(t, "A", env)
		topo := chainTopology()
		before := []uint64{n.Route(0).Epoch, n.Route(1).Epoch}
		var recv []string
		if receivers != "" {
			recv = strings.Split(receivers, ",")
		}
		r := &ha.Route{Frag: frag, Epoch: epoch, Primary: primary, Receivers: recv, ResetSeq: reset, Resume: resume}
		switch kind % 3 {
		case 0:
			n.Deliver(&ha.Message{Kind: ha.KindRoute, From: from, Frag: frag, Epoch: epoch, Route: r})
		case 1:
			n.Deliver(&ha.Message{Kind: ha.KindRoute, Type: ha.RouteQueryType, From: from, Frag: frag, Epoch: epoch})
		default:
			n.Deliver(&ha.Message{Kind: ha.KindResume, From: from, Frag: frag, Epoch: epoch, Seq: epoch})
		}
		for i, fr := range topo.Frags {
			got := n.Route(i)
			if !slices.Contains(fr.Hosts, got.Primary) {
				t.Fatalf("fragment %s: believed primary %q", fr.Name, got.Primary)
			}
			for _, h := range got.Receivers {
				if !slices.Contains(fr.Hosts, h) {
					t.Fatalf("fragment %s: believed receiver %q", fr.Name, h)
				}
			}
			if got.Epoch >= 1<<62 || got.Epoch > before[i]+1024 {
				t.Fatalf("fragment %s: epoch %d after %d", fr.Name, got.Epoch, before[i])
			}
		}
	})
}
