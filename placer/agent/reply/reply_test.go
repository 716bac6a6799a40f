package reply

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A body over MaxBytesReader's limit is 413, any other read failure 400.
func TestBodyStatusTellsTooLargeFromBad(t *testing.T) {
	w := httptest.NewRecorder()
	_, err := io.ReadAll(http.MaxBytesReader(w, io.NopCloser(strings.NewReader("0123456789")), 4))
	if got := BodyStatus(err); got != http.StatusRequestEntityTooLarge {
		t.Errorf("over the limit: %d, want 413 (%v)", got, err)
	}
	if got := BodyStatus(errors.New("connection reset")); got != http.StatusBadRequest {
		t.Errorf("a broken body: %d, want 400", got)
	}
}
