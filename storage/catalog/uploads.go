package catalog

import (
	"time"

	"github.com/harvest-platform/harvest/storage/integrity"
)

// The records of multipart uploads, kept in Consul KV beside the entries
// they become:
//
//	blob/uploads/<bucket>/<id>         Upload
//	blob/parts/<bucket>/<id>/<number>  Part
//	blob/finished/<bucket>/<id>        Finished
//
// Their protocol is the write path's (storage/objects/uploads.go); they
// are declared here so that the garbage collector (storage/upkeep), which
// reads every upload's name and expires the records, reads what the write
// path writes.

// Upload is a multipart upload in progress: placed when it starts, each
// part streamed to every replica node's own multipart upload as it comes,
// completed on every node before the catalogue shows the object. Any front
// can continue it.
type Upload struct {
	ID        string            `json:"id"`
	Entry     Entry             `json:"entry"` // what the client declared; no size or ETag yet
	Reason    string            `json:"degraded_reason,omitempty"`
	Name      string            `json:"name"` // the replicas' name on the nodes
	NodeIDs   map[string]string `json:"node_uploads"`
	Nodes     []string          `json:"nodes"` // placement order
	Initiated time.Time         `json:"initiated"`
	// Claim is the token of the Complete working on the upload, until
	// ClaimUntil; another Complete or an Abort waits for it, or takes the
	// upload over once the claim has expired.
	Claim      string    `json:"claim,omitempty"`
	ClaimUntil time.Time `json:"claim_until,omitempty"`
}

// Part is one part received.
type Part struct {
	Number   int               `json:"number"`
	Size     int64             `json:"size"`
	MD5      string            `json:"md5"` // hex
	Segment  integrity.Segment `json:"segment"`
	Checksum *Checksum         `json:"checksum,omitempty"`
	Written  time.Time         `json:"written"`
}

// Finished is how an upload ended.
type Finished struct {
	Key      string    `json:"key"`
	Aborted  bool      `json:"aborted,omitempty"`
	ETag     string    `json:"etag,omitempty"`
	Claim    string    `json:"claim,omitempty"` // the Complete that made it
	Finished time.Time `json:"finished"`
}
