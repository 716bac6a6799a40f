package kv

import (
	"context"
	"testing"
)

// TestTxnAppliesAllOrNothing: a transaction whose check fails writes
// nothing; one whose checks pass applies every op.
func TestTxnAppliesAllOrNothing(t *testing.T) {
	ctx := context.Background()
	m := NewMem()
	if ok, _ := m.CAS(ctx, "a", []byte("1"), 0); !ok {
		t.Fatal("create-if-absent refused on an empty store")
	}
	if ok, _ := m.CAS(ctx, "a", []byte("2"), 0); ok {
		t.Fatal("create-if-absent overwrote")
	}
	_, ia, _ := m.Get(ctx, "a")
	ok, err := m.Txn(ctx, []Op{{Verb: Set, Key: "b", Value: []byte("x")}, {Verb: CheckIndex, Key: "a", Index: ia + 100}})
	if ok || err != nil {
		t.Fatalf("a failed check: %v %v", ok, err)
	}
	if _, ib, _ := m.Get(ctx, "b"); ib != 0 {
		t.Fatal("a rolled-back transaction wrote b")
	}
	ok, err = m.Txn(ctx, []Op{{Verb: DeleteCAS, Key: "a", Index: ia}, {Verb: CAS, Key: "b", Value: []byte("y"), Index: 0}})
	if !ok || err != nil {
		t.Fatalf("a good transaction: %v %v", ok, err)
	}
	if _, ia2, _ := m.Get(ctx, "a"); ia2 != 0 {
		t.Fatal("delete-cas left a")
	}
	if v, _, _ := m.Get(ctx, "b"); string(v) != "y" {
		t.Fatalf("b = %q", v)
	}
	if ok, _ := m.DeleteCAS(ctx, "missing", 0); ok {
		t.Fatal("delete-cas of a missing key succeeded")
	}
}
