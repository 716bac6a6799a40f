package blobd

import (
	"context"
	"encoding/json"
	"os"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/storage/upkeep"
)

// maintainerWait is how long one blocking read of the maintainer lock waits
// (each try to take the lock, and the holder's watch of it); the first try,
// which the front's start waits for, waits firstMaintainerWait.
const (
	maintainerWait      = 5 * time.Second
	firstMaintainerWait = time.Second
)

// maintainerKey is the maintainer lock's KV key under the prefix.
func maintainerKey(c Config) string { return c.Consul.KVPrefix() + "blob/maintainer" }

// holdMaintainerLock makes this front the tier's maintainer whenever it
// holds the Consul session lock at <prefix>blob/maintainer (see
// storage/upkeep/maintainer.go for what the maintainer does), and a standing-by
// front otherwise, until ctx ends; then it releases the lock, so another
// front takes over at once. A front that dies without releasing it holds it
// until its session's TTL runs out (maintainer.session_ttl), and Consul then
// keeps the lock free for maintainer.lock_delay, so a maintainer cut off
// from Consul has stopped before another starts. The returned channel is
// closed once the first try has ended, taken or not.
func holdMaintainerLock(ctx context.Context, client *consulapi.Client, c Config, up *upkeep.Upkeep, log hclog.Logger) <-chan struct{} {
	up.SetMaintainer(false)
	first := make(chan struct{})
	host, _ := os.Hostname()
	value, _ := json.Marshal(map[string]any{"listen": c.Listen, "admin_listen": c.Admin, "host": host, "pid": os.Getpid()})
	go func() {
		defer closeOnce(first)
		wait := firstMaintainerWait
		for ctx.Err() == nil {
			lock, err := client.LockOpts(&consulapi.LockOptions{
				Key: maintainerKey(c), Value: value, SessionName: "harvest-blob maintainer",
				SessionTTL: c.maintainer.sessionTTL.String(), LockDelay: c.maintainer.lockDelay,
				LockWaitTime: wait, LockTryOnce: true, MonitorRetries: 3,
			})
			wait = maintainerWait
			if err != nil {
				log.Error("maintainer lock", "error", err)
				return
			}
			lost, err := lock.Lock(ctx.Done())
			closeOnce(first)
			switch {
			case err != nil:
				log.Warn("cannot take part in the maintainer lock; standing by", "key", maintainerKey(c), "error", err)
				select {
				case <-ctx.Done():
				case <-time.After(2 * time.Second):
				}
				continue
			case lost == nil:
				continue // held by another front (or ctx ended): try again
			}
			up.SetMaintainer(true)
			select {
			case <-lost:
				up.SetMaintainer(false)
				_ = lock.Unlock() // stops renewing the session
				log.Warn("maintainer lock lost (Consul unreachable or the session ended); standing by")
			case <-ctx.Done():
				up.SetMaintainer(false)
				if err := lock.Unlock(); err != nil {
					log.Warn("releasing the maintainer lock", "error", err)
				} else {
					log.Info("maintainer lock released")
				}
				return
			}
		}
	}()
	return first
}

func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}
