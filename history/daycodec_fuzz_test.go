package history

import (
	"testing"
)

// FuzzDecodeDay: any bytes either decode to a day whose slots are all in
// 0-100% (and re-encode to a value that decodes the same) or give an error;
// never a panic or a hang. Run: go test -fuzz FuzzDecodeDay -fuzztime 30s ./history/
func FuzzDecodeDay(f *testing.F) {
	d := &Day{Date: 20000}
	for i := 0; i < SlotsPerDay; i += 3 {
		d.Add(i, float64(i%100))
	}
	f.Add(d.marshalV2())
	f.Add(d.marshalV3())
	f.Add([]byte("HVD3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var day Day
		if err := day.UnmarshalBinary(b); err != nil {
			return
		}
		for i := range day.Count {
			if m := day.Mean(i); m < 0 || m > 100 {
				t.Fatalf("slot %d decoded to %v%%", i, m)
			}
		}
		var again Day
		if err := again.UnmarshalBinary(day.marshalV3()); err != nil || again.Means() == nil || *again.Means() != *day.Means() {
			t.Fatalf("re-encoded day differs: %v", err)
		}
	})
}

// FuzzDecodeBundle: any bytes, in format 3 or 4, either decode (each
// tenant's day valid, every slot within 0-100%) or give an error; never a
// panic.
func FuzzDecodeBundle(f *testing.F) {
	d := &Day{Date: 20000}
	d.Add(5, 12.5)
	d.Add(5, 99.99)
	f.Add(encodeBundle(20000, map[string]*Day{"a/b": d, "c/d": d}, 1))
	f.Add(encodeBundle(20000, map[string]*Day{"a/b": d, "c/d": d}, sealedResolution4))
	f.Add([]byte("HVB3\x20\x4e\x00\x00"))
	f.Add([]byte("HVB4\x20\x4e\x00\x00\x0a\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = decodeBundle(b, 20000, func(tenant string, e bundleEntry) error {
			var day Day
			if err := e.day(&day); err != nil {
				return err
			}
			for i := range day.Count {
				if m := day.Mean(i); m > 100 || m < 0 {
					t.Fatalf("slot %d decodes to %v", i, m)
				}
			}
			return nil
		})
	})
}
