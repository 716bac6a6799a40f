// Package reply owns how the placer's HTTP API answers: a JSON body with
// its status, and a failure as {"error": "..."}, the message api's client
// reads back. The runtime's routes (placer/agent) and the feature packages
// that serve routes of their own (declarations, ingest) answer through it.
package reply

import (
	"encoding/json"
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
