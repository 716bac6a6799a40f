package objects

import (
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/versity/versitygw/s3err"
)

// The S3 errors of the write path, beyond versitygw's own (the front's
// others are storage/front/errors.go's). Each says what happened in the
// client's terms; no internal detail (Consul keys, node addresses) goes to
// the client: the write path logs it.

// errStorageFull answers a write no set of nodes has room for: a 507 with
// MinIO's code for a full drive, which clients do not retry.
func errStorageFull(replicas int, size int64) error {
	return s3err.APIError{Code: "XMinioStorageFull", HTTPStatusCode: http.StatusInsufficientStorage,
		Description: fmt.Sprintf("Storage is full: fewer than %d harvested storage nodes have room for %d more bytes within "+
			"their declared capacity and free disk. Delete objects or ask for more capacity.", replicas, size)}
}

// ErrUnavailable answers a request a storage node or the catalogue failed
// or did not answer in time: nothing changed, and a retry may succeed.
var ErrUnavailable = s3err.APIError{Code: "ServiceUnavailable", HTTPStatusCode: http.StatusServiceUnavailable,
	Description: "A storage node or the catalogue failed or did not answer in time; nothing was changed. Please retry."}

// errUnconfirmed answers a write whose catalogue update was sent but not
// confirmed: it may or may not be visible; a retry makes it so.
var errUnconfirmed = s3err.APIError{Code: "ServiceUnavailable", HTTPStatusCode: http.StatusServiceUnavailable,
	Description: "The write could not be confirmed: the catalogue did not answer. It may or may not be visible; please retry."}

// clientBodyError is what the client is told when reading its body
// failed: versitygw's own S3 errors (a bad chunk signature, a checksum
// that does not match) as they are, a stalled client RequestTimeout, a
// body cut short IncompleteBody.
func clientBodyError(err error) error {
	var s3e s3err.S3Error
	switch {
	case errors.As(err, &s3e):
		return err
	case errors.Is(err, os.ErrDeadlineExceeded):
		return s3err.APIError{Code: "RequestTimeout", HTTPStatusCode: 400,
			Description: "Your socket connection to the server was not read from or written to within the timeout period."}
	default:
		return s3err.GetAPIError(s3err.ErrIncompleteBody)
	}
}
