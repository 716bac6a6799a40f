package front

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/versity/versitygw/s3err"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/storage/nodes"
	"github.com/harvest-platform/harvest/storage/objects"
)

// The S3 errors the front answers beyond versitygw's own. Each says what
// happened in the client's terms; no internal detail (Consul keys, node
// addresses) goes to the client: the front logs it.

// errPartStorageFull answers a part the upload's nodes have no room for.
func errPartStorageFull(size int64) error {
	return s3err.APIError{Code: "XMinioStorageFull", HTTPStatusCode: http.StatusInsufficientStorage,
		Description: fmt.Sprintf("Storage is full: a harvested storage node this upload is placed on has no room for %d more bytes "+
			"within its declared capacity and free disk. Abort the upload, delete objects or ask for more capacity.", size)}
}

// errUnavailable answers a request a storage node or the catalogue failed
// or did not answer in time: nothing changed, and a retry may succeed. The
// write path answers it too (objects.ErrUnavailable), as it answers its
// other errors: storage full, an unconfirmed write, a client's body that
// failed (storage/objects/errors.go).
var errUnavailable = objects.ErrUnavailable

// errBusy answers a read whose every replica is on a node its primary
// tenant needs now, or a request refused because a node has too many calls
// in flight: retry later.
var errBusy = s3err.APIError{Code: "SlowDown", HTTPStatusCode: http.StatusServiceUnavailable,
	Description: "Every storage node holding this object is busy now. Please reduce your request rate and retry."}

// errDataLost answers a read of an object that has no good replica left.
var errDataLost = s3err.APIError{Code: "XHarvestDataLost", HTTPStatusCode: http.StatusInternalServerError,
	Description: "The object's data is lost: no good replica of it is left. Write it again."}

// errCorruptCatalogue answers a request that found a catalogue record it
// cannot read; an operator has to look.
var errCorruptCatalogue = s3err.GetAPIError(s3err.ErrInternalError)

// fail turns an error into what the client is told, logging what it is
// not told: S3 errors pass as they are; a corrupt record is an internal
// error; anything else (a node or Consul failing, a timeout) is a
// retryable ServiceUnavailable.
func (b *Backend) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var api s3err.APIError
	if errors.As(err, &api) {
		return api
	}
	var s3e s3err.S3Error
	if errors.As(err, &s3e) {
		return err
	}
	var corrupt *history.CorruptError
	if errors.As(err, &corrupt) {
		b.log.Error("request failed: a catalogue record is corrupt", "op", op, "error", err)
		return errCorruptCatalogue
	}
	if errors.Is(err, nodes.ErrSaturated) {
		b.metrics.saturated.Inc()
		b.log.Debug("request refused: a storage node has too many calls in flight", "op", op)
		return errBusy
	}
	b.log.Warn("request failed", "op", op, "error", err)
	return errUnavailable
}
