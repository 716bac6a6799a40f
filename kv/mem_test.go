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

// The prefix's index is what history's readers wait on: it must move with
// every write under the prefix, deletions included (in a transaction too),
// and not with writes elsewhere.
func TestMemPrefixIndexCountsDeletionsAndNothingElse(t *testing.T) {
	ctx := context.Background()
	m := NewMem()
	m.Put("h/days/1/a", []byte("1"))
	m.Put("h/days/1/b", []byte("2"))
	m.Put("h/days/2/a", []byte("3"))
	keys, idx, err := m.Keys(ctx, "h/days/", "/")
	if err != nil || len(keys) != 2 || keys[0] != "h/days/1/" || keys[1] != "h/days/2/" {
		t.Fatalf("keys cut at the separator: %q, %v", keys, err)
	}
	m.Put("other/x", []byte("4"))
	if _, again, _ := m.Keys(ctx, "h/days/", ""); again != idx {
		t.Fatalf("a write outside the prefix moved its index from %d to %d", idx, again)
	}
	_, index, _ := m.Get(ctx, "h/days/1/b")
	if ok, err := m.Txn(ctx, []Op{{Verb: DeleteCAS, Key: "h/days/1/b", Index: index}}); !ok || err != nil {
		t.Fatalf("delete-cas in a transaction: %v %v", ok, err)
	}
	_, afterDelete, _ := m.ListIndex(ctx, "h/days/")
	if afterDelete <= idx {
		t.Fatalf("a deletion under the prefix left its index at %d (was %d)", afterDelete, idx)
	}
	if err := m.DeleteTree(ctx, "h/days/2/"); err != nil {
		t.Fatal(err)
	}
	if ps, _ := m.List(ctx, "h/"); len(ps) != 1 || ps[0].Key != "h/days/1/a" {
		t.Fatalf("after the deletes: %+v", ps)
	}
	if ops := m.Ops(); ops.Lists != 2 || ops.Deletes != 1 {
		t.Fatalf("ops counted %+v, want 2 lists and 1 delete (the tree; Txn is not counted)", ops)
	}
}
