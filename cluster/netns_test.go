package cluster

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPickSubnetAvoidsRoutesAndAddresses(t *testing.T) {
	routes := `default via 192.0.2.1 dev eth0
10.213.0.0/24 dev sthaabcdef proto kernel scope link src 10.213.0.254
blackhole 10.213.1.7
local 10.213.2.9 dev lo table local proto kernel scope host src 10.213.2.9
broadcast 127.255.255.255 dev lo table local proto kernel scope link src 127.0.0.1
192.0.2.0/24 dev eth0 proto kernel scope link src 192.0.2.2`
	addrs := `2: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0\       valid_lft forever preferred_lft forever
5: x    inet 10.213.3.1/16 scope global x`
	inUse := parseRoutePrefixes(routes, addrs)
	assert.Contains(t, inUse, netip.MustParsePrefix("10.213.1.7/32"))
	assert.Contains(t, inUse, netip.MustParsePrefix("10.213.0.0/16"), "an address's prefix counts whole")
	_, err := pickSubnet(inUse)
	require.Error(t, err, "a /16 over 10.213.0.0 leaves no /24 free")

	tests := []struct {
		name  string
		inUse []string
		want  string
	}{
		{"nothing in use", nil, "10.213.0.0/24"},
		{"the default route overlaps nothing", []string{"0.0.0.0/0"}, "10.213.0.0/24"},
		{"a host route inside the first /24", []string{"10.213.0.9/32"}, "10.213.1.0/24"},
		{"a wider route", []string{"10.213.0.0/23", "10.213.2.0/24"}, "10.213.3.0/24"},
		{"another run's subnet", []string{"10.213.0.0/24"}, "10.213.1.0/24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ps []netip.Prefix
			for _, s := range tt.inUse {
				ps = append(ps, netip.MustParsePrefix(s))
			}
			got, err := pickSubnet(ps)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.String())
		})
	}
}

func TestPartitionDrops(t *testing.T) {
	hosts := []string{"src", "A", "B", "B.1", "sink"}
	tests := []struct {
		name   string
		groups [][]string
		want   []dropRule
	}{
		{"one host isolated from the rest: both directions", [][]string{{"B"}, {"src", "A", "B.1", "sink"}}, []dropRule{
			{"A", "B"}, {"B", "A"}, {"B", "B.1"}, {"B", "sink"}, {"B", "src"}, {"B.1", "B"}, {"sink", "B"}, {"src", "B"},
		}},
		{"one link: hosts in no group are unaffected", [][]string{{"A"}, {"B"}}, []dropRule{{"A", "B"}, {"B", "A"}}},
		{"hosts not in the run are skipped", [][]string{{"A", "X"}, {"B"}}, []dropRule{{"A", "B"}, {"B", "A"}}},
		{"three groups", [][]string{{"A"}, {"B"}, {"sink"}}, []dropRule{
			{"A", "B"}, {"A", "sink"}, {"B", "A"}, {"B", "sink"}, {"sink", "A"}, {"sink", "B"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, partitionDrops(tt.groups, hosts))
		})
	}
}

func TestNetnsLayoutNames(t *testing.T) {
	l := netnsLayout{ID: "0a1b2c", Subnet: netip.MustParsePrefix("10.213.4.0/24"), Hosts: []string{"src", "B.12", "sink"}}
	assert.Equal(t, "stha0a1b2c", l.Bridge())
	assert.Equal(t, "stha0a1b2c-B.12", l.Namespace("B.12"))
	assert.Equal(t, "10.213.4.2", l.Addr(1).String())
	assert.Equal(t, "10.213.4.254", l.CoordinatorAddr().String())
	for i := range 200 {
		assert.LessOrEqual(t, len(l.Veth(i)), 15, "interface names have at most 15 bytes")
	}
	assert.Equal(t, []string{
		"--bind", "0.0.0.0:7946", "--advertise", "10.213.4.3:7946",
		"--data-addr", "0.0.0.0:7947", "--metrics-addr", "10.213.4.3:9100",
	}, l.nodeFlags("sink"))
	st := l.state(42, 7)
	assert.Equal(t, []string{"stha0a1b2c-src", "stha0a1b2c-B.12", "stha0a1b2c-sink"}, st.Namespaces)
	assert.Equal(t, []string{"stha0a1b2ch0", "stha0a1b2ch1", "stha0a1b2ch2"}, st.Links)
	for _, name := range append(append([]string{st.Bridge}, st.Namespaces...), st.Links...) {
		assert.Equal(t, "0a1b2c", runIDOf(name), name)
	}
	for _, name := range []string{"eth0", "sthax", "stha0a1b2", "sthazzzzzz", "stha0a1b2cx", "stha0a1b2chx", "docker0"} {
		assert.Empty(t, runIDOf(name), name)
	}
}

func TestLabelFaults(t *testing.T) {
	got := labelFaults([]string{"crash B at 2s", "partition [B] | [A] at 1s for 1s", "delay A→B +5ms at 1s for 1s"},
		[]string{"crash", "partition", "delay"}, false)
	assert.Equal(t, []string{
		"crash B at 2s [signal]",
		"partition [B] | [A] at 1s for 1s [network: ip rule blackhole in the receiving namespaces]",
		"delay A→B +5ms at 1s for 1s [transport layer: netem is not available on this kernel]",
	}, got)
}
