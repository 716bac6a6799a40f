package front

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// An operator who writes prefix = "harvest" (no trailing slash) gets every
// key of the blob tier under harvest/, as with "harvest/": the prefix every
// ACL policy scopes.
func TestAPrefixWithoutASlashKeepsEveryKeyUnderIt(t *testing.T) {
	mem := kv.NewMem()
	_, cfgs := memNodes(t)
	ns, err := nodes.Connect(cfgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := New(Options{KV: mem, Prefix: "tenant-a", Nodes: ns, Replicas: 3, Log: hclog.NewNullLogger(), Seed: 7})
	for _, env := range declTenants {
		ns.SetUp("n"+env, true)
	}
	b.objects.Regrid()
	makeBucket(t, b, "data", nil)
	if err := putBytes(t, b, "data", "k", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	keys, _, err := mem.Keys(context.Background(), "", "")
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "tenant-a/") {
			t.Errorf("key %q is outside tenant-a/", k)
		}
	}
}
