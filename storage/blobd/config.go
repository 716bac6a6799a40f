package blobd

import (
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2/hclsimple"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/connect"
	"github.com/harvest-platform/harvest/internal/setting"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/health"
	"github.com/harvest-platform/harvest/storage/nodes"
	"github.com/harvest-platform/harvest/storage/objects"
	"github.com/harvest-platform/harvest/storage/upkeep"
)

// Config is harvest-blob's HCL configuration:
//
//	listen       = "127.0.0.1:9100"   # S3
//	admin_listen = "127.0.0.1:9101"   # /v1/status, /v1/metrics, /v1/health, POST /v1/scrub, /v1/gc, /v1/safe-mode/confirm
//	access_key = "..."  secret_key = "..."
//	replicas   = 3      # default of buckets without tags, unless the policy document sets one
//	strict     = false  # likewise its diversity
//	min_free_mb = 1024  # disk every node keeps free, whatever its capacity
//	busy_expiry = "2m"  # a busy flag older than this is ignored
//	placement { hour_candidates = 5  busy_percent = 67  steer_first = true  pick_jointly = true }  # beyond Algorithm 2: replicas on tenants busy at other hours
//	repair   { per_server_per_hour = 30  interval = "5m"  scan_interval = "1h"  health_interval = "5s"  lost_after = "10m" }
//	timeouts { node = "10s"  consul = "5s"  request = "30m"  queue = "5s"  idle = "60s" }
//	limits   { max_connections = 1024  max_requests = 256  per_node = 64 }
//	gc       { interval = "10m"  grace = "1h"  finished_retention = "24h"  tombstone_retention = "720h"  upload_expiry = "168h" }
//	scrub    { interval = "24h"  mb_per_second = 16 }
//	safe_mode { share = 0.3  window = "1h" }
//	maintainer { session_ttl = "15s"  lock_delay = "15s" }  # the lock that picks the one front that maintains
//	consul { address = "127.0.0.1:8500"  prefix = "harvest/" }  # token, token_file, ca_file, cert_file, key_file, ...
//	tls       { cert_file = "..."  key_file = "..." }   # HTTPS for S3 clients
//	admin_tls { cert_file = "..."  key_file = "..."  client_ca_file = "..." }
//	admin_tokens = ["..."]          # POSTs of the admin API need one (admin_tokens_file: one per line)
//	admin_anonymous_read = true     # GET /v1/status and /v1/metrics without a token (never /v1/objects)
//	node "client-1" {
//	  endpoint = "127.0.0.1:9000"  access_key = "..."  secret_key = "..."
//	  tenant = "search/frontend"  environment = "search"  rack = "rack-1"
//	  capacity_mb = 10240  # unless the tenant declares storage_mb
//	}
type Config struct {
	LogLevel   string           `hcl:"log_level,optional"`
	Listen     string           `hcl:"listen"`
	Admin      string           `hcl:"admin_listen,optional"`
	AccessKey  string           `hcl:"access_key"`
	SecretKey  string           `hcl:"secret_key"`
	Region     string           `hcl:"region,optional"`
	Replicas   int              `hcl:"replicas,optional"`
	Strict     bool             `hcl:"strict,optional"`
	MinFreeMB  *int64           `hcl:"min_free_mb,optional"`
	BusyExpiry string           `hcl:"busy_expiry,optional"`
	Placement  *PlacementConfig `hcl:"placement,block"`
	Consul     ConsulConfig     `hcl:"consul,block"`
	// TLS of the S3 listener, TLS of the admin listener, and the admin
	// API's tokens (security.go).
	TLS                *connect.ListenerTLS `hcl:"tls,block"`
	AdminTLS           *connect.ListenerTLS `hcl:"admin_tls,block"`
	AdminTokens        []string             `hcl:"admin_tokens,optional"`
	AdminTokensFile    string               `hcl:"admin_tokens_file,optional"`
	AdminAnonymousRead *bool                `hcl:"admin_anonymous_read,optional"`
	Repair             *RepairConfig        `hcl:"repair,block"`
	Timeouts           *TimeoutsConfig      `hcl:"timeouts,block"`
	Limits             *LimitsConfig        `hcl:"limits,block"`
	GC                 *GCConfig            `hcl:"gc,block"`
	Scrub              *ScrubConfig         `hcl:"scrub,block"`
	SafeMode           *SafeModeConfig      `hcl:"safe_mode,block"`
	Maintainer         *MaintainerConfig    `hcl:"maintainer,block"`
	Nodes              []NodeConfig         `hcl:"node,block"`

	repair     upkeep.RepairOptions
	health     struct{ interval, lostAfter time.Duration }
	timeouts   nodes.Timeouts
	limits     LimitsConfig
	gc         upkeep.GCOptions
	scrub      upkeep.ScrubOptions
	safeMode   health.SafeModeOptions
	busyExpiry time.Duration
	minFreeMB  int64
	placement  placement
	maintainer struct{ sessionTTL, lockDelay time.Duration }
}

// PlacementConfig tunes placement beyond Algorithm 2 (grid.Grid.HourCandidates):
// each pick compares hour_candidates tenants of its grid cell by the hours
// of the day at which their history was at or above busy_percent, and keeps
// the one least often busy with the block's other replicas. 0 or 1 is
// Algorithm 2's single random pick. steer_first (grid.Grid.SteerFirst)
// lets the candidates choose an object's first replica too: the tenant
// least often busy at all. pick_jointly (grid.Grid.PickJointly) draws the
// candidates of the replicas that complete a round of the grid together
// and keeps the combination least often all busy at the same hour; it
// takes at most grid.MaxJointCandidates candidates.
type PlacementConfig struct {
	HourCandidates int     `hcl:"hour_candidates,optional"`
	BusyPercent    float64 `hcl:"busy_percent,optional"`
	SteerFirst     *bool   `hcl:"steer_first,optional"`
	PickJointly    *bool   `hcl:"pick_jointly,optional"`
}

// placement is PlacementConfig with its defaults applied.
type placement struct {
	HourCandidates int
	BusyPercent    float64
	SteerFirst     bool
	PickJointly    bool
}

// The placement defaults: 5 candidates that choose the first replica too
// (harvest-sim access -writers client -fill 0.5 measured 5-31x fewer failed
// reads at 50% utilisation with the first replica steered, and 2-20x fewer
// again with 5 candidates instead of 3, and 3.9x fewer summed over the ten
// profiles and four seeds with each block's candidates chosen jointly, see
// docs/simulator.md); busy at the edge of the driver's default 33% CPU
// reserve.
const (
	defaultHourCandidates = 5
	defaultBusyPercent    = 67
	defaultSteerFirst     = true
	defaultPickJointly    = true
)

// MaintainerConfig tunes the Consul session lock that makes one front at a
// time the tier's maintainer (maintainer.go): a maintainer that dies holds
// the lock until its session's TTL runs out, and then nobody takes it for
// lock_delay.
type MaintainerConfig struct {
	SessionTTL string `hcl:"session_ttl,optional"`
	LockDelay  string `hcl:"lock_delay,optional"`
}

// RepairConfig tunes health checks and re-replication.
type RepairConfig struct {
	PerServerPerHour float64 `hcl:"per_server_per_hour,optional"`
	Interval         string  `hcl:"interval,optional"`
	ScanInterval     string  `hcl:"scan_interval,optional"`
	HealthInterval   string  `hcl:"health_interval,optional"`
	LostAfter        string  `hcl:"lost_after,optional"`
}

// TimeoutsConfig bounds every call (nodes.Timeouts says what each bounds).
type TimeoutsConfig struct {
	Node    string `hcl:"node,optional"`
	Consul  string `hcl:"consul,optional"`
	Request string `hcl:"request,optional"`
	Queue   string `hcl:"queue,optional"`
	Idle    string `hcl:"idle,optional"`
}

// LimitsConfig caps concurrency: connections and requests the S3 server
// takes (beyond max_requests it answers SlowDown at once), and calls in
// flight to one storage node (beyond per_node a call waits timeouts.queue,
// then the request is answered SlowDown).
type LimitsConfig struct {
	MaxConnections int `hcl:"max_connections,optional"`
	MaxRequests    int `hcl:"max_requests,optional"`
	PerNode        int `hcl:"per_node,optional"`
}

// GCConfig tunes the garbage collector (upkeep.GCOptions).
type GCConfig struct {
	Interval           string `hcl:"interval,optional"`
	Grace              string `hcl:"grace,optional"`
	FinishedRetention  string `hcl:"finished_retention,optional"`
	TombstoneRetention string `hcl:"tombstone_retention,optional"`
	UploadExpiry       string `hcl:"upload_expiry,optional"`
}

// ScrubConfig tunes the scrubber.
type ScrubConfig struct {
	Interval    string  `hcl:"interval,optional"`
	MBPerSecond float64 `hcl:"mb_per_second,optional"`
}

// SafeModeConfig tunes safe mode.
type SafeModeConfig struct {
	Share  *float64 `hcl:"share,optional"`
	Window string   `hcl:"window,optional"`
}

// ConsulConfig says where Harvest's state is, with which token and TLS
// files (connect.Consul: CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN, CONSUL_CACERT,
// ... first, the block over them).
type ConsulConfig = connect.Consul

// NodeConfig is one storage node.
type NodeConfig struct {
	ID          string `hcl:"id,label"`
	Endpoint    string `hcl:"endpoint"`
	AccessKey   string `hcl:"access_key"`
	SecretKey   string `hcl:"secret_key"`
	Tenant      string `hcl:"tenant"`
	Environment string `hcl:"environment"`
	Rack        string `hcl:"rack,optional"`
	CapacityMB  int64  `hcl:"capacity_mb"`
}

// duration is one optional duration setting.
type duration struct {
	name, value string
	into        *time.Duration
}

func parseDurations(path string, ds ...duration) error {
	for _, d := range ds {
		v, err := setting.PositiveDuration(d.name, d.value, *d.into)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		*d.into = v
	}
	return nil
}

// LoadConfig reads and checks an HCL file; every default is applied and
// every value checked here, so a daemon that starts runs as configured.
func LoadConfig(path string) (Config, error) {
	var c Config
	if err := hclsimple.DecodeFile(path, nil, &c); err != nil {
		return c, err
	}
	if c.Replicas == 0 {
		c.Replicas = 3
	}
	if c.Consul.Prefix == "" {
		c.Consul.Prefix = history.DefaultPrefix
	}
	if err := c.checkSecurity(path); err != nil {
		return c, err
	}
	if len(c.Nodes) < c.Replicas {
		return c, fmt.Errorf("%d storage nodes configured, fewer than replicas = %d", len(c.Nodes), c.Replicas)
	}
	c.health.interval, c.health.lostAfter = 5*time.Second, 10*time.Minute
	c.busyExpiry, c.minFreeMB = contract.BusyFlagMaxAge, 1024 // the placer ignores a flag as old
	if c.MinFreeMB != nil {
		if *c.MinFreeMB < 0 {
			return c, fmt.Errorf("%s: min_free_mb = %d: want 0 or more", path, *c.MinFreeMB)
		}
		c.minFreeMB = *c.MinFreeMB
	}
	if err := parseDurations(path, duration{"busy_expiry", c.BusyExpiry, &c.busyExpiry}); err != nil {
		return c, err
	}
	c.placement = placement{HourCandidates: defaultHourCandidates, BusyPercent: defaultBusyPercent, SteerFirst: defaultSteerFirst,
		PickJointly: defaultPickJointly}
	if p := c.Placement; p != nil {
		if p.HourCandidates < 0 || p.BusyPercent < 0 || p.BusyPercent > 100 {
			return c, fmt.Errorf("%s: placement: hour_candidates = %d, busy_percent = %v: want 0 or more candidates and a percentage",
				path, p.HourCandidates, p.BusyPercent)
		}
		c.placement.HourCandidates = p.HourCandidates // 0 turns it off
		if p.BusyPercent > 0 {
			c.placement.BusyPercent = p.BusyPercent
		}
		if p.SteerFirst != nil {
			c.placement.SteerFirst = *p.SteerFirst
		}
		if p.PickJointly != nil {
			c.placement.PickJointly = *p.PickJointly
		}
		if c.placement.PickJointly && c.placement.HourCandidates > grid.MaxJointCandidates {
			return c, fmt.Errorf("%s: placement: hour_candidates = %d with pick_jointly: want at most %d (a placement weighs up to candidates^3 combinations), or pick_jointly = false",
				path, c.placement.HourCandidates, grid.MaxJointCandidates)
		}
	}
	if r := c.Repair; r != nil {
		if r.PerServerPerHour < 0 {
			return c, fmt.Errorf("%s: repair.per_server_per_hour = %v: want a positive rate", path, r.PerServerPerHour)
		}
		c.repair.PerServerPerHour = r.PerServerPerHour
		if err := parseDurations(path, duration{"repair.interval", r.Interval, &c.repair.Interval},
			duration{"repair.scan_interval", r.ScanInterval, &c.repair.ScanInterval},
			duration{"repair.health_interval", r.HealthInterval, &c.health.interval},
			duration{"repair.lost_after", r.LostAfter, &c.health.lostAfter}); err != nil {
			return c, err
		}
	}
	if t := c.Timeouts; t != nil {
		if err := parseDurations(path, duration{"timeouts.node", t.Node, &c.timeouts.Node}, duration{"timeouts.consul", t.Consul, &c.timeouts.Consul},
			duration{"timeouts.request", t.Request, &c.timeouts.Request}, duration{"timeouts.queue", t.Queue, &c.timeouts.Queue},
			duration{"timeouts.idle", t.Idle, &c.timeouts.Idle}); err != nil {
			return c, err
		}
	}
	c.timeouts = nodes.DefaultTimeouts(c.timeouts)
	c.limits = LimitsConfig{MaxConnections: 1024, MaxRequests: 256, PerNode: 64}
	if l := c.Limits; l != nil {
		for _, v := range []struct {
			name string
			v    int
			into *int
		}{{"max_connections", l.MaxConnections, &c.limits.MaxConnections}, {"max_requests", l.MaxRequests, &c.limits.MaxRequests},
			{"per_node", l.PerNode, &c.limits.PerNode}} {
			if v.v < 0 {
				return c, fmt.Errorf("%s: limits.%s = %d: want a positive number", path, v.name, v.v)
			}
			if v.v > 0 {
				*v.into = v.v
			}
		}
	}
	if c.limits.MaxRequests > c.limits.MaxConnections {
		return c, fmt.Errorf("%s: limits.max_requests = %d exceeds limits.max_connections = %d", path, c.limits.MaxRequests, c.limits.MaxConnections)
	}
	if g := c.GC; g != nil {
		if err := parseDurations(path, duration{"gc.interval", g.Interval, &c.gc.Interval}, duration{"gc.grace", g.Grace, &c.gc.Grace},
			duration{"gc.finished_retention", g.FinishedRetention, &c.gc.FinishedRetention},
			duration{"gc.tombstone_retention", g.TombstoneRetention, &c.gc.TombstoneRetention},
			duration{"gc.upload_expiry", g.UploadExpiry, &c.gc.UploadExpiry}); err != nil {
			return c, err
		}
	}
	c.gc = upkeep.DefaultGC(c.gc)
	if window := objects.CommitWindow(c.timeouts.Consul); c.gc.Grace < 2*window {
		return c, fmt.Errorf("%s: gc.grace = %s is shorter than twice the commit window (%s, six timeouts.consul): "+
			"the collector could delete replicas whose entry is still being written", path, c.gc.Grace, window)
	}
	if s := c.Scrub; s != nil {
		if s.MBPerSecond < 0 {
			return c, fmt.Errorf("%s: scrub.mb_per_second = %v: want a positive rate", path, s.MBPerSecond)
		}
		c.scrub.BytesPerSecond = s.MBPerSecond * (1 << 20)
		if err := parseDurations(path, duration{"scrub.interval", s.Interval, &c.scrub.Interval}); err != nil {
			return c, err
		}
	}
	if s := c.SafeMode; s != nil {
		if s.Share != nil && (*s.Share <= 0 || *s.Share > 1) {
			return c, fmt.Errorf("%s: safe_mode.share = %v: want a share in (0, 1] (1: never)", path, *s.Share)
		}
		if s.Share != nil {
			c.safeMode.Share = *s.Share
		}
		if err := parseDurations(path, duration{"safe_mode.window", s.Window, &c.safeMode.Window}); err != nil {
			return c, err
		}
	}
	c.maintainer.sessionTTL, c.maintainer.lockDelay = 15*time.Second, 15*time.Second
	if m := c.Maintainer; m != nil {
		if err := parseDurations(path, duration{"maintainer.session_ttl", m.SessionTTL, &c.maintainer.sessionTTL},
			duration{"maintainer.lock_delay", m.LockDelay, &c.maintainer.lockDelay}); err != nil {
			return c, err
		}
		if c.maintainer.sessionTTL < 10*time.Second || c.maintainer.sessionTTL > 24*time.Hour {
			return c, fmt.Errorf("%s: maintainer.session_ttl = %s: Consul takes 10s to 24h", path, c.maintainer.sessionTTL)
		}
	}
	return c, nil
}
