// Package usagesource owns the usage-source plugin type: what the harvest
// driver's guard loop reads each tick (a node's capacity, and how much CPU
// and memory its host or its primary tenant uses now), its go-plugin gRPC
// client and server, and its wire form (proto/usagesource.proto).
//
// A plugin binary serves an implementation with
//
//	plugin.Serve(&plugin.ServeConfig{
//		HandshakeConfig: base.Handshake,
//		Plugins:         usagesource.PluginSet(impl),
//		GRPCServer:      plugin.DefaultGRPCServer,
//	})
package usagesource

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/harvest-platform/harvest/plugins/base"
)

// Source is a usage source. Every call is bounded: Sample by its context
// (the gRPC client adds a deadline when the context has none), SetConfig and
// PluginInfo by the client's timeout, so a hung plugin fails with
// context.DeadlineExceeded.
type Source interface {
	base.Base
	// Sample measures now.
	Sample(ctx context.Context) (Usage, error)
}

// Usage is one measurement. CPU is in cores (1.5 = one and a half cores
// busy), memory in bytes; a capacity of 0 means the source does not know it
// (the driver then keeps its own).
type Usage struct {
	Time                time.Time
	CapacityCPUCores    float64
	CapacityMemoryBytes uint64

	// HostMeasured says which of the two pairs below holds the measurement.
	// true: HostCPUCores/HostMemoryBytes hold the whole host, harvested tasks
	// included, and the driver subtracts its tasks' use to get the primary.
	// false: PrimaryCPUCores/PrimaryMemoryBytes hold the primary tenant alone
	// (the host pair may be filled too, for information).
	HostMeasured bool

	HostCPUCores    float64
	HostMemoryBytes uint64

	PrimaryCPUCores    float64
	PrimaryMemoryBytes uint64
}

// PluginSet is the plugin map a binary serving impl passes to plugin.Serve.
func PluginSet(impl Source) plugin.PluginSet {
	return plugin.PluginSet{base.PluginTypeUsageSource: &Plugin{Impl: impl}}
}

// Check says whether a sample can be trusted: a CPU value that is NaN,
// infinite or negative, or a sample older than maxAge (0: any age; a
// sample without a Time has none) is an error. Whoever reads a source
// treats such a sample as a failed Sample: the plugin manager's fallback
// hands over to its built-in.
func (u Usage) Check(now time.Time, maxAge time.Duration) error {
	for _, v := range []struct {
		name string
		v    float64
	}{{"host CPU", u.HostCPUCores}, {"primary CPU", u.PrimaryCPUCores}, {"CPU capacity", u.CapacityCPUCores}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) || v.v < 0 {
			return fmt.Errorf("invalid sample: %s is %v", v.name, v.v)
		}
	}
	if maxAge > 0 && !u.Time.IsZero() && now.Sub(u.Time) > maxAge {
		return fmt.Errorf("stale sample: taken %s ago (at most %s)", now.Sub(u.Time).Round(time.Millisecond), maxAge)
	}
	return nil
}
