package localcluster

import (
	"fmt"
	"testing"
)

func TestPortLayoutFitsBlockWithoutOverlap(t *testing.T) {
	b := Block{Base: portRangeStart}
	seen := map[int]string{}
	add := func(what string, ports ...int) {
		for _, p := range ports {
			if p < b.Base || p >= b.Base+blockSize {
				t.Errorf("%s port %d outside block %d-%d", what, p, b.Base, b.Base+blockSize-1)
			}
			if other, dup := seen[p]; dup {
				t.Errorf("%s port %d also used by %s", what, p, other)
			}
			seen[p] = what
		}
	}
	cs := b.consulServer()
	add("consul server", cs.HTTP, cs.SerfLAN, cs.SerfWAN, cs.Server)
	ns := b.nomadServer()
	add("nomad server", ns.HTTP, ns.RPC, ns.Serf)
	for i := 0; i < MaxClients; i++ {
		cc, nc, m := b.consulClient(i), b.nomadClient(i), b.minio(i)
		add("consul client", cc.HTTP, cc.SerfLAN, cc.SerfWAN, cc.Server)
		add("nomad client", nc.HTTP, nc.RPC, nc.Serf)
		add("minio", m.API, m.Console)
	}
	s := State{PortBase: b.Base}
	for i := 0; i < 4; i++ {
		add("spare", s.SparePort(i))
	}
	if portRangeEnd > 20000 {
		t.Errorf("port range reaches Nomad's dynamic ports: ends at %d", portRangeEnd)
	}
}

// Every client of every block has a dynamic port range of its own, inside
// Nomad's default range and apart from the blocks' static ports.
func TestClientsHaveDisjointDynamicPorts(t *testing.T) {
	seen := map[int]string{}
	for base := portRangeStart; base+blockSize <= portRangeEnd; base += blockSize {
		for i := range MaxClients {
			p := Block{Base: base}.nomadClient(i)
			if p.DynamicMin < portRangeEnd || p.DynamicMax > 32000 || p.DynamicMax-p.DynamicMin+1 != dynamicPorts {
				t.Fatalf("block %d client %d: dynamic ports %d-%d", base, i, p.DynamicMin, p.DynamicMax)
			}
			for port := p.DynamicMin; port <= p.DynamicMax; port++ {
				if other, ok := seen[port]; ok {
					t.Fatalf("port %d is block %d client %d's and %s's", port, base, i, other)
				}
				seen[port] = fmt.Sprintf("block %d client %d", base, i)
			}
		}
	}
}
