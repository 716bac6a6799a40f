package kv

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	consulapi "github.com/hashicorp/consul/api"
)

// fakeConsulKV serves the three calls ListIndex makes: ?keys, read
// transactions and ?recurse. Keys listed in vanished are listed but gone
// when read, as after a sealer's delete.
type fakeConsulKV struct {
	values            map[string]string
	vanished          map[string]bool
	keys, txns, lists atomic.Int32
}

func (f *fakeConsulKV) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Consul-Index", "42")
	switch {
	case r.URL.Path == "/v1/txn":
		f.txns.Add(1)
		var ops []struct{ KV struct{ Verb, Key string } }
		if err := json.NewDecoder(r.Body).Decode(&ops); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var out struct {
			Results []map[string]*consulapi.KVPair
		}
		for _, op := range ops {
			if op.KV.Verb != "get-or-empty" {
				http.Error(w, "verb "+op.KV.Verb, 400)
				return
			}
			p := &consulapi.KVPair{Key: op.KV.Key}
			if v, ok := f.values[op.KV.Key]; ok && !f.vanished[op.KV.Key] {
				p.Value, p.ModifyIndex = []byte(v), 7
			}
			out.Results = append(out.Results, map[string]*consulapi.KVPair{"KV": p})
		}
		_ = json.NewEncoder(w).Encode(out)
	case r.URL.Query().Has("keys"):
		f.keys.Add(1)
		var ks []string
		for k := range f.values {
			ks = append(ks, k)
		}
		_ = json.NewEncoder(w).Encode(ks)
	case r.URL.Query().Has("recurse"):
		f.lists.Add(1)
		var ps []*consulapi.KVPair
		for k, v := range f.values {
			if !f.vanished[k] {
				ps = append(ps, &consulapi.KVPair{Key: k, Value: []byte(v), ModifyIndex: 7})
			}
		}
		_ = json.NewEncoder(w).Encode(ps)
	default:
		http.Error(w, "unexpected "+r.URL.String(), 400)
	}
}

func fakeConsul(t *testing.T, f *fakeConsulKV) *Consul {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := consulapi.NewClient(&consulapi.Config{Address: strings.TrimPrefix(srv.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	return NewConsul(c)
}

// TestListIndexReadsByTransactionsAndFallsBackOnRaces: 40 keys take three
// read transactions of 16 and no list; a key that vanishes between the
// key list and the read makes the read start again, and after three such
// races the prefix is read in one list.
func TestListIndexReadsByTransactionsAndFallsBackOnRaces(t *testing.T) {
	f := &fakeConsulKV{values: map[string]string{}, vanished: map[string]bool{}}
	for i := range 40 {
		f.values["day/"+string(rune('A'+i))] = "v"
	}
	kv := fakeConsul(t, f)
	pairs, index, err := kv.ListIndex(context.Background(), "day/")
	if err != nil || len(pairs) != 40 || index != 42 || f.keys.Load() != 1 || f.txns.Load() != 3 || f.lists.Load() != 0 {
		t.Fatalf("%d pairs at index %d (%v) after %d key lists, %d transactions, %d lists; want 40 at 42 after 1, 3, 0",
			len(pairs), index, err, f.keys.Load(), f.txns.Load(), f.lists.Load())
	}
	f.keys.Store(0)
	f.txns.Store(0)
	f.vanished["day/B"] = true
	pairs, _, err = kv.ListIndex(context.Background(), "day/")
	if err != nil || len(pairs) != 39 || f.keys.Load() != listAttempts || f.lists.Load() != 1 {
		t.Fatalf("with a vanished key: %d pairs (%v) after %d key lists and %d lists; want 39 after %d and 1",
			len(pairs), err, f.keys.Load(), f.lists.Load(), listAttempts)
	}
}
