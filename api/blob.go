package api

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// The blob front's admin API (storage/front serves these types).

// BlobStatus is the blob front's GET /v1/status: the blob tier's state as
// `harvestctl blob status` shows it.
type BlobStatus struct {
	Nodes []BlobNode `json:"nodes"`
	// Replicas and Diversity are the default of buckets without policy
	// tags: the policy document's, else the front's configuration
	// (ReplicasFrom, DiversityFrom: "policy" or "config").
	Replicas        int    `json:"replicas"`
	ReplicasFrom    string `json:"replicas_from"`
	Diversity       string `json:"diversity"`
	DiversityFrom   string `json:"diversity_from"`
	Objects         int    `json:"objects"`
	UnderReplicated int    `json:"under_replicated"`
	Lost            int    `json:"lost"` // objects with no replica left
	Repaired        int64  `json:"repaired_replicas"`
	// RepairRatePerHour is replicas re-created per hour over the last ten
	// minutes; ETASeconds is how long the under-replicated objects take at
	// that rate (or at the configured limit when nothing was repaired yet).
	RepairRatePerHour float64   `json:"repair_rate_per_hour"`
	LimitPerHour      float64   `json:"limit_per_server_per_hour"`
	ETASeconds        float64   `json:"eta_seconds"`
	LastScan          time.Time `json:"last_scan"`
	// SafeMode says why forgetting replicas, repairs and the garbage
	// collector are held back ("" when they are not).
	SafeMode string `json:"safe_mode,omitempty"`
	// Maintainer says this front holds the tier's maintainer lock: it
	// forgets lost nodes and runs the repairs, scrubs and garbage
	// collection; the other fronts serve and stand by.
	Maintainer bool `json:"maintainer"`
	// Fronts is how many fronts serve the tier, this one included, as
	// their shared ledgers showed at the last health check.
	Fronts    int         `json:"fronts"`
	LastGC    GCReport    `json:"last_gc"`
	LastScrub ScrubReport `json:"last_scrub"`
}

// BlobNode is one storage node's standing.
type BlobNode struct {
	ID          string `json:"id"`
	Tenant      string `json:"tenant"`
	Environment string `json:"environment"`
	Rack        string `json:"rack"`
	Row         int    `json:"row"` // grid cell: peak CPU low..high
	Col         int    `json:"col"` // grid cell: reimages infrequent..frequent
	Up          bool   `json:"up"`
	Busy        bool   `json:"busy"`
	// Removed: the configuration no longer lists the node; it stays down
	// and is lost after lost_after (its replicas re-created elsewhere).
	Removed bool  `json:"removed,omitempty"`
	Used    int64 `json:"used_bytes"`
	// Capacity is the effective one: the tenant's declared storage_mb
	// (CapacityFrom "tenant"), else the configured capacity_mb ("config").
	// Used may exceed it after a shrink: the node is full, nothing is deleted.
	Capacity     int64  `json:"capacity_bytes"`
	CapacityFrom string `json:"capacity_from"`
	// Room is what the node may still take: within its capacity (less
	// what it holds, orphans and writes in flight included) and its free
	// disk (DiskFree, -1 when it cannot be read) less min_free_mb.
	Room     int64 `json:"room_bytes"`
	DiskFree int64 `json:"disk_free_bytes"`
}

// GCReport is what one pass of the blob front's garbage collector found and
// did.
type GCReport struct {
	Time           time.Time `json:"time"`
	Held           string    `json:"held,omitempty"` // why nothing was deleted
	NodesListed    int       `json:"nodes_listed"`
	Replicas       int       `json:"replicas"`
	Referenced     int       `json:"referenced"`
	Deleted        int       `json:"deleted"`
	DeletedBytes   int64     `json:"deleted_bytes"`
	YoungOrphans   int       `json:"young_orphans"` // unreferenced, within the grace
	OrphanBytes    int64     `json:"orphan_bytes"`  // left on the nodes after the pass
	ExpiredUploads int       `json:"expired_uploads"`
	ExpiredRecords int       `json:"expired_records"`
}

// ScrubReport is what one pass of the blob front's scrubber found.
type ScrubReport struct {
	Started   time.Time `json:"started"`
	Finished  time.Time `json:"finished"`
	Objects   int       `json:"objects"`
	Replicas  int       `json:"replicas_checked"`
	Bytes     int64     `json:"bytes_read"`
	Corrupt   int       `json:"corrupt"`
	Missing   int       `json:"missing"`
	Dropped   int       `json:"dropped"`   // taken off their entries for the repairer
	Skipped   int       `json:"skipped"`   // node down, busy or unreadable now
	Unchecked int       `json:"unchecked"` // entries with nothing to check against
	Held      string    `json:"held,omitempty"`
}

// BlobStatus reads the blob front's GET /v1/status.
func (c Client) BlobStatus(ctx context.Context) (BlobStatus, error) {
	var st BlobStatus
	err := c.Do(ctx, http.MethodGet, "/v1/status", nil, &st)
	return st, err
}

// BlobObject is the blob front's GET /v1/objects?bucket=B&key=K: where an
// object's replicas are and what a read finds there now, as `harvestctl
// explain object` shows it.
type BlobObject struct {
	Bucket   string        `json:"bucket"`
	Key      string        `json:"key"`
	Version  string        `json:"version"`
	Size     int64         `json:"size"`
	ETag     string        `json:"etag"`
	Degraded bool          `json:"degraded"` // the placement could not keep every diversity rule
	Replicas []BlobReplica `json:"replicas"`
	// ReadableNow is how many replicas a read may use now (up, not busy).
	ReadableNow int `json:"readable_now"`
	// AllBusyHoursPerDay is how many hours a day every replica's tenant
	// is busy at once, expected from their history (a tenant without
	// busy hours, or an hour of the day its history does not cover yet,
	// counts as busy): the hours a read finds no replica to read from and
	// answers SlowDown.
	AllBusyHoursPerDay float64 `json:"all_busy_hours_per_day"`
}

// BlobReplica is one replica of an object and its node's standing.
type BlobReplica struct {
	Node        string `json:"node"`
	Tenant      string `json:"tenant"`
	Environment string `json:"environment"`
	Rack        string `json:"rack"`
	// Configured is false for a node the configuration no longer lists
	// (it stays down until lost_after, then its replicas are re-created)
	// or never did (then the fields below it are unknown).
	Configured bool `json:"configured"`
	Row        int  `json:"row"` // grid cell: peak CPU low..high (-1: not in the grid)
	Col        int  `json:"col"` // grid cell: reimages infrequent..frequent (-1: not in the grid)
	Up         bool `json:"up"`
	Busy       bool `json:"busy"`
	// PeakCPU and ReimageRate are what the grid knows of the tenant from
	// history; BusyHours the share of each hour of the day (UTC) at which
	// it was busy (empty: no history).
	PeakCPU     float64   `json:"peak_cpu_percent"`
	ReimageRate float64   `json:"reimages_per_server_per_month"`
	BusyHours   []float64 `json:"busy_hours,omitempty"`
}

// BlobObject reads the blob front's GET /v1/objects for one object; it
// needs an admin token, as object names are data.
func (c Client) BlobObject(ctx context.Context, bucket, key string) (BlobObject, error) {
	var o BlobObject
	err := c.Do(ctx, http.MethodGet, "/v1/objects?"+url.Values{"bucket": {bucket}, "key": {key}}.Encode(), nil, &o)
	return o, err
}

// BlobAction is one of the blob front's admin actions (POST, admin token):
// a scrubber pass, a garbage-collector pass, or the operator's
// confirmation that the nodes which put the front in safe mode are gone.
type BlobAction string

const (
	BlobScrub           BlobAction = "/v1/scrub"
	BlobCollectGarbage  BlobAction = "/v1/gc"
	BlobConfirmSafeMode BlobAction = "/v1/safe-mode/confirm"
)

// RunBlobAction runs an admin action now and returns the front's report
// of it.
func (c Client) RunBlobAction(ctx context.Context, a BlobAction) (map[string]any, error) {
	var out map[string]any
	err := c.Do(ctx, http.MethodPost, string(a), nil, &out)
	return out, err
}
