// Package reply owns how the placer's HTTP API answers: a JSON body with
// its status, and a failure as {"error": "..."}, the message api's client
// reads back. The runtime's routes (placer/agent) and the feature packages
// that serve routes of their own (declarations, ingest) answer through it,
// and the admission proxy tells a body too large from a broken one with it.
package reply

import (
	"encoding/json"
	"errors"
	"net/http"
)

// JSON writes v as the JSON body of a status answer.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Error writes err as {"error": "..."} with status.
func Error(w http.ResponseWriter, status int, err error) {
	JSON(w, status, map[string]string{"error": err.Error()})
}

// BodyStatus is the status of a failure to read a request's body through
// http.MaxBytesReader: 413 when the body was over the limit, else 400.
func BodyStatus(err error) int {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}
