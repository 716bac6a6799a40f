package usagesource

import (
	"context"

	"github.com/harvest-platform/harvest/plugins/base"
	basepb "github.com/harvest-platform/harvest/plugins/base/proto"
	pb "github.com/harvest-platform/harvest/plugins/usagesource/proto"
)

// server is the plugin side: it answers the host's calls from the
// implementation.
type server struct {
	pb.UnimplementedUsageSourceServer
	base.Server
	impl Source
}

var _ pb.UsageSourceServer = (*server)(nil)

// PluginInfo answers from the implementation.
func (s *server) PluginInfo(ctx context.Context, r *basepb.PluginInfoRequest) (*basepb.PluginInfoResponse, error) {
	return s.Server.PluginInfo(ctx, r)
}

// SetConfig passes the config to the implementation.
func (s *server) SetConfig(ctx context.Context, r *basepb.SetConfigRequest) (*basepb.SetConfigResponse, error) {
	return s.Server.SetConfig(ctx, r)
}

// Sample measures through the implementation; ctx carries the host's
// deadline, which a well-behaved implementation honours.
func (s *server) Sample(ctx context.Context, _ *pb.SampleRequest) (*pb.SampleResponse, error) {
	u, err := s.impl.Sample(ctx)
	if err != nil {
		return nil, base.ToStatus(err)
	}
	return &pb.SampleResponse{Usage: ToProto(u)}, nil
}
