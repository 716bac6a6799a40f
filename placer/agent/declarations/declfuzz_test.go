package declarations

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The request-body parsers never panic, and whatever they accept encodes
// and reads back the same.

func FuzzTenantDeclaration(f *testing.F) {
	for _, s := range []string{`{}`, `{"storage_mb":10240,"reserve_cpu":0.5,"reserve_memory_mb":512}`, `{"reserve_cpu":1e308}`,
		`{"reserve_cpu":-0}`, `{"storage_mb":null}`, ` {"storage_mb":9223372036854775807} `, `{"x":1}`, `null`, `{} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseTenantDeclaration(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("accepted %q does not encode: %v", data, err)
		}
		again, err := parseTenantDeclaration(out)
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("accepted %q, encoded %s, read back %+v (%v)", data, out, again, err)
		}
		if out2, _ := json.Marshal(again); string(out2) != string(out) {
			t.Fatalf("%s re-encodes as %s", out, out2)
		}
	})
}

func FuzzPolicyDocument(f *testing.F) {
	for _, s := range []string{`{}`, `{"periodic_strength":0.3,"constant_sd":5,"class_spread":10,"max_classes":6,` +
		`"weights":{"short":{"periodic":1,"constant":1,"unpredictable":1}},"reserve_cpu":0.5,"reserve_memory_mb":512,` +
		`"replicas":3,"diversity":"strict"}`, `{"weights":{}}`, `{"weights":{"long":null}}`, `{"weights":null}`,
		`{"diversity":"degraded","replicas":9}`, `{"max_classes":-1}`, `{"weights":{"x":{}}}`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePolicyDocument(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("accepted %q does not encode: %v", data, err)
		}
		again, err := parsePolicyDocument(out)
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("accepted %q, encoded %s, read back %+v (%v)", data, out, again, err)
		}
		if out2, _ := json.Marshal(again); string(out2) != string(out) {
			t.Fatalf("%s re-encodes as %s", out, out2)
		}
	})
}
