package usagesource

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/harvest-platform/harvest/plugins/base"
	pb "github.com/harvest-platform/harvest/plugins/usagesource/proto"
)

// Client is the host side of a usage-source plugin.
type Client struct {
	base.Client
	rpc     pb.UsageSourceClient
	timeout time.Duration
}

var _ Source = (*Client)(nil)

// Sample asks the plugin for a measurement, bounded by ctx's deadline or the
// call timeout, whichever comes first. A hung plugin fails with an error
// matching context.DeadlineExceeded; a dead one with gRPC's Unavailable.
func (c *Client) Sample(ctx context.Context) (Usage, error) {
	ctx, cancel := base.WithCallTimeout(ctx, c.timeout)
	defer cancel()
	r, err := c.rpc.Sample(ctx, &pb.SampleRequest{})
	if err != nil {
		return Usage{}, base.FromStatus(err)
	}
	if r.GetUsage() == nil {
		return Usage{}, errors.New("usage source: the plugin answered without a usage")
	}
	return FromProto(r.GetUsage()), nil
}

// FromProto converts the wire form.
func FromProto(u *pb.Usage) Usage {
	out := Usage{
		CapacityCPUCores:    u.GetCapacityCpuCores(),
		CapacityMemoryBytes: u.GetCapacityMemoryBytes(),
		HostMeasured:        u.GetHostMeasured(),
		HostCPUCores:        u.GetHostCpuCores(),
		HostMemoryBytes:     u.GetHostMemoryBytes(),
		PrimaryCPUCores:     u.GetPrimaryCpuCores(),
		PrimaryMemoryBytes:  u.GetPrimaryMemoryBytes(),
	}
	if u.GetTime() != nil {
		out.Time = u.GetTime().AsTime()
	}
	return out
}

// ToProto converts to the wire form.
func ToProto(u Usage) *pb.Usage {
	out := &pb.Usage{
		CapacityCpuCores:    u.CapacityCPUCores,
		CapacityMemoryBytes: u.CapacityMemoryBytes,
		HostMeasured:        u.HostMeasured,
		HostCpuCores:        u.HostCPUCores,
		HostMemoryBytes:     u.HostMemoryBytes,
		PrimaryCpuCores:     u.PrimaryCPUCores,
		PrimaryMemoryBytes:  u.PrimaryMemoryBytes,
	}
	if !u.Time.IsZero() {
		out.Time = timestamppb.New(u.Time)
	}
	return out
}
