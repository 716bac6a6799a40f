package history

import (
	"errors"
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/kv"
)

func TestDocumentsListDeleteAndNameTheirKey(t *testing.T) {
	kv := kv.NewMem()
	s := NewStore(kv, "h")
	type doc struct{ N int }
	for _, name := range []string{"d/b", "d/a", "dx", "other"} {
		if err := s.PutDocument(ctx, name, doc{len(name)}); err != nil {
			t.Fatal(err)
		}
	}
	kv.Put("h/d/c", []byte("{"))
	docs, err := s.ListDocuments(ctx, "d/")
	if err != nil || len(docs) != 3 || docs[0].Name != "d/a" || docs[1].Key != "h/d/b" || docs[2].Name != "d/c" {
		t.Fatalf("list %+v, %v", docs, err)
	}
	var d doc
	if err := docs[0].Decode(&d); err != nil || d.N != 3 {
		t.Fatalf("decode %+v, %v", d, err)
	}
	var corrupt *CorruptError
	if err := docs[2].Decode(&d); !errors.As(err, &corrupt) || corrupt.Key != "h/d/c" || !strings.Contains(err.Error(), `"h/d/c"`) {
		t.Fatalf("corrupt document: %v", err)
	}
	for range 2 { // deleting what is gone is no error
		if err := s.DeleteDocument(ctx, "d/a"); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.GetDocument(ctx, "d/a", &d); ok || err != nil {
		t.Fatalf("deleted document still read: %v %v", ok, err)
	}
	if s.DocumentKey("x/y") != "h/x/y" {
		t.Fatalf("key %s", s.DocumentKey("x/y"))
	}
}
