package historyimporter

import (
	"context"
	"fmt"

	"google.golang.org/grpc"

	"github.com/harvest-platform/harvest/plugins/base"
	basepb "github.com/harvest-platform/harvest/plugins/base/proto"
	pb "github.com/harvest-platform/harvest/plugins/historyimporter/proto"
)

// server is the plugin side: it runs the implementation's Import and sends
// each record as it comes, then End.
type server struct {
	pb.UnimplementedHistoryImporterServer
	base.Server
	impl Importer
}

var _ pb.HistoryImporterServer = (*server)(nil)

// PluginInfo answers from the implementation.
func (s *server) PluginInfo(ctx context.Context, r *basepb.PluginInfoRequest) (*basepb.PluginInfoResponse, error) {
	return s.Server.PluginInfo(ctx, r)
}

// SetConfig passes the config to the implementation.
func (s *server) SetConfig(ctx context.Context, r *basepb.SetConfigRequest) (*basepb.SetConfigResponse, error) {
	return s.Server.SetConfig(ctx, r)
}

// Import streams the implementation's records. Only a complete import ends
// with End; an implementation error ends the stream with that error.
func (s *server) Import(req *pb.ImportRequest, stream grpc.ServerStreamingServer[pb.ImportRecord]) error {
	r := Range{Start: req.GetStart().AsTime(), End: req.GetEnd().AsTime()}
	var n uint64
	err := s.impl.Import(stream.Context(), r, req.GetTenants(), func(rec Record) error {
		if err := rec.Validate(); err != nil {
			return fmt.Errorf("record %d: %w", n+1, err)
		}
		if err := stream.Send(ToProto(rec)); err != nil {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return base.ToStatus(err)
	}
	return stream.Send(&pb.ImportRecord{Record: &pb.ImportRecord_End{End: &pb.End{Records: n}}})
}
