package contract

import "testing"

func TestIsEvictionByAnnotationOrMessage(t *testing.T) {
	for _, c := range []struct {
		details map[string]string
		msgs    []string
		want    bool
	}{
		{map[string]string{AnnotationEvicted: "true"}, nil, true},
		{nil, []string{"", EvictionPrefix + "primary tenant needs 2 cores"}, true},
		{map[string]string{AnnotationSuppressed: "true"}, []string{"suppressed: capped"}, false},
		{nil, []string{"Exit Code: 1"}, false},
	} {
		if got := IsEviction(c.details, c.msgs...); got != c.want {
			t.Errorf("IsEviction(%v, %q) = %v, want %v", c.details, c.msgs, got, c.want)
		}
	}
}
